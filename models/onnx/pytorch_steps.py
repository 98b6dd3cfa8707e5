#!/usr/bin/env python3
"""PyTorch trains an ONNX model of models/onnx/ for a few steps, as dp will: the reference dp's
training of the same file is checked against (test/e2e/onnx-pytorch-steps.test).

    python3 models/onnx/pytorch_steps.py NAME --optimizer sgd:lr=0.1 [--steps 20] [--batch 32]
        [--seed 1] [--data DIR] [--out models/onnx/recorded]

The module is export.py's NAME, its initial weights read from NAME.onnx's initializers (so
PyTorch starts from exactly the exported weights dp imports). The batches are the ones
`dprun --seed S` draws in its first epoch: dp's shuffle (runtime/data/Batcher.cpp: the
Fisher-Yates walk over xoshiro256** seeded through splitmix64) is computed here the same way,
and pixels are scaled by 1/255 as dp's loader does. The loss is the mean softmax cross-entropy
of the logits, or with --loss mse the mean squared error of the output (flattened per sample)
against DIR's float targets (train-targets-idx2-float, as regression_data.py makes them). Optimizers: sgd (torch.optim.SGD), adam (torch.optim.Adam; dp's epsilon is
Keras's, added to sqrt(v) before bias correction, so the spec should give a small one).

Writes OUT/NAME-OPTIMIZER.json (the setup and the per-step losses) and
OUT/NAME-OPTIMIZER.params (the final parameters and batch-norm statistics in dprun
--save-params's format, in PyTorch's layouts and names). Needs torch, onnx and numpy (bench/setup.sh).
"""
import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402

M64 = (1 << 64) - 1
SHUFFLE_STREAM = 0x53485546464C4531  # "SHUFFLE1"


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def mix_seed(a, b):
    _, b1 = splitmix64(b)
    _, r = splitmix64(a ^ b1)
    return r


class Xoshiro:
    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, v = splitmix64(seed)
            self.s.append(v)

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, bound):
        threshold = ((1 << 64) - bound) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def epoch_order(n, seed, epoch=0):
    """dp's sample order of an epoch (runtime/data/Batcher.cpp, Batcher::setEpoch)."""
    order = list(range(n))
    rng = Xoshiro(mix_seed(mix_seed(seed, SHUFFLE_STREAM), epoch))
    for i in range(n, 1, -1):
        j = rng.below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def read_idx(path):
    raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    dtype = ">f4" if raw[2] == 0x0D else np.uint8
    return np.frombuffer(raw, dtype=dtype, offset=4 + 4 * dims).reshape(shape)


def read_train_set(data):
    """dp's training set of DIR: Fashion-MNIST's IDX files, or CIFAR-10's binary batches
    (data_batch_1..5.bin, each record a label byte and 3 x 32 x 32 channel-planar pixels; dp
    feeds them NHWC, which the imported model's NCHW input is)."""
    if os.path.exists(os.path.join(data, "data_batch_1.bin")):
        raw = b"".join(open(os.path.join(data, f"data_batch_{i}.bin"), "rb").read() for i in range(1, 6))
        records = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 1 + 3 * 32 * 32)
        return records[:, 1:].reshape(-1, 3, 32, 32), records[:, 0]
    return (read_idx(os.path.join(data, "train-images-idx3-ubyte.gz")),
            read_idx(os.path.join(data, "train-labels-idx1-ubyte.gz")))


def make_optimizer(spec, params):
    name, _, rest = spec.partition(":")
    kw = {k: float(v) for k, v in (p.split("=") for p in rest.split(",") if p)}
    if name == "sgd":
        return torch.optim.SGD(params, lr=kw.get("lr", 0.01))
    if name == "adam":
        return torch.optim.Adam(params, lr=kw.get("lr", 1e-3),
                                betas=(kw.get("beta1", 0.9), kw.get("beta2", 0.999)),
                                eps=kw.get("epsilon", 1e-7))
    sys.exit(f"pytorch_steps: optimizer {name} is not mapped (sgd, adam)")


def load_module(name, here):
    """export.py's NAME with the weights of NAME.onnx (read from its initializers): the module,
    its example input shape and the ONNX model."""
    make, shape, _ = export.MODELS[name]
    module = make()
    model = onnx.load(os.path.join(here, name + ".onnx"))
    inits = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    state = module.state_dict()
    renamed = {}
    for key in state:
        if key.endswith("num_batches_tracked"):
            continue  # a counter the ONNX file has no use for
        if key not in inits or tuple(inits[key].shape) != tuple(state[key].shape):
            # The TorchScript exporter names a Linear's weight that it writes as a MatMul's
            # transposed initializer "onnx::MatMul_N": found by its values (the module's own,
            # drawn from the same seed as the export's).
            found = [n for n, t in inits.items() if state[key].dim() == 2 and
                     tuple(t.shape) == tuple(state[key].t().shape) and torch.equal(t, state[key].t())]
            if len(found) != 1:
                sys.exit(f"pytorch: {name}.onnx has no initializer {key} of shape {tuple(state[key].shape)}")
            renamed[key] = found[0]
            continue
        state[key] = inits[key]
    module.load_state_dict(state)
    module.onnx_names = renamed
    return module, shape, model


