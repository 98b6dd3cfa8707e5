"""Shared by the benchmark peers (torch_peer.py, keras_peer.py): the model table, the IDX reader,
the command line and the result line. numpy only (imported where used, so that bench/run.py, which
needs only the standard library, can read the model table); no framework is imported here.

The models are the seed models of models/*.mlir, restated (Keras layouts: NHWC images,
glorot_uniform kernels, zero biases; LSTMs as Keras: i, f, c, o gates, orthogonal recurrent
kernel, unit forget bias, input dropout with one mask for all time steps).
"""
import argparse
import gzip
import math
import os
import resource

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"

# name -> trainable parameters (asserted by both peers), static batch, optimizer, lr, input view.
MODELS = {
    "mnist_mlp": {"params": 79_510, "batch": 100, "optimizer": "sgd", "lr": 0.5, "input": "flat"},
    "mnist_small_cnn": {"params": 121_930, "batch": 64, "optimizer": "adam", "lr": 1e-3,
                        "input": "image"},
    "mnist_cnn": {"params": 690_590, "batch": 128, "optimizer": "adam", "lr": 1e-3,
                  "input": "image"},
    "mnist_lstm": {"params": 1_476_618, "batch": 128, "optimizer": "sgd", "lr": 0.01,
                   "input": "sequence"},
    # Keras's ResNet50V2 (classes=10) on 32x32x3 CIFAR-10 images (23,585,290 parameters with
    # the batch normalisations' moving statistics).
    "resnet50v2_32": {"params": 23_539_850, "batch": 16, "optimizer": "sgd", "lr": 0.01,
                      "input": "cifar"},
    # ONNX models of models/onnx/ (export.py): dp compiles the file, PyTorch trains export.py's
    # module with the file's initial weights (pytorch_steps.load_module). Images NCHW.
    "onnx_resnet18": {"params": 395_350, "batch": 32, "optimizer": "sgd", "lr": 0.01,
                      "input": "cifar", "onnx": "resnet18"},
    "onnx_vit": {"params": 474_122, "batch": 64, "optimizer": "adam", "lr": 1e-3,
                 "input": "image", "onnx": "vit"},
}
# Keras's Adam defaults (dp's #graph.adam in the seed models uses the same).
ADAM = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-7}
# Test-set evaluation batch (outside the timed region). mnist_mlp evaluates the whole test set in
# one batch (as the original torch_mlp.py did); the conv/LSTM models in slices of this size so the
# activations of 10,000 images at once (865 MB for mnist_cnn's first conv) do not set peak RSS.
EVAL_BATCH = 1000


def read_idx(path):
    """Reads an IDX file (optionally gzipped) into a numpy array of its declared shape."""
    import numpy as np
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
    """(images as float32 [N, 784] scaled to [0, 1], labels as int64 [N]) as numpy arrays."""
    import numpy as np
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{prefix}: {x.shape[0]} images but {y.shape[0]} labels")
    xf = x.reshape(x.shape[0], -1).astype(np.float32)
    xf /= np.float32(255.0)  # in place: no second copy of the images
    return xf, y.astype(np.int64)


CIFAR_RECORD = 1 + 3 * 32 * 32  # a label byte, then the red, green and blue planes
CIFAR_TRAIN = [f"data_batch_{i}.bin" for i in range(1, 6)]
CIFAR_TEST = "test_batch.bin"


def cifar_dir(data_dir):
    """The folder holding the CIFAR-10 binary batches: data_dir or its cifar-10-batches-bin."""
    nested = os.path.join(data_dir, "cifar-10-batches-bin")
    return nested if os.path.isfile(os.path.join(nested, CIFAR_TEST)) else data_dir


def load_cifar(data_dir, split):
    """CIFAR-10 binary batches as dprun reads them: (images as float32 [N, 3072], each 32x32x3
    HWC scaled to [0, 1], labels as int64 [N]). split: "train" (data_batch_1..5) or "t10k"."""
    import numpy as np
    folder = cifar_dir(data_dir)
    names = CIFAR_TRAIN if split == "train" else [CIFAR_TEST]
    parts = []
    for name in names:
        path = os.path.join(folder, name)
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size == 0 or raw.size % CIFAR_RECORD:
            raise ValueError(f"{path}: not a whole number of {CIFAR_RECORD}-byte records")
        parts.append(raw.reshape(-1, CIFAR_RECORD))
    records = np.concatenate(parts)
    labels = records[:, 0].astype(np.int64)
    if labels.size and labels.max() >= 10:
        raise ValueError(f"{folder}: a label above 9")
    hwc = records[:, 1:].reshape(-1, 3, 32 * 32).transpose(0, 2, 1).reshape(-1, 3 * 32 * 32)
    xf = hwc.astype(np.float32)
    xf /= np.float32(255.0)
    return xf, labels


def load_data(data_dir, model, split):
    """The model's data set: CIFAR-10 for the CIFAR models, else Fashion-MNIST (IDX files)."""
    if MODELS[model]["input"] == "cifar":
        return load_cifar(data_dir, split)
    return load_split(data_dir, split)


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


def parse_args(doc):
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="mnist_mlp")
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=None, help="default: the model's")
    ap.add_argument("--optimizer", choices=["sgd", "adam"], default=None,
                    help="default: the model's (Adam with Keras's defaults)")
    ap.add_argument("--lr", type=float, default=None, help="default: the model's")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="compute threads (default: all cores)")
    ap.add_argument("--max-steps", type=int, default=0,
                    help="at most this many train steps per epoch, as dprun (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="where the peer trains (cuda: PyTorch only)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the framework's own mixed precision (PyTorch autocast to "
                         "bfloat16, Keras's mixed_bfloat16 policy)")
    ap.add_argument("--compile", action="store_true",
                    help="PyTorch only: train the torch.compile'd model (the first epoch "
                         "includes the compilation)")
    args = ap.parse_args()
    m = MODELS[args.model]
    if args.batch is None:
        args.batch = m["batch"]
    if args.optimizer is None:
        args.optimizer = m["optimizer"]
    if args.lr is None:
        args.lr = m["lr"]
    if args.epochs < 1 or args.batch < 1 or args.threads < 1:
        ap.error("--epochs, --batch and --threads must be >= 1")
    return ap, args


def steps_per_epoch(ap, n, args):
    steps = n // args.batch  # full batches only, as dprun
    if args.max_steps:
        steps = min(steps, args.max_steps)
    if steps < 1:
        ap.error(f"--batch {args.batch} is larger than the training set ({n})")
    return steps


def check_params(model_name, count):
    want = MODELS[model_name]["params"]
    assert count == want, f"{model_name}: {count} trainable parameters, the table says {want}"
