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
  cnn.onnx (+ .data)        Conv(1, 16, 3), ReLU, MaxPool(2), Conv(16, 32, 3, padding 1),
                            BatchNorm, ReLU, MaxPool(2), Flatten, Linear(1152, 10); the default
                            exporter without its optimizer (which folds batch norms into convs)
  cnn_ts.onnx               the same through the TorchScript exporter with TrainingMode.PRESERVE
                            (an eval-mode export folds them too)
  resnet18.onnx (+ .data)   ResNet-18 for 32x32 images (CIFAR-10) at width 12: basic blocks with
                            batch norms and 1x1 shortcut convs, strides 2 with PyTorch's pads;
                            the default exporter without its optimizer
  cnn_pool.onnx             torchvision's ResNet stem at small size: Conv(1, 8, 3, padding 1),
                            BatchNorm, ReLU, MaxPool(3, 2, padding 1), AvgPool(3, 1, padding 1),
                            Flatten, Linear(1568, 10); the TorchScript exporter, weights inline
  mobilenetv2.onnx (+ .data) a MobileNetV2 for 32x32 images (CIFAR-10) at width 1/2: inverted
                            residual blocks (1x1 expansion, 3x3 depthwise convolution with
                            group = channels, 1x1 projection, batch norms, ReLU6 as Clip) with
                            residual adds, a 1x1 head conv, global average pooling, dropout and
                            a Linear; the default exporter without its optimizer
  cnn_concat.onnx           Conv(1, 8, 3), ReLU, MaxPool(2), an Inception-style block (a 3x3
                            and a 1x1 Conv of one input joined by Concat along the channels),
                            BatchNorm, ReLU, MaxPool(2), Flatten, Linear; the TorchScript
                            exporter with TrainingMode.PRESERVE, weights inline
  cnn_se.onnx               Conv(1, 16, 3), ReLU, squeeze-and-excitation (the channel means by
                            GlobalAveragePool, 1x1 Conv to 4, ReLU, 1x1 Conv to 16, Sigmoid, Mul
                            with the image), MaxPool(2), the same at 32 channels after Conv(16,
                            32, 3, padding 1), Flatten, Linear; the TorchScript exporter
  vit.onnx (+ .data)        a vision transformer for 28x28 images: 4x4 patches as 49 tokens of
                            width 128, a position embedding, 4 pre-norm blocks of 4-head
                            attention written out and a GELU MLP (128-192-128), a final
                            LayerNorm, the mean over the tokens, a Linear; the default
                            exporter without its optimizer (which would share the LayerNorms'
                            equal initializers); the MLP's 192 keeps vit.onnx.data under 2 MiB
  vit_ts.onnx               the same through the TorchScript exporter (opset 17: GELU in its
                            erf form), weights inline
  thumbnail.onnx            a regression (trained with --loss mse): a 28x28 image's 7x7
                            thumbnail (regression_data.py's targets) from Conv(1, 16, 3,
                            padding 1), ReLU, Conv(16, 16, 4, stride 4), ReLU, Conv(16, 1, 1),
                            Sigmoid: an image out; the TorchScript exporter, weights inline
  rows_ln.onnx              the image's 28 rows as tokens: Linear(28, 32), LayerNorm(32), ReLU,
                            the mean over the tokens, Linear(32, 10); the TorchScript exporter
                            at opset 14, which writes the layer norm out (ReduceMean, Sub, Pow,
                            ReduceMean, Add, Sqrt, Div, Mul, Add), weights inline
  embedding.onnx            each pixel's byte (0..255) a token id: Embedding(256, 8) of the 784
                            pixels (an int64 input [N, 28, 28]; ONNX's Gather), Flatten,
                            Linear(6272, 32), ReLU, Linear(32, 10); the TorchScript exporter,
                            weights inline
"""
import argparse
import math
import os
import sys

import torch
import torch.nn as nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),  # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 13 -> 6
        nn.Flatten(), nn.Linear(32 * 6 * 6, 10))


class SqueezeExcite(nn.Module):
    """Squeeze-and-excitation (Hu et al.; MobileNetV3 and EfficientNet have it): each channel
    scaled by a weight in (0, 1) computed from the image's channel means by two 1x1 convs."""

    def __init__(self, channels, squeezed):
        super().__init__()
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.expand(torch.relu(self.reduce(s))))


