#!/usr/bin/env bash
# Creates bench/.venv (gitignored) with the benchmark peers: CPU PyTorch, TensorFlow (CPU, with
# Keras 3) and numpy; and ONNX's Python tools for PyTorch's exporters, Keras's converter and the
# ONNX peers (onnx, onnxscript, tf2onnx, onnxruntime: models/onnx/export.py).
# Idempotent: exits at once when the venv already has a working torch and tensorflow of the pinned
# versions; installs only what is missing or broken.
#
# Usage: bench/setup.sh   (env: TORCH_VERSION, TF_VERSION, BENCH_TF=0 to skip TensorFlow,
#                          BENCH_ONNX=0 to skip the ONNX tools, PYTHON, TORCH_INDEX_URL, BENCH_VENV)
#
# ONNX tools (2026-11): onnx 1.23.2, onnxscript 0.7.2 (torch.onnx.export needs both, the
# default exporter onnxscript), onnxruntime 1.32.0 and tf2onnx 1.17.0 (Keras models to ONNX,
# docs/onnx.md) from PyPI: ~90 MB installed.
#
# TensorFlow (measured 2026-11, Python 3.11, x86_64): PyPI's `tensorflow-cpu==2.21.0`
# (tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl, 274 MB download, 1.3 GB
# installed; with keras 3.15, grpcio, h5py, ml_dtypes, protobuf, ...: ~25 s here) installs
# beside torch in the same venv without touching it (numpy 2.x is shared). CPU only, oneDNN
# kernels on by default. `import tensorflow` takes ~4 s and ~490 MB RSS.
#
# How torch gets installed, and why (measured 2026-10, torch 2.15.0, Python 3.11, x86_64):
#  * PyTorch's own CPU-only wheel index is NOT reachable from this workplace (only PyPI and
#    Debian are; DNS for it fails). If you are somewhere it is, set TORCH_INDEX_URL to that
#    index (its /whl/cpu) and this script installs `torch==$TORCH_VERSION` from it with
#    --no-deps (a few hundred MB, no CUDA at all) and the rest from PyPI.
#  * PyPI only has the CUDA build for linux x86_64. `pip install torch` from PyPI pulls
#    cuda-toolkit, cudnn, cublas, nccl, nvshmem, cusparselt, triton, ...: 5.4 GB installed
#    (torch 1.2 GB + nvidia 3.0 GB + triton 1.0 GB), ~1.5 min to install here.
#  * Lighter path, used first: the PyPI torch wheel alone (`--no-deps`, 514 MB download,
#    1.2 GB installed) plus its pure-Python deps. Its libs link against the CUDA runtime libs
#    (libcudart, libcublas, libcudnn, ...); on this machine kind the system CUDA 13 toolkit in
#    /usr/local/cuda-13.0/lib (on the loader path) provides most of them, and only four small
#    packages are still needed: nvidia-cufile, nvidia-cusparselt-cu13, nvidia-nvshmem-cu13 and
#    nvidia-nccl-cu13 (the system NCCL is too old: undefined symbol ncclCommResume).
#    Total venv: ~2.1 GB. Nothing CUDA is ever *used*: the benchmark is CPU-only, and torch runs
#    on the CPU path (MKL + oneDNN, AVX-512 here) exactly as in the full install. Side effect:
#    `import torch` maps the CUDA build's libraries, so PyTorch's baseline RSS is ~490 MB
#    (a CPU-only wheel would be lower); bench/run.py reports the after-import RSS next to peak.
#  * If the lean install does not import (no system CUDA toolkit), the script falls back to
#    the full PyPI install with all its dependencies.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${BENCH_VENV:-$HERE/.venv}"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="${TORCH_VERSION:-2.15.0}"
TF_VERSION="${TF_VERSION:-2.21.0}"
BENCH_TF="${BENCH_TF:-1}"
BENCH_ONNX="${BENCH_ONNX:-1}"
ONNX_PINS=(onnx==1.23.2 onnxscript==0.7.2 onnxruntime==1.32.0 tf2onnx==1.17.0)
PY="$VENV/bin/python"
PIP=("$PY" -m pip --disable-pip-version-check --no-cache-dir -q)

# A working torch: imports, runs a matmul and a backward on the CPU, has the pinned version.
check() {
  [ -x "$PY" ] || return 1
  "$PY" - "$TORCH_VERSION" <<'EOF' 2>/dev/null
import sys
import numpy, torch
want = sys.argv[1]
assert torch.__version__.split("+")[0] == want, (torch.__version__, want)
a = torch.randn(2, 2, requires_grad=True)
(a @ torch.randn(2, 2)).sum().backward()
assert a.grad is not None and numpy.asarray([1.0]).sum() == 1.0
print(f"setup: torch {torch.__version__} (threads {torch.get_num_threads()}), numpy {numpy.__version__} OK in {sys.prefix}")
EOF
}

