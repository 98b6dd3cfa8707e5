#!/usr/bin/env python3
"""PyTorch peer for dp's benchmarks (CPU or CUDA, eager or torch.compile): the seed models of
models/*.mlir.

Models (--model; layer tables in bench/README.md, parameter counts asserted):
  mnist_mlp        784 -> dense 100 sigmoid -> dense 10; plain SGD (default lr 0.5), batch 100
  mnist_small_cnn  conv3x3 32 relu, maxpool 2, conv3x3 64 relu, maxpool 2, flatten, dense 64 relu,
                   dense 10; Adam, batch 64
  mnist_cnn        conv3x3 32/128/256 relu each + maxpool 2, flatten (256), dropout 0.5,
                   dense 1000 relu, dense 100 relu, dense 10; Adam, batch 128
  mnist_lstm       28 steps x 28 features -> LSTM 256 (sequences) -> LSTM 256 (input dropout 0.2,
                   sequences) -> LSTM 256 (input dropout 0.2, last step) -> dense 256 relu,
                   dropout 0.2, dense 256 relu, dropout 0.2, dense 10; SGD lr 0.01, batch 128
Softmax cross-entropy on the logits (mean over the batch), fp32, Keras-like init (Glorot-uniform
kernels, zero biases; LSTM: orthogonal recurrent kernels, forget-gate bias 1), Adam with Keras's
defaults (lr 0.001, betas 0.9/0.999, eps 1e-7). Images are 1x28x28 (NCHW, PyTorch's default
layout; with one channel the same bytes as NHWC).

Data: Fashion-MNIST read straight from the IDX .gz files, pixels / 255; pre-loaded as tensors
before any timing. Each epoch visits the training set in a fresh permutation drawn from a seeded
generator, in full batches only: the samples left over after the last full batch are skipped for
that epoch (as dprun does).

Timing: whole epochs, wall clock (time.perf_counter) around the training loop only -- the
permutation, batch gather, forward, loss, backward, optimizer step and the per-step train metrics
(loss sum and correct count, which dp's train step also produces). Data loading, model creation
and the test evaluation are outside the timed region. No warm-up steps are excluded; per-epoch
times are reported so a reader can drop epoch 1.

On --device cuda the data set is moved to the GPU once, before any timing, and each epoch's
time ends with torch.cuda.synchronize(); fp32 throughout (TF32 off for products and
convolutions, as dp's default). --compile trains torch.compile(model).

Data parallel (DistributedDataParallel over gloo, CPU): started once per rank with the
environment torch.distributed reads (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; bench/dist.py
does this), every rank draws the same permutation and takes its contiguous 1/WORLD_SIZE of each
global batch of --batch samples; DDP averages the gradients. Samples and samples/s count the
global batch; the loss and accuracy printed are rank 0's rows; rank 0 evaluates and prints the
JSON line.

Prints exactly one JSON line on stdout at the end (anything else goes to stderr).
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

import common


def keras_init(module):
    """Glorot-uniform weights and zero biases for Linear/Conv2d layers (Keras defaults)."""
    for m in module.modules():
        if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)):
            torch.nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                torch.nn.init.zeros_(m.bias)


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


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3)
        self.conv2 = torch.nn.Conv2d(32, 64, 3)
        self.fc1 = torch.nn.Linear(5 * 5 * 64, 64)
        self.fc2 = torch.nn.Linear(64, 10)
        keras_init(self)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3)
        self.conv2 = torch.nn.Conv2d(32, 128, 3)
        self.conv3 = torch.nn.Conv2d(128, 256, 3)
        self.drop = torch.nn.Dropout(0.5)
        self.fc1 = torch.nn.Linear(256, 1000)
        self.fc2 = torch.nn.Linear(1000, 100)
        self.fc3 = torch.nn.Linear(100, 10)
        keras_init(self)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.max_pool2d(F.relu(self.conv3(x)), 2)
        x = self.drop(torch.flatten(x, 1))
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class KerasLSTM(torch.nn.Module):
    """One Keras LSTM layer: nn.LSTM with Keras's init and a single bias (bias_hh is held at zero
    and not trained: i, f, g, o gates are Keras's i, f, c, o), and Keras's `dropout`: a mask on the
    layer's inputs, drawn once per sequence and shared by all time steps."""

    def __init__(self, n_in, units, dropout=0.0, return_sequences=True):
        super().__init__()
        self.lstm = torch.nn.LSTM(n_in, units, batch_first=True)
        self.dropout, self.return_sequences = dropout, return_sequences
        torch.nn.init.xavier_uniform_(self.lstm.weight_ih_l0)   # Keras kernel: glorot_uniform
        torch.nn.init.orthogonal_(self.lstm.weight_hh_l0)       # recurrent_kernel: orthogonal
        with torch.no_grad():
            self.lstm.bias_ih_l0.zero_()
            self.lstm.bias_ih_l0[units:2 * units] = 1.0          # unit_forget_bias
            self.lstm.bias_hh_l0.zero_()
        self.lstm.bias_hh_l0.requires_grad_(False)

    def forward(self, x):
        if self.training and self.dropout > 0:
            keep = 1.0 - self.dropout
            mask = torch.empty(x.shape[0], 1, x.shape[2], dtype=x.dtype, device=x.device).bernoulli_(keep)
            x = x * (mask / keep)
        out, (h, _) = self.lstm(x)
        return out if self.return_sequences else h[-1]


class LSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = KerasLSTM(28, 256)
        self.l2 = KerasLSTM(256, 256, dropout=0.2)
        self.l3 = KerasLSTM(256, 256, dropout=0.2, return_sequences=False)
        self.fc1 = torch.nn.Linear(256, 256)
        self.fc2 = torch.nn.Linear(256, 256)
        self.fc3 = torch.nn.Linear(256, 10)
        self.drop = torch.nn.Dropout(0.2)
        for layer in (self.fc1, self.fc2, self.fc3):
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, x):
        x = self.l3(self.l2(self.l1(x)))
        x = self.drop(F.relu(self.fc1(x)))
        x = self.drop(F.relu(self.fc2(x)))
        return self.fc3(x)


def keras_bn(channels):
    """Keras's BatchNormalization as ResNetV2 builds it: epsilon 1.001e-5, momentum 0.99."""
    return torch.nn.BatchNorm2d(channels, eps=1.001e-5, momentum=0.01)


class PreactBlock(torch.nn.Module):
    """Keras's ResNetV2 bottleneck block (block2): BN, relu, then conv 1x1, BN, relu, zero-pad
    1, conv 3x3 with the block's stride, BN, relu, conv 1x1 to 4 x filters; the shortcut is a
    1x1 conv of the pre-activation (a stack's first block), a 1x1 max-pool with the stride of
    the input, or the input."""

    def __init__(self, cin, filters, stride=1, conv_shortcut=False):
        super().__init__()
        self.stride = stride
        self.preact = keras_bn(cin)
        self.shortcut = torch.nn.Conv2d(cin, 4 * filters, 1, stride=stride) if conv_shortcut else None
        self.conv1 = torch.nn.Conv2d(cin, filters, 1, bias=False)
        self.bn1 = keras_bn(filters)
        self.conv2 = torch.nn.Conv2d(filters, filters, 3, stride=stride, padding=1, bias=False)
        self.bn2 = keras_bn(filters)
        self.conv3 = torch.nn.Conv2d(filters, 4 * filters, 1)

    def forward(self, x):
        pre = F.relu(self.preact(x))
        if self.shortcut is not None:
            short = self.shortcut(pre)
        elif self.stride > 1:
            short = F.max_pool2d(x, 1, self.stride)
        else:
            short = x
        y = F.relu(self.bn1(self.conv1(pre)))
        y = F.relu(self.bn2(self.conv2(y)))
        return short + self.conv3(y)


