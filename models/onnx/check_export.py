#!/usr/bin/env python3
"""Runs a model `dpc export` wrote in onnxruntime on the Fashion-MNIST test set and compares its
accuracy with dp's own evaluation of the same weights.

    python3 models/onnx/check_export.py trained.onnx [--metrics run.json] [--data DIR]

`--metrics` is the `dprun --metrics` file of the run whose `--save-params` were exported: its
test accuracy must equal onnxruntime's (the same weights, the same test set; exit 1
otherwise). Also runs ONNX's checker on the file. Needs onnx, onnxruntime and numpy
(bench/setup.sh installs them in bench/.venv).
"""
import argparse
import gzip
import json
import struct
import sys

import numpy as np
import onnx
import onnxruntime


def read_idx(path):
    raw = gzip.open(path).read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--metrics")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    onnx.checker.check_model(onnx.load(a.model))
    session = onnxruntime.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    inp = session.get_inputs()[0]
    images = read_idx(f"{a.data}/t10k-images-idx3-ubyte.gz").astype(np.float32) / np.float32(255)
    labels = read_idx(f"{a.data}/t10k-labels-idx1-ubyte.gz")
    shape = [d if isinstance(d, int) else -1 for d in inp.shape]
    logits = np.concatenate([
        session.run(None, {inp.name: images[i:i + 500].reshape([-1] + shape[1:])})[0]
        for i in range(0, len(labels), 500)])
    accuracy = float((logits.argmax(1) == labels).mean())
    print(f"check_export: {a.model}: ONNX's checker passes; onnxruntime {onnxruntime.__version__} "
          f"test accuracy {accuracy:.4f} ({len(labels)} samples)")
    if a.metrics:
        dp = json.load(open(a.metrics))["test_accuracy"]
        print(f"check_export: dp's test accuracy {dp:.4f}")
        if abs(dp - accuracy) > 0.5 / len(labels):
            sys.exit("check_export: they differ")
        print("check_export: the same")


if __name__ == "__main__":
    main()