# A working TensorFlow: imports with Keras 3, runs a gradient on the CPU, has the pinned version.
check_tf() {
  [ "$BENCH_TF" = 0 ] && return 0
  [ -x "$PY" ] || return 1
  TF_CPP_MIN_LOG_LEVEL=2 "$PY" - "$TF_VERSION" <<'EOF' 2>/dev/null
import sys
import tensorflow as tf, keras
want = sys.argv[1]
assert tf.__version__ == want, (tf.__version__, want)
x = tf.Variable([[1.0, 2.0]])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.matmul(x, tf.ones((2, 2))))
assert tape.gradient(y, x) is not None
print(f"setup: tensorflow {tf.__version__} (keras {keras.__version__}) OK in {sys.prefix}")
EOF
}

# TensorFlow CPU from PyPI (after torch; its own dependencies, numpy already there).
install_tf() {
  [ "$BENCH_TF" = 0 ] && return 0
  check_tf && return 0
  echo "setup: installing tensorflow-cpu==$TF_VERSION from PyPI (~274 MB wheel, 1.3 GB installed)"
  "${PIP[@]}" install "tensorflow-cpu==$TF_VERSION"
  if check_tf; then
    echo "setup: tensorflow works ($(du -sh "$VENV" | cut -f1) in $VENV)"
    return 0
  fi
  echo "setup: tensorflow does not work:" >&2
  "$PY" -c 'import tensorflow' >&2 || true
  return 1
}

# ONNX's Python tools: import, and have the pinned versions.
check_onnx() {
  [ "$BENCH_ONNX" = 0 ] && return 0
  [ -x "$PY" ] || return 1
  "$PY" - "${ONNX_PINS[@]}" <<'EOF' 2>/dev/null
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    assert metadata.version(name) == version, (name, metadata.version(name), version)
import onnx, onnxscript, onnxruntime
print(f"setup: onnx {onnx.__version__}, onnxscript {onnxscript.__version__}, onnxruntime {onnxruntime.__version__} OK")
EOF
}

install_onnx() {
  [ "$BENCH_ONNX" = 0 ] && return 0
  check_onnx && return 0
  echo "setup: installing ${ONNX_PINS[*]} from PyPI"
  "${PIP[@]}" install "${ONNX_PINS[@]}"
  check_onnx || { echo "setup: the ONNX tools do not import" >&2; return 1; }
}

# The peers beside torch.
install_rest() {
  install_tf && install_onnx
}

if check; then
  install_rest
  exit $?
fi

if [ ! -x "$PY" ]; then
  echo "setup: creating venv $VENV"
  "$PYTHON" -m venv "$VENV"
fi
"${PIP[@]}" install numpy

if [ -n "${TORCH_INDEX_URL:-}" ]; then
  echo "setup: installing torch==$TORCH_VERSION (no deps) from $TORCH_INDEX_URL"
  "${PIP[@]}" install --no-deps "torch==$TORCH_VERSION" --index-url "$TORCH_INDEX_URL"
else
  echo "setup: installing torch==$TORCH_VERSION from PyPI without its CUDA dependencies"
  "${PIP[@]}" install --no-deps "torch==$TORCH_VERSION"
fi
# torch's own non-CUDA requirements (installed with their deps), then the few CUDA packages a
# system toolkit lacks (without theirs), pinned as torch's metadata pins them.
PYDEPS=(); CUDADEPS=()
while read -r kind spec; do
  case "$kind" in
    py) PYDEPS+=("$spec") ;;
    cuda) CUDADEPS+=("$spec") ;;
  esac
done < <("$PY" - <<'EOF'
import re
from importlib import metadata
extra_cuda = ("nvidia-cusparselt", "nvidia-nvshmem", "nvidia-nccl")
for req in metadata.requires("torch") or []:
    spec, _, marker = req.partition(";")
    spec = spec.strip()
    if "extra ==" in marker:
        continue
    name = re.match(r"[A-Za-z0-9_.\-]+", spec).group(0).lower()
    if name.startswith(("nvidia-", "cuda-", "triton")):
        if name.startswith(extra_cuda):
            print("cuda", spec)
        elif name == "cuda-toolkit" and "cufile" in spec:
            print("cuda nvidia-cufile")  # libcufile.so.0 (via cuda-toolkit[cufile] in full)
        continue
    print("py", spec)
EOF
)
echo "setup: installing ${PYDEPS[*]}"
echo "setup: (pip will complain that torch's CUDA requirements are not installed: expected)"
"${PIP[@]}" install "${PYDEPS[@]}"
if [ ${#CUDADEPS[@]} -gt 0 ]; then
  echo "setup: installing (no deps) ${CUDADEPS[*]}"
  "${PIP[@]}" install --no-deps "${CUDADEPS[@]}"
fi
if check; then
  echo "setup: lean torch install works ($(du -sh "$VENV" | cut -f1) in $VENV)"
  install_rest
  exit $?
fi

echo "setup: lean torch does not import here (no system CUDA toolkit?); installing torch with all its PyPI dependencies (~5.4 GB)" >&2
"$PY" -c 'import torch' 2>&1 | tail -1 >&2 || true
"${PIP[@]}" install "torch==$TORCH_VERSION"
if check; then
  echo "setup: full torch install works ($(du -sh "$VENV" | cut -f1) in $VENV)"
  install_rest
  exit $?
fi
echo "setup: torch still does not work:" >&2
"$PY" -c 'import torch; torch.randn(2, 2) @ torch.randn(2, 2)' >&2
exit 1
