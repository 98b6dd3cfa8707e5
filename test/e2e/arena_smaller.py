#!/usr/bin/env python3
"""Checks two `dpc compile` reports: the second's arena is smaller than the first's, and its
persistent gradients are gone (it says its buckets live in the train step's memory).

Usage: arena_smaller.py FIRST_REPORT SECOND_REPORT
"""
import re
import sys


def arena(path):
    text = open(path).read()
    match = re.search(r"arena total\s+(\d+)", text)
    if not match:
        sys.exit(f"{path}: no 'arena total' line")
    return int(match.group(1)), text


first, _ = arena(sys.argv[1])
second, text = arena(sys.argv[2])
if "gradients in the train step's memory" not in text:
    sys.exit(f"{sys.argv[2]}: the report does not say the gradients are in the step's memory")
if not second < first:
    sys.exit(f"the arena is {second} bytes, not smaller than {first}")
print(f"arena {first} -> {second} bytes ({(first - second) / 2**20:.2f} MiB less)")
