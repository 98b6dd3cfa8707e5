#!/usr/bin/env python3
"""Compares the test accuracy of two `dprun --metrics` files.

Usage: compare_accuracy.py A.json B.json --within POINTS

Prints both accuracies and their difference in points (1 point = 0.01), and exits 1 when the
difference exceeds POINTS or a file holds no test accuracy.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("--within", type=float, required=True, help="largest difference in points")
args = parser.parse_args()


def accuracy(path):
    with open(path) as f:
        m = json.load(f)
    acc = m.get("test_accuracy")
    if not isinstance(acc, (int, float)):
        sys.exit(f"FAILED: {path} has no test accuracy")
    return float(acc)


a, b = accuracy(args.a), accuracy(args.b)
diff = abs(a - b) * 100
print(f"test accuracy {a:.4f} and {b:.4f}: {diff:.2f} points apart")
if diff > args.within:
    sys.exit(f"FAILED: more than {args.within} points apart")
