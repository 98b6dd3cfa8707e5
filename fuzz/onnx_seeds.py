#!/usr/bin/env python3
"""Makes the committed seeds of the ONNX fuzz target (fuzz/seeds/onnx/): tiny models with their
weights inline, as PyTorch's two exporters write them, covering the importer's op table:
convolutions (grouped and depthwise, PyTorch's stride-2 pads), batch norm, ReLU6 as Clip, max
and average pooling, residual adds, the TorchScript exporter's shape arithmetic
(x.view(x.size(0), -1)), Flatten, Gemm and MatMul, Dropout, Sigmoid and Tanh, HardSwish.

    bench/.venv/bin/python fuzz/onnx_seeds.py [--out fuzz/seeds/onnx]

Needs torch, onnx and onnxscript (bench/setup.sh installs them in bench/.venv); the seeds are
committed so that the fuzzers need none of them.
"""
import argparse
import os

import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 4, 3, 1, 1), nn.BatchNorm2d(4), nn.ReLU6())
        self.depthwise = nn.Conv2d(4, 4, 3, 2, 1, groups=4, bias=False)
        self.grouped = nn.Conv2d(4, 4, 1, groups=2)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 2 * 2, 3)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = self.stem(x)
        y = self.depthwise(x)
        y = y + torch.sigmoid(self.grouped(y))
        y = self.pool(nn.functional.hardswish(y))
        return self.fc(self.drop(torch.tanh(y).view(y.size(0), -1)))


class TinyMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return nn.functional.log_softmax(self.net(x), dim=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "seeds", "onnx"))
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    example = (torch.zeros(2, 1, 8, 8),)
    names = dict(input_names=["image"], output_names=["logits"])
    for name, make in (("tiny", Tiny), ("tiny_mlp", TinyMlp)):
        torch.manual_seed(0)
        module = make().eval()
        torch.onnx.export(module, example, os.path.join(out, f"{name}_ts.onnx"), dynamo=False,
                          opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, **names)
        torch.onnx.export(module, example, os.path.join(out, f"{name}_dynamo.onnx"), dynamo=True,
                          external_data=False, optimize=False,
                          dynamic_shapes=({0: torch.export.Dim("batch")},), **names)
    for f in sorted(os.listdir(out)):
        print(f"onnx_seeds: {os.path.join(out, f)} ({os.path.getsize(os.path.join(out, f))} bytes)")


if __name__ == "__main__":
    main()
