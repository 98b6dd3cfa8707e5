#!/usr/bin/env bash
# Installs every build, test and demo dependency of dp from Debian's packages, and, where the
# CUDA toolkit is installed, cuobjdump from PyPI (the toolkit here ships none) for the CUDA
# kernels' static gates, into .tools/ of the checkout.
# Idempotent: what is already present is left alone. Must run as root (or via sudo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# cuobjdump reads the built CUDA kernels: SASS and PTX present, registers, stack, spills.
CUOBJDUMP_VERSION=13.5.37
if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -x "$root/.tools/cuobjdump/nvidia/cu13/bin/cuobjdump" ]; then
  echo "setup: installing cuobjdump (nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION) into .tools/"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$root/.tools/cuobjdump" "nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION" 2>&1 |
    grep -v "Running pip as the 'root' user" || true
  # Without PyPI the build still works; the static gate that needs it reports itself skipped.
  [ -x "$root/.tools/cuobjdump/nvidia/cu13/bin/cuobjdump" ] ||
    echo "setup: warning: cuobjdump could not be installed; ctest's cuda_kernel_resources will be skipped" >&2
fi

# onnxruntime: the tests check that a model dp exports, or imports, predicts in ONNX's own
# runtime what dp predicts (test/onnx/onnxruntime.test). Into .tools/python (PYTHONPATH),
# pinned; about 160 MB.
ORT_VERSION=1.32.0 NUMPY_VERSION=2.3.5
if ! PYTHONPATH="$root/.tools/python" python3 -c "import onnxruntime as o, numpy as n
assert o.__version__ == '$ORT_VERSION' and n.__version__ == '$NUMPY_VERSION'" 2>/dev/null; then
  echo "setup: installing onnxruntime==$ORT_VERSION and numpy==$NUMPY_VERSION into .tools/python"
  rm -rf "$root/.tools/python"
  python3 -m pip install --quiet --disable-pip-version-check --target "$root/.tools/python" \
    "onnxruntime==$ORT_VERSION" "numpy==$NUMPY_VERSION" 2>&1 |
    grep -v "Running pip as the 'root' user" || true
  PYTHONPATH="$root/.tools/python" python3 -c "import onnxruntime" 2>/dev/null ||
    echo "setup: warning: onnxruntime could not be installed; test/onnx/onnxruntime.test will be skipped" >&2
fi

# The readers of the files dprun writes for other tools: TensorBoard's own event reader (with
# absl-py, which it imports) for --tensorboard, and safetensors' for --save-params. Into
# .tools/peers (PYTHONPATH, beside .tools/python's numpy and protobuf), pinned, without their
# servers' dependencies; about 15 MB.
TB_VERSION=2.21.0 ABSL_VERSION=2.5.1 SAFETENSORS_VERSION=0.8.0
if ! PYTHONPATH="$root/.tools/peers:$root/.tools/python" python3 -c "import tensorboard, absl, safetensors
assert tensorboard.__version__ == '$TB_VERSION' and safetensors.__version__ == '$SAFETENSORS_VERSION'" 2>/dev/null; then
  echo "setup: installing tensorboard==$TB_VERSION, absl-py==$ABSL_VERSION and safetensors==$SAFETENSORS_VERSION into .tools/peers"
  rm -rf "$root/.tools/peers"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$root/.tools/peers" \
    "tensorboard==$TB_VERSION" "absl-py==$ABSL_VERSION" "safetensors==$SAFETENSORS_VERSION" 2>&1 |
    grep -v "Running pip as the 'root' user" || true
  PYTHONPATH="$root/.tools/peers:$root/.tools/python" python3 -c "import tensorboard, safetensors" 2>/dev/null ||
    echo "setup: warning: tensorboard or safetensors could not be installed; the tests that read their files will be skipped" >&2
fi

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git python3
  clang-19 libclang-rt-19-dev libomp-19-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libdnnl-dev
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev
  zlib1g-dev
  libonnx-dev libprotobuf-dev # dpc import: ONNX's C++ library (1.12: opsets to 17, IR 8)
  libonnx-testdata            # ONNX's operator conformance tests (data/node/*)
  dataset-fashion-mnist
  openmpi-bin libopenmpi-dev libpmix-dev slurm-wlm munge
  python3-matplotlib # bench/dist.py --plot
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: needs root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
