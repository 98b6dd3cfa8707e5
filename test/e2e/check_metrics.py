"""Checks a dprun --metrics file: its shape, the number of epochs, and accuracy thresholds."""
import argparse
import json
import math
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("metrics")
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--params", type=int)
parser.add_argument("--min-test-accuracy", type=float, default=0.0)
parser.add_argument("--falling-loss", action="store_true", help="each epoch's loss below the previous")
parser.add_argument("--ranks", type=int, help="each epoch lists this many ranks' samples/s")
args = parser.parse_args()

with open(args.metrics) as f:
    m = json.load(f)
errors = []
epochs = m.get("epochs", [])
if len(epochs) != args.epochs:
    errors.append(f"expected {args.epochs} epochs, found {len(epochs)}")
for i, e in enumerate(epochs, 1):
    for key in ("epoch", "loss", "train_accuracy", "seconds", "samples_per_sec"):
        if key not in e:
            errors.append(f"epoch {i} lacks '{key}'")
    if e.get("epoch") != i:
        errors.append(f"epoch record {i} is numbered {e.get('epoch')}")
    if not (isinstance(e.get("loss"), (int, float)) and math.isfinite(e["loss"])):
        errors.append(f"epoch {i} loss is not finite: {e.get('loss')}")
    acc_e = e.get("train_accuracy")
    if isinstance(acc_e, (int, float)) and math.isfinite(acc_e) and not 0 <= acc_e <= 1:
        errors.append(f"epoch {i} train accuracy {acc_e} is outside [0, 1]")
    if not (e.get("samples_per_sec") or 0) > 0:
        errors.append(f"epoch {i} samples_per_sec is not positive")
    if args.ranks is not None:
        rates = e.get("rank_samples_per_sec", [])
        if len(rates) != args.ranks or not all(r > 0 for r in rates):
            errors.append(f"epoch {i} rank_samples_per_sec should hold {args.ranks} positive "
                          f"rates: {rates}")
if args.falling_loss:
    for a, b in zip(epochs, epochs[1:]):
        if not b["loss"] < a["loss"]:
            errors.append(f"loss did not fall: epoch {a['epoch']} {a['loss']} -> epoch {b['epoch']} {b['loss']}")
if args.params is not None and m.get("params") != args.params:
    errors.append(f"expected params {args.params}, found {m.get('params')}")
acc = m.get("test_accuracy")
if not isinstance(acc, (int, float)) or acc < args.min_test_accuracy:
    errors.append(f"test accuracy {acc} is below {args.min_test_accuracy}")
elif acc > 1:
    errors.append(f"test accuracy {acc} is above 1")
for e in errors:
    print("check_metrics:", e, file=sys.stderr)
print(f"check_metrics: test accuracy {acc}, {len(epochs)} epochs" + (" FAILED" if errors else " ok"))
sys.exit(1 if errors else 0)
