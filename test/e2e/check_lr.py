#!/usr/bin/env python3
"""Checks the learning-rate factors a dprun --metrics file reports per epoch.

Usage: check_lr.py METRICS --scales A,B,... [--constant OTHER.json]

Each epoch's "lr_scale" (the schedule's factor at its last step) must be the given value (to
1e-12). With --constant, OTHER.json is the same run of a plan without the schedule: the epochs
whose factor stayed 1 throughout must have the same step losses, bit for bit, and the first
epoch after a factor below 1 must differ (the schedule reached the updates).
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("metrics")
ap.add_argument("--scales", required=True)
ap.add_argument("--constant")
args = ap.parse_args()
m = json.load(open(args.metrics))
want = [float(x) for x in args.scales.split(",")]
got = [e["lr_scale"] for e in m["epochs"]]
errors = []
if len(got) != len(want) or any(abs(a - b) > 1e-12 for a, b in zip(got, want)):
    errors.append(f"lr_scale per epoch {got}, expected {want}")
if args.constant:
    c = json.load(open(args.constant))
    first = c["epochs"][0]["step_losses"] == m["epochs"][0]["step_losses"]
    second = c["epochs"][1]["step_losses"] == m["epochs"][1]["step_losses"]
    if want[0] == 1 and not first:
        errors.append("epoch 1 (factor 1) differs from the constant run")
    if want[1] < 1 and second:
        errors.append("epoch 2 (a smaller factor) equals the constant run: the schedule did not act")
for e in errors:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print("lr_scale per epoch:", ", ".join(f"{x:g}" for x in got))
