#!/usr/bin/env python3
"""Runs an ONNX model in onnxruntime on a test set (Fashion-MNIST's IDX files, or CIFAR-10's
binary test_batch.bin) and compares its predictions with dp's own evaluation of the same weights.

    python3 models/onnx/check_export.py model.onnx [--predictions dp.csv [--tolerance T]]
                                        [--metrics run.json] [--data DIR]

`--predictions` is the `dprun --predictions` file of the same weights (a model `dpc export`
wrote, with `dprun --predict --params` of the parameters exported; or an imported model, with
`dprun --predict` of its plan): every sample's logits must be within `--tolerance` (default
1e-4) of onnxruntime's, and its predicted class the same. `--metrics` is the `dprun --metrics`
file of the run whose parameters were exported: its test accuracy must equal onnxruntime's.
A regression's predictions file (`index,target_0,...,predicted_0,...`, a model trained with
--loss mse) is compared value for value, and `--metrics`' test loss with onnxruntime's mean
squared error against the file's targets (within 1e-4 relative); --data then needs only the
test images.
Exit 1 otherwise. Runs ONNX's checker on the file where the onnx package is installed. Needs
onnxruntime and numpy (scripts/setup.sh installs them in .tools/python; bench/setup.sh in
bench/.venv, with onnx).
"""
import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np
import onnxruntime

try:
    import onnx
except ImportError:
    onnx = None


def read_predictions(path, classes):
    """The logits of a dprun --predictions CSV, [samples, classes]."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        if header[:3] != ["index", "label", "predicted"] or len(header) != 3 + 2 * classes:
            sys.exit(f"check_export: {path}: not a dprun --predictions file of {classes} classes")
        rows = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
    return rows[:, 3 + classes:]


def read_regression(path):
    """A regression's dprun --predictions CSV: its targets and predicted values, [samples, K]
    each; None for a classifier's file."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        if header[:2] != ["index", "target_0"]:
            return None
        rows = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
    width = (len(header) - 1) // 2
    return rows[:, 1:1 + width], rows[:, 1 + width:]


def read_idx(path):
    raw = gzip.open(path).read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def read_test_set(data):
    """The test images (uint8, channel-planar per sample) and labels of a data folder: CIFAR-10's
    test_batch.bin where there is one, else Fashion-MNIST's IDX files."""
    cifar = os.path.join(data, "test_batch.bin")
    if os.path.exists(cifar):
        raw = np.fromfile(cifar, dtype=np.uint8).reshape(-1, 1 + 3 * 32 * 32)
        return raw[:, 1:], raw[:, 0]
    return (read_idx(f"{data}/t10k-images-idx3-ubyte.gz"),
            read_idx(f"{data}/t10k-labels-idx1-ubyte.gz"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--metrics")
    p.add_argument("--predictions")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    if onnx:
        onnx.checker.check_model(onnx.load(a.model))
    session = onnxruntime.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    inp = session.get_inputs()[0]
    regression = read_regression(a.predictions) if a.predictions else None
    if regression is not None:
        images = read_idx(f"{a.data}/t10k-images-idx3-ubyte.gz")
        labels = np.zeros(len(images))
    else:
        images, labels = read_test_set(a.data)
    # Scaled pixels, or each pixel's byte as a token id where the input is integer (an
    # embedding's), as dp feeds them.
    if inp.type in ("tensor(int64)", "tensor(int32)"):
        images = images.astype(np.int64 if inp.type == "tensor(int64)" else np.int32)
    else:
        images = images.astype(np.float32) / np.float32(255)
    shape = [d if isinstance(d, int) else -1 for d in inp.shape]
    logits = np.concatenate([
        session.run(None, {inp.name: images[i:i + 500].reshape([-1] + shape[1:])})[0]
        for i in range(0, len(labels), 500)])
    if regression is not None:
        return check_regression(a, logits.reshape(len(images), -1), *regression)
    accuracy = float((logits.argmax(1) == labels).mean())
    checker = "ONNX's checker passes; " if onnx else ""
    print(f"check_export: {a.model}: {checker}onnxruntime {onnxruntime.__version__} "
          f"test accuracy {accuracy:.4f} ({len(labels)} samples)")
    if a.predictions:
        dp = read_predictions(a.predictions, logits.shape[1])
        if dp.shape != logits.shape:
            sys.exit(f"check_export: {a.predictions} holds {dp.shape[0]} samples, the test set "
                     f"{logits.shape[0]}")
        worst = float(np.abs(dp - logits).max())
        differ = int((dp.argmax(1) != logits.argmax(1)).sum())
        print(f"check_export: dp's logits within {worst:.2g} of onnxruntime's "
              f"(tolerance {a.tolerance:g}); {differ} predicted classes differ")
        if worst > a.tolerance or differ:
            sys.exit("check_export: they differ")
    if a.metrics:
        dp = json.load(open(a.metrics))["test_accuracy"]
        print(f"check_export: dp's test accuracy {dp:.4f}")
        if abs(dp - accuracy) > 0.5 / len(labels):
            sys.exit("check_export: they differ")
        print("check_export: the same")


def check_regression(a, outputs, targets, dp):
    """A regression's check: dp's predicted values against onnxruntime's, and dp's test loss
    against onnxruntime's mean squared error."""
    checker = "ONNX's checker passes; " if onnx else ""
    mse = float(((outputs.astype(np.float64) - targets) ** 2).mean())
    print(f"check_export: {a.model}: {checker}onnxruntime {onnxruntime.__version__} "
          f"test mean squared error {mse:.6f} ({len(outputs)} samples)")
    if dp.shape != outputs.shape:
        sys.exit(f"check_export: {a.predictions} holds {dp.shape}, onnxruntime {outputs.shape}")
    worst = float(np.abs(dp - outputs).max())
    print(f"check_export: dp's predictions within {worst:.2g} of onnxruntime's "
          f"(tolerance {a.tolerance:g})")
    if worst > a.tolerance:
        sys.exit("check_export: they differ")
    if a.metrics:
        loss = json.load(open(a.metrics))["test_loss"]
        print(f"check_export: dp's test loss {loss:.6f}")
        if abs(loss - mse) > 1e-4 * mse:
            sys.exit("check_export: they differ")
        print("check_export: the same")


if __name__ == "__main__":
    main()
