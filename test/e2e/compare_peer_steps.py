#!/usr/bin/env python3
"""Compares dp's training of an ONNX model with PyTorch's recorded one (models/onnx/pytorch_steps.py).

Usage: compare_peer_steps.py RECORDED.json DP_METRICS.json DP_PARAMS [--loss-tol REL] [--param-tol REL]
                             [--unchecked REGEX]

Every step's loss must be within --loss-tol (default 1e-4) relative of PyTorch's, and every
parameter (and batch-norm statistic) within --param-tol (default 1e-3) of PyTorch's, measured
as the largest element difference over the parameter's largest magnitude. dp keeps PyTorch's
names and its own layouts (in_dp_layout). Prints one line per check and exits 1 on the first
failure. --unchecked names parameters no step can check (a full match of the name): those
that change no output, whose gradient is zero in exact arithmetic (attention's key bias: a
softmax does not see its rows shifted), so that each side's values are its rounding noise
as an optimizer scales it. Pure Python: no numpy needed.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from params_file import load  # noqa: E402


def read_params(path):
    """A parameters file (dprun --save-params's safetensors, or the raw format the recorded
    peer's files keep): name -> values."""
    return {name: tuple(values) for name, values in load(path)}


def in_dp_layout(name, values, recorded):
    """PyTorch's values of `name` in dp's layout: a Linear weight [out, in] as [in, out] (its
    rows in H, W, C order after a flattened image), a Conv weight [F, C, KH, KW] as
    [KH, KW, C, F]; an embedding's table (listed in "same_layout") as it is."""
    shape = recorded.get("shapes", {}).get(name, [])
    if name in recorded.get("same_layout", []):  # an embedding's [V, D] table
        return values
    if len(shape) == 2 and name.endswith(".weight"):
        out, inp = shape
        rows = list(range(inp))
        if name in recorded.get("flattened_chw", {}):
            C, H, W = recorded["flattened_chw"][name]
            rows = [(c * H + h) * W + w for h in range(H) for w in range(W) for c in range(C)]
        return [values[o * inp + r] for r in rows for o in range(out)]
    if len(shape) == 4:
        F, C, KH, KW = shape
        return [values[((f * C + c) * KH + kh) * KW + kw]
                for kh in range(KH) for kw in range(KW) for c in range(C) for f in range(F)]
    return values


p = argparse.ArgumentParser()
p.add_argument("recorded")
p.add_argument("metrics")
p.add_argument("params")
p.add_argument("--loss-tol", type=float, default=1e-4)
p.add_argument("--param-tol", type=float, default=1e-3)
p.add_argument("--unchecked", default="", help="a regular expression of parameters not compared")
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
# dp's optimizer state (NAME/m, NAME/v, ...) has no counterpart in PyTorch's parameters. A
# weight the exporter renamed (a MatMul's "onnx::MatMul_7") is dp's under the ONNX name.
renamed = {onnx: torch for torch, onnx in recorded.get("onnx_names", {}).items()}
mine = {renamed.get(n, n): v for n, v in read_params(a.params).items() if "/" not in n}
if set(peer) != set(mine):
    sys.exit(f"FAIL: parameters differ: dp {sorted(mine)}, PyTorch {sorted(peer)}")
for name in sorted(peer):
    if a.unchecked and re.fullmatch(a.unchecked, name):
        print(f"{name}: not compared (--unchecked: it changes no output)")
        continue
    x, y = mine[name], peer[name]
    if len(x) != len(y):
        sys.exit(f"FAIL: {name}: dp holds {len(x)} values, PyTorch {len(y)}")
    y = in_dp_layout(name, y, recorded)
    scale = max(abs(v) for v in y) or 1.0
    diff = max(abs(u - v) for u, v in zip(x, y)) / scale
    print(f"{name}: {len(x)} values, largest difference {diff:.2e} of the largest magnitude")
    if diff > a.param_tol:
        sys.exit(f"FAIL: {name} differs from PyTorch's by more than {a.param_tol}")
print("same training as PyTorch")