def save_params(path, named):
    with open(path, "wb") as f:
        for name, value in named:
            data = value.detach().numpy().astype("<f4").ravel()
            f.write(name.encode() + b"\0" + struct.pack("<Q", data.size) + data.tobytes())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("name")
    p.add_argument("--optimizer", required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--out", default=os.path.join(here, "recorded"))
    p.add_argument("--data-note", default="", help="how the data was made (recorded)")
    p.add_argument("--loss", default="softmax-cross-entropy", choices=["softmax-cross-entropy", "mse"])
    p.add_argument("--tag", help="the recording's name after NAME- (default: the optimizer's)")
    a = p.parse_args()

    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    module, shape, model = load_module(a.name, here)
    module.train()

    if a.loss == "mse":
        images = read_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(a.data, "train-targets-idx2-float")).astype(np.float32)
    else:
        images, labels = read_train_set(a.data)
    order = epoch_order(len(labels), a.seed)
    opt = make_optimizer(a.optimizer, module.parameters())
    loss_fn = torch.nn.MSELoss() if a.loss == "mse" else torch.nn.CrossEntropyLoss()
    losses = []
    for step in range(a.steps):
        rows = order[step * a.batch:(step + 1) * a.batch]
        if a.name in export.TOKEN_MODELS:  # each pixel's byte a token id, as dp feeds them
            x = torch.from_numpy(images[rows].astype(np.int64)).reshape((a.batch,) + tuple(shape[1:]))
        else:
            x = torch.from_numpy(images[rows].astype(np.float32) / np.float32(255)).reshape((a.batch,) + tuple(shape[1:]))
        if a.loss == "mse":
            y = torch.from_numpy(labels[rows])
            out = module(x).reshape(a.batch, -1)
        else:
            y = torch.from_numpy(labels[rows].astype(np.int64))
            out = module(x)
        opt.zero_grad()
        loss = loss_fn(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # Where dp's layout of a weight differs beyond a transpose: a Linear after a Flatten of an
    # image takes dp's features in H, W, C order. Found from the shapes the Flatten saw.
    flattened = {}
    seen = {}
    hooks = [m.register_forward_hook(lambda mod, inp, out, n=n: seen.__setitem__(n, tuple(inp[0].shape)))
             for n, m in module.named_modules() if isinstance(m, torch.nn.Flatten)]
    module.eval()
    with torch.no_grad():
        module(torch.zeros((1,) + tuple(shape[1:]),
                           dtype=torch.int64 if a.name in export.TOKEN_MODELS else torch.float32))
    for h in hooks:
        h.remove()
    last_flatten = None
    # An embedding's [N, ..., D] is not an image: dp flattens it in ONNX's order.
    embedded = any(isinstance(m, torch.nn.Embedding) for m in module.modules())
    for n, m in module.named_modules():
        if isinstance(m, torch.nn.Flatten):
            last_flatten = seen.get(n)
        elif isinstance(m, torch.nn.Linear):
            if last_flatten is not None and len(last_flatten) == 4 and not embedded:
                flattened[n + ".weight"] = list(last_flatten[1:])
            last_flatten = None
    tag = a.tag or a.optimizer.split(":")[0]
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"{a.name}-{tag}")
    with open(base + ".json", "w") as f:
        json.dump({"model": a.name + ".onnx", "optimizer": a.optimizer, "loss": a.loss,
                   "steps": a.steps,
                   "data": a.data_note or a.data,
                   "batch": a.batch, "seed": a.seed, "torch": torch.__version__,
                   "shapes": {n: list(v.shape) for n, v in module.state_dict().items()
                              if v.is_floating_point()},
                   "flattened_chw": flattened,
                   # 2-D weights dp holds as PyTorch does (an embedding's [V, D] table), not
                   # transposed as a Linear's.
                   "same_layout": [n + ".weight" for n, m in module.named_modules()
                                   if isinstance(m, torch.nn.Embedding)],
                   # PyTorch's names of weights the exporter renamed, and dp's (the ONNX) names.
                   "onnx_names": module.onnx_names,
                   "losses": losses}, f, indent=1)
        f.write("\n")
    save_params(base + ".params", [(n, v) for n, v in module.state_dict().items()
                                   if v.is_floating_point()])
    print(f"pytorch_steps: {base}.json: losses {losses[0]:.6f} .. {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
