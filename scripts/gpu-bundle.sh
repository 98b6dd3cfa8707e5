#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs to check dp on a GPU machine that cannot build it (no
# MLIR, oneDNN or MPI there): dprun and the GPU test binaries with the shared libraries they
# need beyond glibc and libstdc++, plans compiled here for cpu and cuda, a Fashion-MNIST subset,
# and the CPU backend's results on it (the reference the GPU must match). About 50 MB.
#
# usage: scripts/gpu-bundle.sh [OUT]      (default: gpu-bundle/ in the checkout, git-ignored)
# Needs a build (scripts/build.sh) with the CUDA backend; runs the CPU reference here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
out=${1:-"$root/gpu-bundle"}
data_src=${DP_DATA:-/usr/share/datasets/fashion-mnist}
train_rows=${DP_BUNDLE_TRAIN_ROWS:-12800}

for tool in dpc dprun dprt_gpu_tests dprt_cuda_library_tests; do
  [ -x "$build/bin/$tool" ] || { echo "gpu-bundle: $build/bin/$tool is missing: build with the CUDA toolkit first (bash scripts/build.sh)" >&2; exit 2; }
done
[ -f "$data_src/t10k-images-idx3-ubyte.gz" ] || { echo "gpu-bundle: no Fashion-MNIST in $data_src (scripts/setup.sh installs it)" >&2; exit 2; }

tmp="$out.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,lib,plans,data,expected}

echo "gpu-bundle: binaries and their libraries"
cp "$build"/bin/{dprun,dprt_gpu_tests,dprt_cuda_library_tests} "$tmp/bin/"
# Every library the loader resolves, but glibc's own and the C++ runtime (the GPU machine's are
# newer and must be the ones loaded).
for bin in "$tmp"/bin/*; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$tmp/lib/" ;;
  esac
done

echo "gpu-bundle: data (the first $train_rows training samples, all 10,000 test samples)"
python3 - "$data_src" "$tmp/data" "$train_rows" <<'PY'
import gzip, struct, sys
src, dst, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
for split, keep in (("train", rows), ("t10k", None)):
    for kind, header in (("images-idx3", 16), ("labels-idx1", 8)):
        name = f"{split}-{kind}-ubyte.gz"
        raw = gzip.open(f"{src}/{name}").read()
        count = struct.unpack(">I", raw[4:8])[0]
        n = count if keep is None else min(keep, count)
        item = (len(raw) - header) // count
        out = raw[:4] + struct.pack(">I", n) + raw[8:header] + raw[header:header + n * item]
        with gzip.open(f"{dst}/{name}", "wb", compresslevel=9) as f:
            f.write(out)
PY

echo "gpu-bundle: CIFAR-10-format data for resnet50v2_32 (generated, 64 records a file)"
python3 "$root/test/e2e/make_cifar.py" "$tmp/cifar" --per-file 64

echo "gpu-bundle: plans"
compile() { "$build/bin/dpc" compile "$root/models/$1.mlir" -o "$tmp/plans/$2.dpx" "${@:3}" > /dev/null; }
for model in mnist_mlp mnist_small_cnn mnist_cnn mnist_lstm; do
  compile "$model" "$model-cpu" --device cpu
  compile "$model" "$model-cuda" --device cuda
done
compile resnet50v2_32 resnet50v2_32-cpu --device cpu
compile resnet50v2_32 resnet50v2_32-cuda --device cuda
compile resnet50v2_32 resnet50v2_32-r2-cpu --device cpu --devices-per-process 2
# Two replicas in one process (NCCL over two GPUs), and two processes of one replica each.
compile mnist_cnn mnist_cnn-r2-cpu --device cpu --devices-per-process 2
compile mnist_cnn mnist_cnn-r2-cuda --device cuda --devices-per-process 2
compile mnist_cnn mnist_cnn-p2-cuda --device cuda --processes 2
# The gradient checks' models: smooth (or kink-aware) small graphs whose gradients finite
# differences can judge; whole seed models cannot be (max-pooling and ReLU kinks, dropout).
for model in "$root"/test/e2e/gradcheck/*.mlir; do
  name=$(basename "$model" .mlir)
  "$build/bin/dpc" compile "$model" -o "$tmp/plans/gradcheck-$name-cuda.dpx" --device cuda --quiet
done

echo "gpu-bundle: the CPU backend's reference runs"
reference() { # name plan dprun-args...
  "$build/bin/dprun" "$tmp/plans/$2.dpx" --data "$tmp/data" --seed 1 --quiet \
    --metrics "$tmp/expected/$1.json" "${@:3}" > /dev/null
}
"$build/bin/dprun" "$tmp/plans/resnet50v2_32-cpu.dpx" --data "$tmp/cifar" --seed 1 --quiet \
  --epochs 1 --steps-per-epoch 1 --metrics "$tmp/expected/resnet50v2_32-step1.json" > /dev/null
"$build/bin/dprun" "$tmp/plans/resnet50v2_32-cpu.dpx" --data "$tmp/cifar" --seed 1 --quiet \
  --epochs 1 --steps-per-epoch 1 --save-params "$tmp/resnet.params" > /dev/null
# 94 MB of parameters: 1,024 evenly spaced values of each travel.
python3 "$root/test/e2e/compare_params.py" "$tmp/resnet.params" --sample 1024 \
  "$tmp/expected/resnet50v2_32-step1.params"
# The model's own sensitivity to rounding: the same step on two CPU replicas (a different but
# equally exact reduction order) moves the early batch norms' betas by a few percent.
"$build/bin/dprun" "$tmp/plans/resnet50v2_32-r2-cpu.dpx" --data "$tmp/cifar" --seed 1 --quiet \
  --epochs 1 --steps-per-epoch 1 --save-params "$tmp/resnet.params" > /dev/null
python3 "$root/test/e2e/compare_params.py" "$tmp/resnet.params" --sample 1024 \
  "$tmp/expected/resnet50v2_32-r2-step1.params"
rm "$tmp/resnet.params"
for model in mnist_mlp mnist_small_cnn mnist_cnn mnist_lstm; do
  reference "$model-step1" "$model-cpu" --epochs 1 --steps-per-epoch 1
  reference "$model-steps40" "$model-cpu" --epochs 1 --steps-per-epoch 40
done
reference mnist_cnn-epoch "mnist_cnn-cpu" --epochs 1
reference mnist_cnn-r2-steps40 "mnist_cnn-r2-cpu" --epochs 1 --steps-per-epoch 40

cp "$root/scripts/gpu-check.sh" "$tmp/"
cp "$root"/test/e2e/{compare_params.py,params_file.py} "$tmp/bin/"
mkdir -p "$tmp/bench" && cp "$root"/bench/peers/{torch_peer.py,common.py} "$tmp/bench/"
git -C "$root" rev-parse --short HEAD > "$tmp/REVISION" 2>/dev/null || echo unknown > "$tmp/REVISION"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "gpu-bundle: $(du -sh "$out" | cut -f1) in $out; on a GPU machine: bash $out/gpu-check.sh"
