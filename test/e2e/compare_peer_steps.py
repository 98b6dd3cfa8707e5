#!/usr/bin/env python3
"""Compares dp's training of an ONNX model with PyTorch's recorded one (models/onnx/pytorch_steps.py).

Usage: compare_peer_steps.py RECORDED.json DP_METRICS.json DP_PARAMS [--loss-tol REL] [--param-tol REL]

Every step's loss must be within --loss-tol (default 1e-4) relative of PyTorch's, and every
parameter within --param-tol (default 1e-3) of PyTorch's, measured as the largest element
difference over the parameter's largest magnitude. dp keeps PyTorch's names and holds a 2-D
Linear weight transposed ([in, out] for PyTorch's [out, in]). Prints one line per check and
exits 1 on the first failure. Pure Python: no numpy needed.
"""
import argparse
import json
import os
import struct
import sys


def read_params(path):
    """dprun --save-params's format: per parameter its name, NUL, u64 count, f32 values."""
    data = open(path, "rb").read()
    out, at = {}, 0
    while at < len(data):
        end = data.index(b"\0", at)
        name = data[at:end].decode()
        (count,) = struct.unpack_from("<Q", data, end + 1)
        at = end + 9
        out[name] = struct.unpack_from(f"<{count}f", data, at)
        at += 4 * count
    return out


def transposed(values, rows, cols):
    return [values[r * cols + c] for c in range(cols) for r in range(rows)]


p = argparse.ArgumentParser()
p.add_argument("recorded")
p.add_argument("metrics")
p.add_argument("params")
p.add_argument("--loss-tol", type=float, default=1e-4)
p.add_argument("--param-tol", type=float, default=1e-3)
a = p.parse_args()

recorded = json.load(open(a.recorded))
dp_losses = [l for e in json.load(open(a.metrics))["epochs"] for l in e["step_losses"]]
peer_losses = recorded["losses"]
if len(dp_losses) != len(peer_losses):
    sys.exit(f"FAIL: dp ran {len(dp_losses)} steps, PyTorch {len(peer_losses)}")
worst = max(abs(x - y) / abs(y) for x, y in zip(dp_losses, peer_losses))
print(f"losses: {len(dp_losses)} steps, {dp_losses[0]:.6f} .. {dp_losses[-1]:.6f} "
      f"(PyTorch {peer_losses[0]:.6f} .. {peer_losses[-1]:.6f}), largest relative difference {worst:.2e}")
if worst > a.loss_tol:
    sys.exit(f"FAIL: a step's loss differs from PyTorch's by more than {a.loss_tol}")

peer = read_params(os.path.splitext(a.recorded)[0] + ".params")
# dp's optimizer state (NAME/m, NAME/v, ...) has no counterpart in PyTorch's parameters.
mine = {n: v for n, v in read_params(a.params).items() if "/" not in n}
if set(peer) != set(mine):
    sys.exit(f"FAIL: parameters differ: dp {sorted(mine)}, PyTorch {sorted(peer)}")
for name in sorted(peer):
    x, y = mine[name], peer[name]
    if len(x) != len(y):
        sys.exit(f"FAIL: {name}: dp holds {len(x)} values, PyTorch {len(y)}")
    if name.endswith(".weight") and len(recorded.get("shapes", {}).get(name, [])) == 2:
        rows, cols = recorded["shapes"][name]
        y = transposed(y, rows, cols)
    scale = max(abs(v) for v in y) or 1.0
    diff = max(abs(u - v) for u, v in zip(x, y)) / scale
    print(f"{name}: {len(x)} values, largest difference {diff:.2e} of the largest magnitude")
    if diff > a.param_tol:
        sys.exit(f"FAIL: {name} differs from PyTorch's by more than {a.param_tol}")
print("same training as PyTorch")
