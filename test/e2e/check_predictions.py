#!/usr/bin/env python3
"""Checks a `dprun --predictions` CSV: a header, one row per test sample in order, each row's
predicted class the first largest logit, its probabilities the softmax of its logits (summing to
1); the accuracy the rows imply equal to the one the run printed (--run-output: the `test  loss
... accuracy A` line). With --same OTHER.csv, the two files' logits agree within --tolerance
and their predicted classes are equal. With --loss-smoothing S, the mean cross-entropy of the
rows' logits against their labels smoothed by S, -((1 - S) log p[label] + S mean_j log p[j]),
equals the run's printed test loss (to its 4 decimals). Prints a one-line summary."""
import argparse
import csv
import math
import re
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    classes = (len(header) - 3) // 2
    expected = (["index", "label", "predicted"] + [f"prob_{c}" for c in range(classes)]
                + [f"logit_{c}" for c in range(classes)])
    if header != expected:
        sys.exit(f"{path}: header {header[:5]}... is not dprun's ({expected[:5]}...)")
    out = []
    for n, row in enumerate(body):
        index, label, predicted = int(row[0]), int(row[1]), int(row[2])
        probs = [float(x) for x in row[3:3 + classes]]
        logits = [float(x) for x in row[3 + classes:]]
        if index != n:
            sys.exit(f"{path}: row {n} has index {index}")
        if predicted != max(range(classes), key=lambda c: (logits[c], -c)):
            sys.exit(f"{path}: row {n} predicts {predicted}, its largest logit is another")
        top = max(logits)
        total = sum(math.exp(l - top) for l in logits)
        for c in range(classes):
            if abs(probs[c] - math.exp(logits[c] - top) / total) > 1e-6:
                sys.exit(f"{path}: row {n}'s probability {c} is not the softmax of its logits")
        if abs(sum(probs) - 1) > 1e-5:
            sys.exit(f"{path}: row {n}'s probabilities sum to {sum(probs)}")
        out.append((label, predicted, logits))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("csv")
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("--run-output", help="dprun's output, with its `test  loss` line")
    p.add_argument("--same", help="another predictions CSV of the same weights")
    p.add_argument("--tolerance", type=float, default=0.0)
    p.add_argument("--loss-smoothing", type=float,
                   help="check the printed test loss against this label smoothing's")
    a = p.parse_args()
    rows = read(a.csv)
    if len(rows) != a.samples:
        sys.exit(f"{a.csv}: {len(rows)} rows, expected {a.samples}")
    accuracy = sum(label == predicted for label, predicted, _ in rows) / len(rows)
    line = f"{len(rows)} predictions, accuracy {accuracy:.4f}"
    if a.run_output:
        printed = re.findall(r"^test  loss \S+  accuracy (\S+)", open(a.run_output).read(), re.M)
        if len(printed) != 1:
            sys.exit(f"{a.run_output}: expected one `test  loss ... accuracy` line")
        if f"{accuracy:.4f}" != printed[0]:
            sys.exit(f"the predictions' accuracy {accuracy:.4f} is not the run's {printed[0]}")
        line += ", as the run printed"
    if a.loss_smoothing is not None:
        s, total = a.loss_smoothing, 0.0
        for label, _, logits in rows:
            top = max(logits)
            log_sum = top + math.log(sum(math.exp(l - top) for l in logits))
            log_p = [l - log_sum for l in logits]
            total -= (1 - s) * log_p[label] + s * sum(log_p) / len(log_p)
        loss = total / len(rows)
        printed = re.findall(r"^test  loss (\S+)", open(a.run_output).read(), re.M)
        if len(printed) != 1 or abs(loss - float(printed[0])) > 6e-5:
            sys.exit(f"the smoothed loss of the predictions is {loss:.5f}; the run printed {printed}")
        line += f"; smoothed test loss {loss:.4f}, as printed"
    if a.same:
        other = read(a.same)
        if len(other) != len(rows):
            sys.exit(f"{a.same}: {len(other)} rows, {a.csv} {len(rows)}")
        worst = max(abs(x - y) for (_, _, l1), (_, _, l2) in zip(rows, other)
                    for x, y in zip(l1, l2))
        if worst > a.tolerance:
            sys.exit(f"logits differ by up to {worst:.3g} > {a.tolerance:g}")
        classes = sum(p1 != p2 for (_, p1, _), (_, p2, _) in zip(rows, other))
        if classes:
            sys.exit(f"{classes} predicted classes differ")
        line += f"; logits within {a.tolerance:g} of {a.same.rsplit('/', 1)[-1]}"
    print(line)


main()
