#!/usr/bin/env python3
"""Compares two dprun --metrics files step by step: a resumed run against the uninterrupted one.

Usage: same_steps.py STRAIGHT.json RESUMED.json [--tolerance REL]

Every epoch's per-step losses ("step_losses"), its loss and accuracy, its learning-rate factor
and per-epoch test loss and accuracy (where the runs have them) and the test loss and accuracy
must be equal: bit for bit by default (the numbers are written with enough digits to
read back exactly), or within REL relative difference. Prints one line per epoch and exits 1 on
the first difference.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("straight")
parser.add_argument("resumed")
parser.add_argument("--tolerance", type=float, default=0.0)
args = parser.parse_args()
a = json.load(open(args.straight))
b = json.load(open(args.resumed))


def same(x, y):
    if args.tolerance == 0:
        return x == y
    return abs(x - y) <= args.tolerance * max(abs(x), abs(y), 1e-30)


errors = []
if len(a["epochs"]) != len(b["epochs"]):
    errors.append(f"{len(a['epochs'])} epochs vs {len(b['epochs'])}")
for ea, eb in zip(a["epochs"], b["epochs"]):
    sa, sb = ea["step_losses"], eb["step_losses"]
    if len(sa) != len(sb):
        errors.append(f"epoch {ea['epoch']}: {len(sa)} step losses vs {len(sb)}")
        continue
    diff = [i for i, (x, y) in enumerate(zip(sa, sb)) if not same(x, y)]
    if diff:
        i = diff[0]
        errors.append(f"epoch {ea['epoch']} step {i + 1}: loss {sa[i]!r} vs {sb[i]!r}")
    # The schedule's factor, and the test figures of runs that evaluate every epoch.
    keys = ["loss", "train_accuracy"] + [k for k in ("lr_scale", "test_loss", "test_accuracy")
                                         if k in ea or k in eb]
    for key in keys:
        if key not in ea or key not in eb:
            errors.append(f"epoch {ea['epoch']} {key}: only in one run")
        elif not same(ea[key], eb[key]):
            errors.append(f"epoch {ea['epoch']} {key}: {ea[key]!r} vs {eb[key]!r}")
    print(f"epoch {ea['epoch']}: {len(sa)} steps, "
          f"{'same' if not diff else 'DIFFERENT'} losses, loss {eb['loss']:.6f}")
for key in ("test_loss", "test_accuracy"):
    if not same(a[key], b[key]):
        errors.append(f"{key}: {a[key]!r} vs {b[key]!r}")
for e in errors:
    print("DIFFERENT:", e)
if errors:
    sys.exit(1)
print("same steps, same result")
