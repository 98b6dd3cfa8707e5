#!/usr/bin/env python3
"""Checks the validation figures of dprun --metrics files.

Usage:
  check_validation.py METRICS.json [--every N] [--epochs E] [--same OTHER.json [--tolerance T]]
                      [--val-is-test]

- Every validation evaluation is listed ("validations"), in step order: one after each epoch
  (epoch_end) and, with --every N, one at each multiple of N steps within an epoch; each epoch's
  record carries its epoch-end figures (val_loss, val_accuracy).
- "best" is the evaluation with the best watched figure ("monitor": lowest val_loss, highest
  val_accuracy; the first of equals), and "restored" says whether it was not the last one.
- --same: another run's validations (another layout) are the same evaluations with figures
  within T (relative; default 1e-6).
- --val-is-test: the last validation's figures equal the test figures (a validation set that
  is the test split, without --restore-best).
Prints one summary line; exits 1 on the first difference.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("metrics")
parser.add_argument("--every", type=int, default=0)
parser.add_argument("--epochs", type=int)
parser.add_argument("--same")
parser.add_argument("--tolerance", type=float, default=1e-6)
parser.add_argument("--val-is-test", action="store_true")
args = parser.parse_args()
m = json.load(open(args.metrics))


def fail(message):
    print(f"FAILED: {args.metrics}: {message}")
    sys.exit(1)


vals = m.get("validations") or fail("no validations")
epochs = m["epochs"]
if args.epochs is not None and len(epochs) != args.epochs:
    fail(f"{len(epochs)} epochs, expected {args.epochs}")
steps = [v["step"] for v in vals]
if steps != sorted(steps) or len(set(steps)) != len(steps):
    fail(f"validation steps {steps} are not increasing")
ends = [v for v in vals if v["epoch_end"]]
if len(ends) != len(epochs):
    fail(f"{len(ends)} epoch-end validations for {len(epochs)} epochs")
done = 0
for e, v in zip(epochs, ends):
    done += len(e["step_losses"])
    if v["step"] != done or v["epoch"] != e["epoch"]:
        fail(f"epoch {e['epoch']}'s validation is at step {v['step']}, not {done}")
    if e.get("val_loss") != v["loss"] or e.get("val_accuracy") != v["accuracy"]:
        fail(f"epoch {e['epoch']}'s record {e.get('val_loss')} differs from its validation")
if args.every:
    within = [v["step"] for v in vals if not v["epoch_end"]]
    ends_at = {v["step"] for v in ends}
    expected = [s for s in range(args.every, done + 1, args.every) if s not in ends_at]
    # A multiple of N that is an epoch's first step boundary is the previous epoch's end.
    if within != expected:
        fail(f"within-epoch validations at {within}, expected {expected}")
monitor = m.get("monitor")
if "best" in m:
    key = "accuracy" if monitor == "val_accuracy" else "loss"
    sign = -1 if key == "accuracy" else 1
    best = min(vals, key=lambda v: (sign * v[key], v["step"]))
    b = m["best"]
    if b["step"] != best["step"] or b["value"] != best[key]:
        fail(f"best is {b}, expected step {best['step']} with {key} {best[key]}")
    if b["restored"] != (best["step"] != vals[-1]["step"]):
        fail(f"restored is {b['restored']} with the best at step {best['step']} of {vals[-1]['step']}")
if args.same:
    other = json.load(open(args.same))["validations"]
    if [v["step"] for v in other] != steps:
        fail(f"{args.same} evaluated at other steps")
    for x, y in zip(vals, other):
        for key in ("loss", "accuracy"):
            if abs(x[key] - y[key]) > args.tolerance * max(abs(x[key]), 1e-30):
                fail(f"step {x['step']}: {key} {x[key]} here, {y[key]} in {args.same}")
if args.val_is_test:
    last = vals[-1]
    if last["loss"] != m["test_loss"] or last["accuracy"] != m["test_accuracy"]:
        fail(f"last validation {last} differs from the test set's {m['test_loss']}")
summary = f"{len(vals)} validations ({len(ends)} after epochs), monitor {monitor}"
if "best" in m:
    summary += f", best at step {m['best']['step']}" + (" restored" if m["best"]["restored"] else " (the last)")
if args.same:
    summary += f"; the same as {args.same.split('/')[-1]}"
if args.val_is_test:
    summary += "; the last equals the test set's"
print(summary)