def cnn_se():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), SqueezeExcite(16, 4), nn.MaxPool2d(2),  # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), SqueezeExcite(32, 8), nn.MaxPool2d(2),  # -> 6
        nn.Flatten(), nn.Linear(32 * 6 * 6, 10))


def cnn_pool():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(3, 2, padding=1), nn.AvgPool2d(3, 1, padding=1),  # 28 -> 14 -> 14
        nn.Flatten(), nn.Linear(8 * 14 * 14, 10))


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convs with batch norms; a 1x1 conv on the shortcut where the
    stride or width changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 for 32x32 images (CIFAR-10): a 3x3 stem, four stages of two basic blocks
    (strides 1, 2, 2, 2), global average pooling, a Linear to 10 classes. `width` is the first
    stage's channels (64 in the paper; 12 here keeps the committed file under 2 MiB)."""

    def __init__(self, width=12, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        layers, cin = [], width
        for i, stride in enumerate((1, 2, 2, 2)):
            cout = width * 2 ** i
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


def resnet18():
    torch.manual_seed(0)
    return ResNet18()


def conv_bn(cin, cout, kernel, stride=1, groups=1, relu6=True):
    """A convolution without bias, its batch norm and (unless a projection) ReLU6."""
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6())
    return layers


class InvertedResidual(nn.Module):
    """MobileNetV2's block: a 1x1 expansion by `expand` (none at 1), a 3x3 depthwise
    convolution (one group per channel) with the block's stride, a linear 1x1 projection; the
    input added back where the shape is unchanged."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = conv_bn(cin, hidden, 1) if expand != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += conv_bn(hidden, cout, 1, relu6=False)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """MobileNetV2 for 32x32 images: a stride-1 stem (CIFAR's variant: the image is small),
    the paper's (expansion, channels, blocks, stride) stages at half width with the first
    strides kept at 1, a 1x1 head conv, global average pooling, dropout, a Linear."""

    STAGES = ((1, 8, 1, 1), (6, 12, 2, 1), (6, 16, 3, 2), (6, 32, 4, 2), (6, 48, 3, 1),
              (6, 64, 2, 2), (6, 128, 1, 1))

    def __init__(self, classes=10):
        super().__init__()
        layers, cin = conv_bn(3, 16, 3), 16
        for expand, cout, blocks, stride in self.STAGES:
            for i in range(blocks):
                layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
                cin = cout
        layers += conv_bn(cin, 512, 1)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(512, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def mobilenetv2():
    torch.manual_seed(0)
    return MobileNetV2()


class TwoBranches(nn.Module):
    """An Inception-style block: a 3x3 and a 1x1 convolution of one input, their channels
    joined (Concat along axis 1)."""

    def __init__(self, cin, c3, c1):
        super().__init__()
        self.wide, self.narrow = nn.Conv2d(cin, c3, 3, padding=1), nn.Conv2d(cin, c1, 1)

    def forward(self, x):
        return torch.cat([self.wide(x), self.narrow(x)], 1)


def cnn_concat():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2),  # 28 -> 26 -> 13
        TwoBranches(8, 8, 4), nn.BatchNorm2d(12), nn.ReLU(), nn.MaxPool2d(2),  # 13 -> 6
        nn.Flatten(), nn.Linear(12 * 6 * 6, 10))


class Attention(nn.Module):
    """Multi-head self-attention written out (as many ViTs do): q, k and v projections, heads
    split by a reshape and a transpose, softmax(q k^T / sqrt(d)) v, heads merged, a projection."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.proj = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads

        def split(y):  # [b, t, d] -> [b, h, t, d / h]
            return y.reshape(b, t, h, d // h).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        p = (q @ k.transpose(-2, -1) / math.sqrt(d // h)).softmax(-1)
        return self.proj((p @ v).transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """A pre-norm transformer encoder block: x + attention(norm(x)), x + mlp(norm(x))."""

    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    """A small vision transformer for 28x28 images: 4x4 patches (a strided Conv) as 49 tokens of
    width 128 with a learned position embedding, 4 pre-norm blocks of 4 heads, a final norm, the
    mean over the tokens and a Linear head."""

    def __init__(self, dim=128, heads=4, depth=4, hidden=192, patch=4, image=28, classes=10):
        super().__init__()
        tokens = (image // patch) ** 2
        self.patches = nn.Conv2d(1, dim, patch, stride=patch)
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(*(Block(dim, heads, hidden) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patches(x).flatten(2).transpose(1, 2) + self.position  # [b, 49, 128]
        return self.head(self.norm(self.blocks(x)).mean(1))


def vit():
    torch.manual_seed(0)
    return ViT()


def thumbnail():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, 4, stride=4), nn.ReLU(),  # 28 -> 7
        nn.Conv2d(16, 1, 1), nn.Sigmoid())


class RowsLayerNorm(nn.Module):
    """The image's rows as tokens through a Linear and a LayerNorm, averaged."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(28, 32)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        t = torch.relu(self.norm(self.proj(x.reshape(-1, 28, 28))))
        return self.head(t.mean(1))


def rows_ln():
    torch.manual_seed(0)
    return RowsLayerNorm()


class PixelEmbedding(nn.Module):
    """Each pixel's byte a token id looked up in a learned table (an embedding, as a language
    model's first layer), then a ReLU MLP on the embedded pixels."""

    def __init__(self, width=8):
        super().__init__()
        self.embed = nn.Embedding(256, width)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(784 * width, 32), nn.ReLU(),
                                  nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.embed(x))


def embedding():
    torch.manual_seed(0)
    return PixelEmbedding()


# Models whose input is integer token ids (each pixel's byte), not scaled pixels.
TOKEN_MODELS = {"embedding"}

# name: (module factory, example input shape, exporter)
MODELS = {
    "cnn": (cnn, (2, 1, 28, 28), "dynamo-unoptimized"),
    "cnn_ts": (cnn, (2, 1, 28, 28), "torchscript"),
    "cnn_pool": (cnn_pool, (2, 1, 28, 28), "torchscript"),
    "resnet18": (resnet18, (2, 3, 32, 32), "dynamo-unoptimized"),
    "mobilenetv2": (mobilenetv2, (2, 3, 32, 32), "dynamo-unoptimized"),
    "mlp": (mlp, (2, 1, 28, 28), "torchscript"),
    "mlp_dynamo": (mlp, (2, 1, 28, 28), "dynamo"),
    "cnn_concat": (cnn_concat, (2, 1, 28, 28), "torchscript"),
    "cnn_se": (cnn_se, (2, 1, 28, 28), "torchscript"),
    "vit": (vit, (2, 1, 28, 28), "dynamo-unoptimized"),
    "vit_ts": (vit, (2, 1, 28, 28), "torchscript"),
    "thumbnail": (thumbnail, (2, 1, 28, 28), "torchscript"),
    "embedding": (embedding, (2, 28, 28), "torchscript"),
    "rows_ln": (rows_ln, (2, 1, 28, 28), "torchscript-14"),
}


def export(name, out_dir):
    make, shape, exporter = MODELS[name]
    module = make().eval()
    example = (torch.zeros(shape, dtype=torch.int64 if name in TOKEN_MODELS else torch.float32),)
    path = os.path.join(out_dir, name + ".onnx")
    output = "thumbnail" if name == "thumbnail" else "logits"
    names = dict(input_names=["image"], output_names=[output])
    if exporter.startswith("torchscript"):
        # PRESERVE: an eval-mode export would fold each BatchNorm into its Conv, and a model to
        # train needs both.
        opset = int(exporter.split("-")[1]) if "-" in exporter else 17
        torch.onnx.export(module, example, path, dynamo=False, opset_version=opset,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          dynamic_axes={"image": {0: "batch"}, output: {0: "batch"}}, **names)
    else:
        batch = torch.export.Dim("batch")
        # The default exporter's optimizer folds each BatchNorm into its Conv (right for
        # inference, not for a model to train): models with batch norms are exported without it.
        torch.onnx.export(module, example, path, dynamo=True, external_data=True,
                          optimize=exporter != "dynamo-unoptimized",
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
