#!/usr/bin/env bash
# The main job: installs and builds dp, compiles the seed MLP and trains it data-parallel-ready
# on Fashion-MNIST for 2 epochs, printing per-epoch progress and the test accuracy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DP_DATA:-/usr/share/datasets/fashion-mnist}
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
out="$root/build/demo"
mkdir -p "$out"
"$root/build/bin/dpc" summary "$root/models/mnist_mlp.mlir"
"$root/build/bin/dpc" compile "$root/models/mnist_mlp.mlir" -o "$out/mnist_mlp.dpx" --dump-dir "$out/dumps"
"$root/build/bin/dprun" "$out/mnist_mlp.dpx" --data "$data" --epochs "${DP_EPOCHS:-2}" --metrics "$out/metrics.json"
echo "metrics: $out/metrics.json; IR after each pass: $out/dumps/"
