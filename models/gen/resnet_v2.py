#!/usr/bin/env python3
"""Writes the ResNetV2 models (models/resnet*v2*.mlir) in the graph dialect.

Pre-activation bottleneck ResNets (He et al., "Identity Mappings in Deep Residual Networks") as
Keras builds ResNet50V2 and ResNet152V2 with `weights=None, include_top=True, classes=10`.
Each distinct residual block (stack, first/middle/last) is written once as a private function
and called once per block with a `graph.scope`, so that graph-inline-calls names its parameters
`conv3_block2_1_conv.kernel` and so on, as Keras names its layers.

    python3 models/gen/resnet_v2.py            # rewrites the three model files
"""
import argparse
import os
import textwrap

EPS = "1.001e-05"  # Keras's ResNetV2 batch normalisation epsilon


def t(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


class Writer:
    """Emits the ops of one function body, numbering the SSA values."""

    def __init__(self, indent="  "):
        self.lines = []
        self.n = 0
        self.indent = indent

    def fresh(self, hint):
        self.n += 1
        return f"%{hint}{self.n}"

    def op(self, hint, text):
        v = self.fresh(hint)
        self.lines.append(f"{self.indent}{v} = {text}")
        return v

    def param(self, name, shape, init, trainable=True):
        extra = "" if trainable else ", trainable = false"
        return self.op("p", f'graph.param "{name}" {{init = #graph.{init}{extra}}} : {t(shape)}')

    def conv(self, x, shape, name, kernel, filters, stride, bias):
        n, h, w, c = shape
        wk = self.param(f"{name}.kernel", [kernel, kernel, c, filters], "glorot_uniform")
        operands, types = [x, wk], [t(shape), t([kernel, kernel, c, filters])]
        if bias:
            operands.append(self.param(f"{name}.bias", [filters], "zeros"))
            types.append(t([filters]))
        out = [n, (h - kernel) // stride + 1, (w - kernel) // stride + 1, filters]
        y = self.op("c", f"graph.conv2d {', '.join(operands)} {{strides = [{stride}, {stride}], "
                         f'padding = "valid"}}\n{self.indent}    : ({", ".join(types)}) '
                         f"-> {t(out)}")
        return y, out

    def bn(self, x, shape, name):
        c = shape[-1]
        g = self.param(f"{name}.gamma", [c], "ones")
        b = self.param(f"{name}.beta", [c], "zeros")
        m = self.param(f"{name}.moving_mean", [c], "zeros", trainable=False)
        v = self.param(f"{name}.moving_variance", [c], "ones", trainable=False)
        y = self.op("n", f"graph.batch_norm {x}, {g}, {b}, {m}, {v} {{epsilon = {EPS}}}\n"
                         f"{self.indent}    : ({t(shape)}, {t([c])}, {t([c])}, {t([c])}, {t([c])})"
                         f" -> {t(shape)}")
        return y

    def relu(self, x, shape):
        return self.op("r", f"graph.relu {x} : {t(shape)}")

    def pad(self, x, shape, p):
        n, h, w, c = shape
        out = [n, h + 2 * p, w + 2 * p, c]
        return self.op("z", f"graph.zero_pad2d {x} {{padding = [{p}, {p}, {p}, {p}]}} : "
                            f"{t(shape)} -> {t(out)}"), out

    def max_pool(self, x, shape, window, stride):
        n, h, w, c = shape
        out = [n, (h - window) // stride + 1, (w - window) // stride + 1, c]
        return self.op("m", f"graph.max_pool2d {x} {{window = [{window}, {window}], strides = "
                            f"[{stride}, {stride}]}} : {t(shape)} -> {t(out)}"), out


def block(fname, shape, filters, stride, conv_shortcut):
    """One bottleneck block as a private function; returns (text, output shape)."""
    w = Writer("  ")
    x = "%x"
    preact = w.relu(w.bn(x, shape, "preact_bn"), shape)
    if conv_shortcut:
        shortcut, sshape = w.conv(preact, shape, "0_conv", 1, 4 * filters, stride, bias=True)
    elif stride > 1:
        shortcut, sshape = w.max_pool(x, shape, 1, stride)
    else:
        shortcut, sshape = x, shape
    y, s = w.conv(preact, shape, "1_conv", 1, filters, 1, bias=False)
    y = w.relu(w.bn(y, s, "1_bn"), s)
    y, s = w.pad(y, s, 1)
    y, s = w.conv(y, s, "2_conv", 3, filters, stride, bias=False)
    y = w.relu(w.bn(y, s, "2_bn"), s)
    y, s = w.conv(y, s, "3_conv", 1, 4 * filters, 1, bias=True)
    assert s == sshape, (fname, s, sshape)
    out = w.op("a", f"graph.add {shortcut}, {y} : {t(s)}")
    kind = ("conv shortcut" if conv_shortcut else
            f"max-pool shortcut, stride {stride}" if stride > 1 else "identity shortcut")
    text = (f"// {filters} filters, {kind}.\n"
            f"func.func private @{fname}(%x: {t(shape)}) -> {t(s)} {{\n"
            + "\n".join(w.lines) + f"\n  return {out} : {t(s)}\n}}\n")
    return text, s


def model(name, blocks, size, batch, seed_note):
    functions = []
    w = Writer("  ")
    shape = [batch, size, size, 3]
    x, s = w.pad("%image", shape, 3)
    x, s = w.conv(x, s, "conv1_conv", 7, 64, 2, bias=True)
    x, s = w.pad(x, s, 1)
    x, s = w.max_pool(x, s, 3, 2)
    for stack, (filters, count, last_stride) in enumerate(
            zip([64, 128, 256, 512], blocks, [2, 2, 2, 1]), start=2):
        defined = {}
        for i in range(1, count + 1):
            if i == 1:
                kind, stride, conv = "first", 1, True
            elif i == count and last_stride > 1:
                kind, stride, conv = "last", last_stride, False
            else:
                kind, stride, conv = "middle", 1, False
            fname = f"conv{stack}_{kind}"
            if fname not in defined:
                text, out = block(fname, s, filters, stride, conv)
                functions.append(text)
                defined[fname] = (list(s), out)
            in_shape, out = defined[fname]
            assert in_shape == s, (fname, in_shape, s)
            x = w.op("b", f'func.call @{fname}({x}) {{graph.scope = "conv{stack}_block{i}"}} : '
                          f"({t(s)}) -> {t(out)}")
            s = out
    x = w.relu(w.bn(x, s, "post_bn"), s)
    n, _, _, c = s
    x = w.op("g", f"graph.global_avg_pool2d {x} : {t(s)} -> {t([n, c])}")
    k = w.param("predictions.kernel", [c, 10], "glorot_uniform")
    b = w.param("predictions.bias", [10], "zeros")
    logits = w.op("l", f"graph.dense {x}, {k}, {b}\n      : ({t([n, c])}, {t([c, 10])}, "
                       f"{t([10])}) -> {t([n, 10])}")
    loss = w.op("loss", f"graph.softmax_cross_entropy {logits}, %label\n      : ({t([n, 10])}, "
                        f"tensor<{n}xi32>) -> tensor<f32>")
    paragraphs = [textwrap.fill(" ".join(p.split()), 97) for p in seed_note.strip().split("\n\n")]
    header = "\n//\n".join("\n".join("// " + line for line in p.split("\n")) for p in paragraphs)
    main = (f"func.func @{name}(%image: {t(shape)} {{graph.input = \"image\"}},\n"
            f"    %label: tensor<{batch}xi32> {{graph.input = \"label\"}}) -> tensor<f32>\n"
            f"    attributes {{graph.optimizer = #graph.sgd<lr = 1.0e-02>}} {{\n"
            + "\n".join(w.lines) + f"\n  return {loss} : tensor<f32>\n}}\n")
    generated = "// Generated by models/gen/resnet_v2.py; edit that script, not this file."
    return header + "\n//\n" + generated + "\n\n" + "\n".join(functions) + "\n" + main


SEED = """{name}: Keras's {keras} (weights=None, include_top=True, classes=10) as seed 002 trains
it on CIFAR-10 {variant}. {total} parameters ({trainable} trainable).

Pre-activation bottleneck blocks: stem zero-pad 3, conv 7x7/2 (64, bias), zero-pad 1, max-pool
3x3/2; four stacks of {blocks} blocks with 64, 128, 256, 512 filters; each block is BN, relu,
then conv 1x1 (no bias), BN, relu, zero-pad 1, conv 3x3 with the block's stride (no bias), BN,
relu, conv 1x1 to 4 x filters (bias), plus the shortcut (a 1x1 conv of the pre-activation in a
stack's first block, a 1x1/2 max-pool of the input in the strided last block of stacks 2-4,
else the input). Head: BN, relu, global average pool, dense 10 (the softmax is folded into the
loss). SGD lr 0.01 (seed: x number of GPUs, dpc --scale-lr linear); batch {batch}{batch_note}."""

MODELS = [
    dict(name="resnet50v2", keras="ResNet50V2", blocks=[3, 4, 6, 3], size=128, batch=256,
         variant="images resized to 128x128", total="23,585,290", trainable="23,539,850",
         batch_note=" (the seed's per-GPU batch)"),
    dict(name="resnet152v2", keras="ResNet152V2", blocks=[3, 8, 36, 3], size=128, batch=256,
         variant="images resized to 128x128", total="58,352,138", trainable="58,208,394",
         batch_note=" (the seed's per-GPU batch)"),
    dict(name="resnet50v2_32", keras="ResNet50V2", blocks=[3, 4, 6, 3], size=32, batch=16,
         variant="(here on the original 32x32 images: a small variant for quick tests)",
         total="23,585,290", trainable="23,539,850", batch_note=", small for quick tests"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="directory for the .mlir files (default: models/)")
    args = parser.parse_args()
    for m in MODELS:
        note = SEED.format(**{**m, "blocks": ", ".join(map(str, m["blocks"]))})
        text = model(m["name"], m["blocks"], m["size"], m["batch"], note)
        path = os.path.join(args.out, m["name"] + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        print("wrote", path)


if __name__ == "__main__":
    main()
