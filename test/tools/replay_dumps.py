#!/usr/bin/env python3
"""Replays every dump of `dpc compile --dump-dir DIR` as its header says: each NN-<pass>.mlir
after the first records the pass with its options and the dp-opt command that makes it from
the dump before ("// replay: dp-opt PREV --pass-pipeline='builtin.module(PASS{OPTIONS})'").
Runs each command in DIR (dp-opt from PATH) and compares its output with the dump, the "// "
comment lines aside.

Usage: replay_dumps.py DIR [--skip PASS ...]
Prints "N dumps replay as printed" or the first difference (exit 1).
"""
import argparse
import os
import shlex
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--skip", action="append", default=[])
args = parser.parse_args()


def body(text):
    return [line for line in text.splitlines() if not line.startswith("// ")]


count = 0
for name in sorted(os.listdir(args.dir)):
    if not name.endswith(".mlir") or name.startswith("00-"):
        continue
    text = open(os.path.join(args.dir, name)).read()
    replay = [line[len("// replay: "):] for line in text.splitlines() if line.startswith("// replay: ")]
    if len(replay) != 1:
        sys.exit(f"FAILED: {name} has {len(replay)} replay lines")
    if any(f"pipeline='builtin.module({skip}" in replay[0] for skip in args.skip):
        continue
    run = subprocess.run(shlex.split(replay[0]), cwd=args.dir, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAILED: {name}: `{replay[0]}` exited {run.returncode}: {run.stderr[-500:]}")
    if body(run.stdout) != body(text):
        sys.exit(f"FAILED: {name}: `{replay[0]}` prints another module")
    count += 1
print(f"{count} dumps replay as printed")
