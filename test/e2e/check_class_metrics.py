#!/usr/bin/env python3
"""Checks --top-k and --confusion-matrix in a dprun --metrics file against the run's own
--predictions CSV: the top-K accuracy (the label among the K largest logits, a tie counted for
the lower class), each class's accuracy and the confusion matrix (rows: labels, columns: the
predicted class), and that the matrix's diagonal makes the run's test accuracy.

Usage: check_class_metrics.py METRICS.json PREDICTIONS.csv
"""
import csv
import json
import sys

m = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))[1:]
k = m["top_k"]
classes = len(m["confusion_matrix"])
confusion = [[0] * classes for _ in range(classes)]
in_top = 0
for row in rows:
    label, predicted = int(row[1]), int(row[2])
    logits = [float(x) for x in row[3 + classes:]]
    above = sum(1 for c in range(classes)
                if logits[c] > logits[label] or (logits[c] == logits[label] and c < label))
    in_top += above < k
    confusion[label][predicted] += 1
if confusion != m["confusion_matrix"]:
    sys.exit("FAILED: the confusion matrix is not the predictions'")
if abs(in_top / len(rows) - m["top_k_accuracy"]) > 1e-12:
    sys.exit(f"FAILED: top-{k} accuracy {m['top_k_accuracy']}, the predictions give {in_top / len(rows)}")
diagonal = sum(confusion[c][c] for c in range(classes)) / len(rows)
if abs(diagonal - m["test_accuracy"]) > 1e-12:
    sys.exit(f"FAILED: the diagonal gives {diagonal}, the run's test accuracy is {m['test_accuracy']}")
for c in range(classes):
    if abs(m["per_class_accuracy"][c] - confusion[c][c] / sum(confusion[c])) > 1e-12:
        sys.exit(f"FAILED: class {c}'s accuracy")
print(f"top-{k} accuracy {m['top_k_accuracy']:.4f} and a {classes}x{classes} confusion matrix, "
      "as the predictions give; its diagonal is the test accuracy")
