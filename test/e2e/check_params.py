#!/usr/bin/env python3
"""Checks named parameters of a `dprun --save-params` file against exact values.

Usage: check_params.py FILE NAME=V [NAME=V1,V2,...] ...

NAME=V: every value of NAME is V; NAME=V1,...,Vn: NAME holds exactly those n values. Values
are compared as f32, bit for bit. Exits 1 naming the first difference."""
import array
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_params import load  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    params = dict(load(sys.argv[1]))
    for spec in sys.argv[2:]:
        name, _, text = spec.partition("=")
        if name not in params:
            sys.exit(f"{sys.argv[1]}: no parameter {name} (has {', '.join(params)})")
        got = params[name]
        wanted = array.array("f", [float(v) for v in text.split(",")])
        if len(wanted) == 1:
            wanted = array.array("f", [wanted[0]]) * len(got)
        if len(wanted) != len(got):
            sys.exit(f"{name}: {len(got)} values, expected {len(wanted)}")
        for i, (g, w) in enumerate(zip(got, wanted)):
            if g != w:
                sys.exit(f"{name}[{i}] is {g!r}, expected {w!r}")
        print(f"{name}: {len(got)} values as expected")


if __name__ == "__main__":
    main()
