#!/usr/bin/env python3
"""Compares two dprun --save-params files (safetensors, or the older raw format): the same
parameters with bit-equal values.

Usage: same_params.py A B [--skip SUBSTRING]

Optimizer state (names with a '/') and names containing SUBSTRING are left out. Prints
"N parameters equal" or the first difference (exit 1).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from params_file import load  # noqa: E402


def read(path):
    return {name: values.tobytes() for name, values in load(path)}


p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--skip", default=None)
args = p.parse_args()
keep = lambda n: "/" not in n and not (args.skip and args.skip in n)
a = {n: v for n, v in read(args.a).items() if keep(n)}
b = {n: v for n, v in read(args.b).items() if keep(n)}
if set(a) != set(b):
    sys.exit(f"different parameters: {sorted(a)} and {sorted(b)}")
for name in sorted(a):
    if a[name] != b[name]:
        sys.exit(f"{name} differs")
print(f"{len(a)} parameters equal")
