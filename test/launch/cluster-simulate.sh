#!/usr/bin/env bash
# dpc simulate against the emulated nodes: mnist_mlp and mnist_cnn on 2 nodes x 1 rank, profiled
# on the unshaped link, predicted and measured with every link shaped to 1 Gbit/s and to
# 100 Mbit/s (tc tbf): each prediction within 20% of the measured step (bench/simulate.py;
# a case off by more is profiled and measured once more: this VM's speed moves between runs).
#
#   cluster-simulate.sh BUILD DATA CLUSTER_DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BUILD DATA CLUSTER_DIR" >&2; exit 2; }
build=$1 data=$2
export DP_CLUSTER_DIR=$3
root="$(cd "$(dirname "$0")" && pwd)/../.."
[ -s "$DP_CLUSTER_DIR/nodes" ] || { echo "SKIPPED: no emulated nodes in $DP_CLUSTER_DIR" >&2; exit 77; }
"$root/scripts/cluster.sh" shape 1gbit "$DP_CLUSTER_DIR" >/dev/null 2>&1 ||
  { echo "SKIPPED: this kernel cannot shape the nodes' links (tc tbf)" >&2; exit 77; }
"$root/scripts/cluster.sh" shape none "$DP_CLUSTER_DIR" >/dev/null
exec python3 "$root/bench/simulate.py" --build "$build" --data "$data" \
  --cluster-dir "$DP_CLUSTER_DIR" --cases quick --max-error 20
