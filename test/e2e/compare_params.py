#!/usr/bin/env python3
"""Compares two parameter files written by `dprun --save-params`.

Usage: compare_params.py A B [--rtol R] [--floor F]
       compare_params.py A --sample N OUT

The second form writes OUT in the same format with at most N evenly spaced values of each of A's
parameters, so that a large model's parameters can travel as a reference; compare two files
sampled alike.

For every parameter (same names, same order, same sizes) the relative error is
max|a - b| / max(max|a|, F), F tiny unless given (a floor keeps parameters that stay near zero,
such as a bias that a batch normalisation follows, from dividing float noise by nothing). Prints one line per parameter and exits 1 when any error exceeds
the tolerance (default 1e-5) or the files do not hold the same parameters.
"""
import argparse
import array
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from params_file import load  # noqa: E402,F401  (check_params.py imports it from here)


def write_sample(params, n, path):
    out = bytearray()
    for name, values in params:
        stride = max(1, -(-len(values) // max(n, 1)))
        kept = values[::stride]
        out += name.encode() + b"\0" + struct.pack("<Q", len(kept)) + kept.tobytes()
    with open(path, "wb") as f:
        f.write(out)
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b", nargs="?")
    parser.add_argument("--sample", type=int, metavar="N", help="write N values per parameter to B")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--floor", type=float, default=1e-30)
    args = parser.parse_intermixed_args()
    if args.b is None:
        parser.error("give B: the second parameter file, or with --sample the file to write")
    if args.sample is not None:
        return write_sample(load(args.a), args.sample, args.b)
    a, b = load(args.a), load(args.b)
    if [n for n, _ in a] != [n for n, _ in b]:
        sys.exit(f"different parameters: {[n for n, _ in a]} vs {[n for n, _ in b]}")
    worst = 0.0
    for (name, x), (_, y) in zip(a, b):
        if len(x) != len(y):
            sys.exit(f"{name}: {len(x)} vs {len(y)} elements")
        scale = max(max(abs(v) for v in x), args.floor)
        err = max(abs(p - q) for p, q in zip(x, y)) / scale
        worst = max(worst, err)
        print(f"{name}: {len(x)} values, relative error {err:.3g}")
    print(f"max relative error {worst:.3g} (tolerance {args.rtol:g})")
    return 0 if worst <= args.rtol else 1


if __name__ == "__main__":
    sys.exit(main())
