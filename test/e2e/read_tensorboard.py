#!/usr/bin/env python3
"""Reads a dprun --tensorboard directory back with TensorBoard's own reader (EventAccumulator)
and checks its scalars against the run's --log FILE (JSON lines) and --metrics FILE.

Usage: read_tensorboard.py DIR LOG.jsonl METRICS.json

- train/loss, train/accuracy at every "train" line's step, equal to the log's (as f32);
- validation/loss and validation/accuracy at every validation's step, equal to the metrics';
- test/loss and test/accuracy once, equal to the metrics' test figures.
Prints the tags and their counts; exits 1 on the first difference.
"""
import json
import struct
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

directory, log_path, metrics_path = sys.argv[1:4]
acc = EventAccumulator(directory, size_guidance={"scalars": 0})
acc.Reload()
tags = acc.Tags()["scalars"]
log = [json.loads(line) for line in open(log_path)]
metrics = json.load(open(metrics_path))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def check(tag, expected):
    got = [(e.step, e.value) for e in acc.Scalars(tag)] if tag in tags else []
    want = [(s, f32(v)) for s, v in expected]
    if got != want:
        sys.exit(f"FAILED: {tag}: TensorBoard reads {got[:5]}..., expected {want[:5]}...")
    return len(got)


train = [r for r in log if r["kind"] == "train"]
counts = {
    "train/loss": check("train/loss", [(r["step"], r["loss"]) for r in train]),
    "train/accuracy": check("train/accuracy", [(r["step"], r["accuracy"]) for r in train]),
    "validation/loss": check("validation/loss",
                             [(v["step"], v["loss"]) for v in metrics.get("validations", [])]),
    "validation/accuracy": check("validation/accuracy",
                                 [(v["step"], v["accuracy"]) for v in metrics.get("validations", [])]),
}
test = acc.Scalars("test/loss")
if len(test) != 1 or test[0].value != f32(metrics["test_loss"]):
    sys.exit(f"FAILED: test/loss {test}, expected {metrics['test_loss']} once")
print("TensorBoard reads " + ", ".join(f"{t} x{n}" for t, n in counts.items()) +
      f", test/loss {test[0].value:.4f}; {len(tags)} tags")
