#!/usr/bin/env python3
"""Checks a dprun --profile file against the run that wrote it.

Usage: check_profile.py PROFILE.json --steps S --bucket-bytes B [--replicas R]

The profile must list S - 1 measured train steps (the first is left out), the plan's kernels
with their kinds and positive times, one bucket of B bytes, and the kernels' and allreduce
waits' mean times fit in the mean step (at most 105% of it: they nest inside it; how much of
the step they fill depends on the machine's load, so no lower bound is asserted). Prints a one-line summary; exits 1 otherwise.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("profile")
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--bucket-bytes", type=int, required=True)
ap.add_argument("--replicas", type=int, default=1)
args = ap.parse_args()
p = json.load(open(args.profile))
errors = []
if p["steps_measured"] != args.steps - 1:
    errors.append("steps_measured %d, expected %d" % (p["steps_measured"], args.steps - 1))
if p["replicas_per_process"] != args.replicas:
    errors.append("replicas_per_process %r" % p["replicas_per_process"])
kernels = p["kernels"]
if not kernels or any(k["mean_us"] <= 0 or not k["kind"] for k in kernels):
    errors.append("kernels without kinds or times: %r" % kernels[:3])
if [b["bytes"] for b in p["buckets"]] != [args.bucket_bytes]:
    errors.append("buckets %r, expected one of %d bytes" % (p["buckets"], args.bucket_bytes))
inside = sum(k["mean_us"] for k in kernels) + sum(b["wait_mean_us"] for b in p["buckets"])
step = p["step_us"]["mean"]
if not (0 < inside <= 1.05 * step):
    errors.append("kernels and waits take %.1f us of a %.1f us step" % (inside, step))
for e in errors:
    print("check_profile:", e)
if errors:
    sys.exit(1)
print("profile ok: %d steps, %d kernels, %.0f%% of the step in kernels and waits" %
      (p["steps_measured"], len(kernels), 100 * inside / step))
