#!/usr/bin/env python3
"""PyTorch trains an ONNX model of models/onnx/ for whole epochs, as `dprun --epochs E` does:
the peer figure for dp's training of the same file (docs/onnx.md).

    python3 models/onnx/pytorch_train.py NAME --optimizer adam:lr=1e-3 [--epochs 5]
        [--batch 64] [--seed 1] [--threads 2] [--data DIR]

The module is export.py's NAME with the weights of NAME.onnx (pytorch_steps.load_module), the
batches those `dprun --seed S` draws in each epoch (dp's shuffle, pytorch_steps.epoch_order;
the last partial batch left out, as dp does), pixels scaled by 1/255, the mean softmax
cross-entropy. After each epoch it prints the mean training loss, the test accuracy (eval mode)
and the seconds the epoch's training took. Needs torch, onnx and numpy (bench/setup.sh).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_steps as steps  # noqa: E402


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("name")
    p.add_argument("--optimizer", required=True)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    module, shape, _ = steps.load_module(a.name, here)
    images, labels = steps.read_train_set(a.data)
    test_images = steps.read_idx(os.path.join(a.data, "t10k-images-idx3-ubyte.gz"))
    test_labels = steps.read_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte.gz"))
    opt = steps.make_optimizer(a.optimizer, module.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()
    sample = tuple(shape[1:])

    def batch_of(source, rows):
        return torch.from_numpy(source[rows].astype(np.float32) / np.float32(255)).reshape((len(rows),) + sample)

    print(f"pytorch_train: {a.name}.onnx, {sum(p.numel() for p in module.parameters()):,} parameters, "
          f"{a.optimizer}, batch {a.batch}, {a.threads} thread(s), torch {torch.__version__}")
    for epoch in range(a.epochs):
        module.train()
        order = steps.epoch_order(len(labels), a.seed, epoch)
        start = time.perf_counter()
        total, count = 0.0, 0
        for step in range(len(labels) // a.batch):
            rows = order[step * a.batch:(step + 1) * a.batch]
            opt.zero_grad()
            loss = loss_fn(module(batch_of(images, rows)), torch.from_numpy(labels[rows].astype(np.int64)))
            loss.backward()
            opt.step()
            total += loss.item()
            count += 1
        seconds = time.perf_counter() - start
        module.eval()
        correct = 0
        with torch.no_grad():
            for first in range(0, len(test_labels), 500):
                rows = list(range(first, min(first + 500, len(test_labels))))
                predicted = module(batch_of(test_images, rows)).argmax(1).numpy()
                correct += int((predicted == test_labels[rows]).sum())
        print(f"epoch {epoch + 1}/{a.epochs}: train loss {total / count:.4f}, "
              f"test accuracy {correct / len(test_labels):.4f}, {seconds:.1f} s "
              f"({count * a.batch / seconds:,.0f} samples/s)", flush=True)


if __name__ == "__main__":
    main()
