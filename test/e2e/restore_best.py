#!/usr/bin/env python3
"""--restore-best ends training with the weights of the best validation evaluation: the same
weights, bit for bit, as a run of the same options that stops after the best epoch.

Usage: restore_best.py DPRUN PLAN OUTDIR [dprun options...]

Runs DPRUN PLAN [options] --restore-best --monitor val_accuracy with --metrics and
--save-params into OUTDIR; reads the best evaluation's epoch; runs the same options with
--epochs <that epoch> and no --restore-best; the two parameter files must be identical and the
test figures equal. (Without --eval-every the best is always after an epoch; the options must
include --epochs, --validation-split and a batch-free plan.)
"""
import json
import os
import subprocess
import sys

dprun, plan, out, options = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]


def run(name, extra):
    metrics, params = os.path.join(out, name + ".json"), os.path.join(out, name + ".params")
    cmd = [dprun, plan, *extra, "--metrics", metrics, "--save-params", params, "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.load(open(metrics)), open(params, "rb").read()


m, best_params = run("best", options + ["--restore-best", "--monitor", "val_accuracy"])
best = m["best"]
epochs = options[options.index("--epochs") + 1]
cut = [o if i == 0 or options[i - 1] != "--epochs" else str(best["epoch"])
       for i, o in enumerate(options)]
c, cut_params = run("cut", cut)
if best_params != cut_params:
    sys.exit(f"FAILED: the restored weights (step {best['step']}) are not those of a run of "
             f"{best['epoch']} epochs")
if (m["test_loss"], m["test_accuracy"]) != (c["test_loss"], c["test_accuracy"]):
    sys.exit(f"FAILED: test figures {m['test_loss']} and {c['test_loss']} differ")
print(f"best of {epochs} epochs: epoch {best['epoch']} (step {best['step']}, restored "
      f"{str(best['restored']).lower()}); the weights of a run of {best['epoch']} epochs")
