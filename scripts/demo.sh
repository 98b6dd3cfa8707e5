#!/usr/bin/env bash
# The main job: installs and builds dp, compiles the seed MLP for 2 processes and trains it
# data-parallel on Fashion-MNIST for 2 epochs (mpirun -n 2: each rank trains half of every
# global batch, gradients averaged by MPI), printing per-epoch progress and the test accuracy.
# DP_PROCESSES (default 2) and DP_REPLICAS (replica threads per process, default 1) change the
# layout; DP_EPOCHS the epochs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DP_DATA:-/usr/share/datasets/fashion-mnist}
processes=${DP_PROCESSES:-2}
replicas=${DP_REPLICAS:-1}
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
out="$root/build/demo"
mkdir -p "$out"
"$root/build/bin/dpc" summary "$root/models/mnist_mlp.mlir"
"$root/build/bin/dpc" compile "$root/models/mnist_mlp.mlir" -o "$out/mnist_mlp.dpx" \
  --dump-dir "$out/dumps" --processes "$processes" --devices-per-process "$replicas"
run=("$root/build/bin/dprun" "$out/mnist_mlp.dpx" --data "$data" --epochs "${DP_EPOCHS:-2}"
     --metrics "$out/metrics.json")
if [ "$processes" -gt 1 ]; then
  # As root Open MPI wants --allow-run-as-root; more ranks than cores need --oversubscribe.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  mpirun --allow-run-as-root --oversubscribe -n "$processes" "${run[@]}"
else
  "${run[@]}"
fi
echo "metrics: $out/metrics.json; IR after each pass: $out/dumps/"
