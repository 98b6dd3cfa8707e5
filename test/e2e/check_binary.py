#!/usr/bin/env python3
"""Checks a binary model's `dprun --predictions` CSV (index, target_k..., prob_k..., logit_k...,
each probability the sigmoid of its logit) against the run's printed `test  loss L  accuracy A`
line: the
mean binary cross-entropy of sigmoid(logit) against each target, written as -(t log s + (1 - t)
log(1 - s)), is L, and the fraction of outputs whose prediction (logit > 0) is the target's
(> 0.5) is A, each to the 4 printed decimals. Prints a one-line summary.

    check_binary.py PREDICTIONS.csv RUN_OUTPUT
"""
import csv
import math
import re
import sys


def main():
    path, run = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    k = (len(header) - 1) // 3
    if header != (["index"] + [f"target_{i}" for i in range(k)] + [f"prob_{i}" for i in range(k)]
                  + [f"logit_{i}" for i in range(k)]):
        sys.exit(f"{path}: header {header} is not a binary model's")
    loss = right = 0.0
    for row in body:
        targets = [float(x) for x in row[1:1 + k]]
        probs = [float(x) for x in row[1 + k:1 + 2 * k]]
        logits = [float(x) for x in row[1 + 2 * k:]]
        for t, p, x in zip(targets, probs, logits):
            s = 1 / (1 + math.exp(-x))
            if abs(p - s) > 1e-8 + 1e-7 * s:
                sys.exit(f"{path}: row {row[0]}'s probability {p} is not the sigmoid of {x}")
            s = min(max(s, 1e-300), 1 - 1e-16)
            loss -= t * math.log(s) + (1 - t) * math.log(1 - s)
            right += (x > 0) == (t > 0.5)
    loss /= len(body) * k
    accuracy = right / (len(body) * k)
    printed = re.findall(r"^test  loss (\S+)  accuracy (\S+)", open(run).read(), re.M)
    if len(printed) != 1:
        sys.exit(f"{run}: expected one `test  loss ... accuracy` line")
    if abs(loss - float(printed[0][0])) > 6e-5:
        sys.exit(f"the predictions' binary cross-entropy is {loss:.5f}, the run printed "
                 f"{printed[0][0]}")
    if f"{accuracy:.4f}" != printed[0][1]:
        sys.exit(f"the predictions' binary accuracy is {accuracy:.4f}, the run printed "
                 f"{printed[0][1]}")
    print(f"{len(body)} samples x {k} outputs: loss {loss:.4f}, accuracy {accuracy:.4f}, "
          "as the run printed")


main()
