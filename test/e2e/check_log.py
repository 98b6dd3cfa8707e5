#!/usr/bin/env python3
"""Checks a dprun --log FILE (JSON lines).

Usage: check_log.py LOG.jsonl --every N [--steps S] [--metrics METRICS.json]

Every line is whole JSON. The first is the run's "start"; then a "train" line every N steps up
to step S (exactly those steps; S defaults to the steps the metrics record), each with the job's loss, accuracy, learning rate, samples/s,
waits and one step time per rank; an "epoch" line per finished epoch; a line per evaluation.
With --metrics, the epoch lines' loss and the evaluations are the metrics' figures.
Prints one summary line; exits 1 on the first problem.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("log")
parser.add_argument("--every", type=int, required=True)
parser.add_argument("--steps", type=int)
parser.add_argument("--metrics")
args = parser.parse_args()

text = open(args.log).read()
if text and not text.endswith("\n"):
    sys.exit(f"FAILED: {args.log} ends in a cut line")
records = []
for n, line in enumerate(text.splitlines(), 1):
    try:
        records.append(json.loads(line))
    except json.JSONDecodeError as e:
        sys.exit(f"FAILED: line {n} is not JSON ({e}): {line!r}")
if not records or records[0]["kind"] != "start":
    sys.exit("FAILED: the first line is not the run's start")
start = records[0]
kinds = {k: [r for r in records if r["kind"] == k] for k in ("train", "epoch", "validation", "test")}
train = kinds["train"]
steps = [r["step"] for r in train]
if args.steps is None:
    if not args.metrics:
        sys.exit("--steps or --metrics is needed")
    args.steps = sum(len(e["step_losses"]) for e in json.load(open(args.metrics))["epochs"])
expected = list(range(args.every, args.steps + 1, args.every))
if steps != expected:
    sys.exit(f"FAILED: train lines at steps {steps}, expected {expected}")
for r in train:
    ranks = start["processes"]
    if len(r["rank_step_seconds"]) != ranks or not all(t > 0 for t in r["rank_step_seconds"]):
        sys.exit(f"FAILED: step {r['step']}: rank step times {r['rank_step_seconds']} for {ranks} rank(s)")
    for key in ("loss", "accuracy", "lr", "samples_per_sec", "input_wait_seconds",
                "allreduce_wait_seconds"):
        if not isinstance(r.get(key), (int, float)):
            sys.exit(f"FAILED: step {r['step']}: no {key}")
if args.metrics:
    m = json.load(open(args.metrics))
    if [e["loss"] for e in kinds["epoch"]] != [e["loss"] for e in m["epochs"]]:
        sys.exit("FAILED: the epoch lines' losses are not the metrics'")
    if [(v["step"], v["loss"]) for v in kinds["validation"]] != \
            [(v["step"], v["loss"]) for v in m.get("validations", [])]:
        sys.exit("FAILED: the validation lines are not the metrics' validations")
    if [t["loss"] for t in kinds["test"]] != [m["test_loss"]]:
        sys.exit("FAILED: the test line is not the metrics' test loss")
    # An interval's loss is the mean of its steps' losses over the job.
    losses = [x for e in m["epochs"] for x in e["step_losses"]]
    for r in train:
        mean = sum(losses[r["step"] - r["steps"]:r["step"]]) / r["steps"]
        if abs(mean - r["loss"]) > 1e-5 * max(1.0, abs(mean)):
            sys.exit(f"FAILED: step {r['step']}: loss {r['loss']}, the steps' mean is {mean}")
summary = (f"{len(train)} train lines (steps {steps[0] if steps else '-'} to "
           f"{steps[-1] if steps else '-'}), {len(kinds['epoch'])} epoch lines, "
           f"{len(kinds['validation'])} validation lines, {len(kinds['test'])} test line")
if args.metrics:
    summary += "; the job's figures as the metrics'"
print(summary)