class ResNet50V2(torch.nn.Module):
    """Keras's ResNet50V2 (weights=None, include_top=True, classes=10) on 32x32x3 images: stem
    zero-pad 3, conv 7x7/2 (64), zero-pad 1, max-pool 3x3/2; stacks of 3, 4, 6, 3 blocks with 64,
    128, 256, 512 filters (the last block of each stack but the fourth has stride 2); BN, relu,
    global average pool, dense 10."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 64, 7, stride=2)
        blocks, cin = [], 64
        for filters, count, stride in ((64, 3, 2), (128, 4, 2), (256, 6, 2), (512, 3, 1)):
            for i in range(count):
                blocks.append(PreactBlock(cin, filters, stride if i == count - 1 else 1,
                                          conv_shortcut=i == 0))
                cin = 4 * filters
        self.blocks = torch.nn.Sequential(*blocks)
        self.post = keras_bn(cin)
        self.fc = torch.nn.Linear(cin, 10)
        keras_init(self)

    def forward(self, x):
        x = self.stem(F.pad(x, (3, 3, 3, 3)))
        x = F.max_pool2d(F.pad(x, (1, 1, 1, 1)), 3, 2)  # Keras pads with zeros, not -inf
        x = F.relu(self.post(self.blocks(x)))
        return self.fc(x.mean((2, 3)))


BUILDERS = {"mnist_mlp": MLP, "mnist_small_cnn": SmallCNN, "mnist_cnn": CNN, "mnist_lstm": LSTM,
            "resnet50v2_32": ResNet50V2}
ONNX_MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "models", "onnx")
VIEWS = {"flat": lambda x: x, "image": lambda x: x.view(-1, 1, 28, 28),
         "sequence": lambda x: x.view(-1, 28, 28),
         "cifar": lambda x: x.view(-1, 32, 32, 3).permute(0, 3, 1, 2).contiguous()}


def main():
    ap, args = common.parse_args(__doc__)
    spec = common.MODELS[args.model]
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        if args.device != "cpu" or args.compile:
            ap.error("data parallel runs on the CPU, eager")
        if args.batch % world:
            ap.error(f"--batch {args.batch} does not split into {world} equal shards")
        import torch.distributed as dist
        dist.init_process_group("gloo", rank=rank, world_size=world)
    shard = args.batch // world

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rss_import_mb = common.vm_hwm_mb()

    view = VIEWS[spec["input"]]
    x_train, y_train = (torch.from_numpy(a).contiguous() for a in common.load_data(args.data, args.model, "train"))
    x_test, y_test = (torch.from_numpy(a).contiguous() for a in common.load_data(args.data, args.model, "t10k"))
    x_train, x_test = view(x_train), view(x_test)
    device = torch.device(args.device)
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("torch_peer: --device cuda, but PyTorch sees no GPU")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        x_train, y_train = x_train.to(device), y_train.to(device)
        x_test, y_test = x_test.to(device), y_test.to(device)
    rss_data_mb = common.vm_hwm_mb()

    if spec.get("onnx"):
        # The module export.py wrote to models/onnx/<name>.onnx, with the file's weights.
        sys.path.insert(0, ONNX_MODELS)
        import pytorch_steps
        model = pytorch_steps.load_module(spec["onnx"], ONNX_MODELS)[0]
    elif args.model == "mnist_mlp":
        model = MLP(n_in=x_train.shape[1])
    else:
        model = BUILDERS[args.model]()
    model = model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)
    print(f"{args.model}: {n_params:,} trainable parameters", file=sys.stderr)
    common.check_params(args.model, n_params)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=args.lr)
    else:
        opt = torch.optim.Adam(params, lr=args.lr, betas=(common.ADAM["beta1"], common.ADAM["beta2"]),
                               eps=common.ADAM["eps"])
    gen = torch.Generator().manual_seed(args.seed)
    step_model = torch.compile(model) if args.compile else model
    if world > 1:
        step_model = torch.nn.parallel.DistributedDataParallel(model)

    n = x_train.shape[0]
    steps = common.steps_per_epoch(ap, n, args)
    epochs = []
    total_steps = 0
    total_samples = 0
    total_seconds = 0.0
    model.train()
    for epoch in range(1, args.epochs + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        perm = torch.randperm(n, generator=gen).to(device)
        loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        correct = torch.zeros((), dtype=torch.int64, device=device)
        seen = 0
        for s in range(steps):
            idx = perm[s * args.batch + rank * shard:s * args.batch + (rank + 1) * shard]
            xb = x_train.index_select(0, idx)
            yb = y_train.index_select(0, idx)
            with torch.autocast(args.device, dtype=torch.bfloat16,
                                enabled=args.precision == "bf16"):
                logits = step_model(xb)
                loss = F.cross_entropy(logits, yb)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            with torch.no_grad():
                loss_sum += loss.detach() * yb.shape[0]
                correct += (logits.detach().argmax(1) == yb).sum()
            seen += yb.shape[0]
            total_steps += 1
        seen *= world  # the global batch's samples; the loss and accuracy are this rank's
        if args.device == "cuda":
            torch.cuda.synchronize()
        loss_v = loss_sum.item()
        correct_v = correct.item()
        sec = time.perf_counter() - t0
        cpu = time.process_time() - c0
        if seen:
            local = seen // world
            epochs.append({"epoch": epoch, "loss": loss_v / local,
                           "train_accuracy": correct_v / local,
                           "seconds": sec, "samples": seen, "samples_per_sec": seen / sec,
                           "steps": steps, "ms_per_step": 1e3 * sec / steps,
                           "cpu_seconds": cpu})
            total_samples += seen
            total_seconds += sec
            print(f"epoch {epoch}: loss {loss_v / local:.4f} acc {correct_v / local:.4f} "
                  f"{sec:.3f}s {seen / sec:.0f} samples/s {1e3 * sec / steps:.2f} ms/step "
                  f"({cpu / sec:.2f} cores busy)",
                  file=sys.stderr)

    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
        if rank != 0:
            # gloo's threads can abort the interpreter's exit ("terminate called without an
            # active exception"): end at once, nothing is left to write.
            sys.stdout.flush()
            os._exit(0)
    model.eval()
    with torch.no_grad(), torch.autocast(args.device, dtype=torch.bfloat16,
                                         enabled=args.precision == "bf16"):
        if args.model == "mnist_mlp":  # one batch, as the original MLP peer
            test_acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        else:
            hits = 0
            for i in range(0, x_test.shape[0], common.EVAL_BATCH):
                xs, ys = x_test[i:i + common.EVAL_BATCH], y_test[i:i + common.EVAL_BATCH]
                hits += (model(xs).argmax(1) == ys).sum().item()
            test_acc = hits / x_test.shape[0]

    print(json.dumps({
        "framework": "pytorch-compile" if args.compile else "pytorch",
        "precision": args.precision,
        "world_size": world,
        "device": args.device,
        "version": torch.__version__,
        "model": args.model,
        "params": n_params,
        "samples_per_sec": total_samples / total_seconds if total_seconds > 0 else 0.0,
        "seconds": total_seconds,
        "steps": total_steps,
        "samples": total_samples,
        "test_accuracy": test_acc,
        "peak_rss_mb": common.vm_hwm_mb(),
        "rss_after_import_mb": rss_import_mb,
        "rss_after_data_mb": rss_data_mb,
        "threads": torch.get_num_threads(),
        "batch": args.batch,
        "optimizer": args.optimizer,
        "lr": args.lr,
        "seed": args.seed,
        "epochs": epochs,
    }))
    if world > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
