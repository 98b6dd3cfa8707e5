#!/usr/bin/env python3
"""PyTorch (CPU, eager) peer for dp's seed MLP benchmark.

Model: 784 -> dense 100 (sigmoid) -> dense 10 (logits), softmax cross-entropy (mean over the
batch), fp32, plain SGD (no momentum, no weight decay), Keras-like init (Glorot-uniform weights,
zero biases). Data: Fashion-MNIST read straight from the IDX .gz files, pixels / 255, flattened to
784; pre-loaded as tensors before any timing. Each epoch visits the training set in a fresh
permutation drawn from a seeded generator, in full batches only: the samples left over after
the last full batch are skipped for that epoch (as dprun does; none are with 60,000 / 100).

Timing: whole epochs, wall clock (time.perf_counter) around the training loop only -- the
permutation, batch gather, forward, loss, backward, optimizer step and the per-step train metrics
(loss sum and correct count, which dp's train step also produces). Data loading, model creation
and the test evaluation are outside the timed region. No warm-up steps are excluded; per-epoch
times are reported so a reader can drop epoch 1.

Prints exactly one JSON line on stdout at the end (anything else goes to stderr).
"""
import argparse
import gzip
import json
import math
import os
import resource
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """Reads an IDX file (optionally gzipped) into a numpy array of its declared shape."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file")
    dtype_code, ndim = raw[2], raw[3]
    dtypes = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if dtype_code not in dtypes:
        raise ValueError(f"{path}: unknown IDX element type 0x{dtype_code:02x}")
    dims = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    data = np.frombuffer(raw, dtype=dtypes[dtype_code], offset=4 + 4 * ndim)
    if data.size != math.prod(dims):
        raise ValueError(f"{path}: {data.size} elements, header says {dims}")
    return data.reshape(dims)


def load_split(data_dir, prefix):
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{prefix}: {x.shape[0]} images but {y.shape[0]} labels")
    xf = x.reshape(x.shape[0], -1).astype(np.float32)
    xf /= np.float32(255.0)  # in place: no second copy of the images
    x = torch.from_numpy(xf)
    y = torch.from_numpy(y.astype(np.int64))
    return x.contiguous(), y.contiguous()


class MLP(torch.nn.Module):
    def __init__(self, n_in=784, n_hidden=100, n_out=10):
        super().__init__()
        self.fc1 = torch.nn.Linear(n_in, n_hidden)
        self.fc2 = torch.nn.Linear(n_hidden, n_out)
        for layer in (self.fc1, self.fc2):  # Keras defaults: glorot_uniform / zeros
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))


def vm_hwm_mb():
    """Peak resident set size of this process so far, in MiB (Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch.set_num_threads (default: all cores)")
    ap.add_argument("--max-steps", type=int, default=0,
                    help="at most this many train steps per epoch, as dprun (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.epochs < 1 or args.batch < 1 or args.threads < 1:
        ap.error("--epochs, --batch and --threads must be >= 1")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rss_import_mb = vm_hwm_mb()

    x_train, y_train = load_split(args.data, "train")
    x_test, y_test = load_split(args.data, "t10k")
    rss_data_mb = vm_hwm_mb()

    model = MLP(n_in=x_train.shape[1])
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)

    n = x_train.shape[0]
    steps_per_epoch = n // args.batch  # full batches only, as dprun
    if args.max_steps:
        steps_per_epoch = min(steps_per_epoch, args.max_steps)
    if steps_per_epoch < 1:
        ap.error(f"--batch {args.batch} is larger than the training set ({n})")
    epochs = []
    total_steps = 0
    total_samples = 0
    total_seconds = 0.0
    model.train()
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=gen)
        loss_sum = torch.zeros((), dtype=torch.float64)
        correct = torch.zeros((), dtype=torch.int64)
        seen = 0
        for s in range(steps_per_epoch):
            idx = perm[s * args.batch:(s + 1) * args.batch]
            xb = x_train.index_select(0, idx)
            yb = y_train.index_select(0, idx)
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            with torch.no_grad():
                loss_sum += loss.detach() * yb.shape[0]
                correct += (logits.detach().argmax(1) == yb).sum()
            seen += yb.shape[0]
            total_steps += 1
        loss_v = loss_sum.item()
        correct_v = correct.item()
        sec = time.perf_counter() - t0
        if seen:
            epochs.append({"epoch": epoch, "loss": loss_v / seen, "train_accuracy": correct_v / seen,
                           "seconds": sec, "samples": seen, "samples_per_sec": seen / sec})
            total_samples += seen
            total_seconds += sec
            print(f"epoch {epoch}: loss {loss_v / seen:.4f} acc {correct_v / seen:.4f} "
                  f"{sec:.3f}s {seen / sec:.0f} samples/s", file=sys.stderr)

    model.eval()
    with torch.no_grad():
        test_acc = (model(x_test).argmax(1) == y_test).float().mean().item()

    print(json.dumps({
        "framework": "pytorch",
        "version": torch.__version__,
        "samples_per_sec": total_samples / total_seconds if total_seconds > 0 else 0.0,
        "seconds": total_seconds,
        "steps": total_steps,
        "samples": total_samples,
        "test_accuracy": test_acc,
        "peak_rss_mb": vm_hwm_mb(),
        "rss_after_import_mb": rss_import_mb,
        "rss_after_data_mb": rss_data_mb,
        "threads": torch.get_num_threads(),
        "batch": args.batch,
        "lr": args.lr,
        "seed": args.seed,
        "epochs": epochs,
    }))


if __name__ == "__main__":
    main()
