#!/usr/bin/env python3
"""Makes the ONNX models under models/onnx/ the way users make them: a PyTorch module, exported
by one of PyTorch's two ONNX exporters. The exported files are committed, so dp's tests need no
PyTorch; this script is how they were made (and how to make them again).

    python3 models/onnx/export.py [--out DIR] [NAME ...]

Needs torch, onnx and onnxscript (bench/setup.sh installs them in bench/.venv). Each model is
exported in eval mode from weights drawn with a fixed seed (torch.manual_seed(0)), with a
dynamic batch axis:
  mlp.onnx                  784-64-10 ReLU MLP (Flatten, Linear, ReLU, Linear), Fashion-MNIST;
                            the TorchScript exporter (dynamo=False), opset 17, IR 8
  mlp_dynamo.onnx (+ .data) the same module through the default exporter (torch.export),
                            IR 10 and its opset, the weights in mlp_dynamo.onnx.data
"""
import argparse
import os
import sys

import torch
import torch.nn as nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))


# name: (module factory, example input shape, exporter)
MODELS = {
    "mlp": (mlp, (2, 1, 28, 28), "torchscript"),
    "mlp_dynamo": (mlp, (2, 1, 28, 28), "dynamo"),
}


def export(name, out_dir):
    make, shape, exporter = MODELS[name]
    module = make().eval()
    example = (torch.zeros(shape),)
    path = os.path.join(out_dir, name + ".onnx")
    names = dict(input_names=["image"], output_names=["logits"])
    if exporter == "torchscript":
        torch.onnx.export(module, example, path, dynamo=False, opset_version=17,
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, **names)
    else:
        batch = torch.export.Dim("batch")
        torch.onnx.export(module, example, path, dynamo=True, external_data=True,
                          dynamic_shapes=({0: batch},), **names)
    params = sum(p.numel() for p in module.parameters())
    print(f"export: {path} ({exporter}, {params:,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("names", nargs="*", help=f"models to export (default: all: {', '.join(MODELS)})")
    args = parser.parse_args()
    for name in args.names or MODELS:
        if name not in MODELS:
            sys.exit(f"export: unknown model {name} (known: {', '.join(MODELS)})")
        export(name, args.out)


if __name__ == "__main__":
    main()
