#!/usr/bin/env python3
"""Compares two dprun --save-params files: the same parameters with bit-equal values.

Usage: same_params.py A B [--skip SUBSTRING]

Optimizer state (names with a '/') and names containing SUBSTRING are left out. Prints
"N parameters equal" or the first difference (exit 1).
"""
import argparse
import struct
import sys


def read(path):
    data, out, at = open(path, "rb").read(), {}, 0
    while at < len(data):
        end = data.index(b"\0", at)
        (count,) = struct.unpack_from("<Q", data, end + 1)
        out[data[at:end].decode()] = data[end + 9:end + 9 + 4 * count]
        at = end + 9 + 4 * count
    return out


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
