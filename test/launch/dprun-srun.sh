#!/usr/bin/env bash
# dprun under SLURM on the local cluster: mnist_mlp compiled for 2 processes trains with
# `srun --mpi=pmix -n 2` to >= 0.84 test accuracy in 2 epochs, rank 0 naming the SLURM job; a
# plan for 2 processes launched as 3 tasks stops every task with the mismatch; and a task killed
# with SIGKILL mid-epoch ends the job within 30 s with a message naming the missing rank.
# Run under with-slurm.sh.
#
#   dprun-srun.sh BUILD_DIR DATA_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR DATA_DIR" >&2; exit 2; }
build=$1 data=$2
here=$(cd "$(dirname "$0")" && pwd)
e2e="$here/../e2e"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$build/bin/dpc" compile "$here/../../models/mnist_mlp.mlir" -o "$work/mlp.dpx" --processes 2 --quiet

echo "+ srun --mpi=pmix -n 2 dprun mlp.dpx --epochs 2"
out=$(timeout 240 srun --mpi=pmix -n 2 --time=4 "$build/bin/dprun" "$work/mlp.dpx" --data "$data" \
        --epochs 2 --metrics "$work/m.json" 2>&1) || fail "training under srun failed:
$out"
echo "$out"
grep -q "rank 0 of 2 on .*(srun, SLURM_JOB_ID=" <<<"$out" || fail "rank 0 does not name the SLURM job"
[ "$(grep -c '^epoch 2/2' <<<"$out")" -eq 1 ] || fail "expected one 'epoch 2/2' line (rank 0 prints)"
python3 "$e2e/check_metrics.py" "$work/m.json" --epochs 2 --params 79510 --min-test-accuracy 0.84 \
  --falling-loss --ranks 2

echo "+ srun --mpi=pmix -n 3 dprun mlp.dpx (compiled for 2)"
status=0
out=$(timeout 60 srun --mpi=pmix -n 3 --time=2 "$build/bin/dprun" "$work/mlp.dpx" --data "$data" 2>&1) || status=$?
echo "$out"
[ "$status" -ne 0 ] || fail "a 3-task launch of a 2-process plan succeeded"
grep -q "compiled for 2 processes .* but the job has 3 ranks" <<<"$out" || fail "no launch-shape message"

echo "+ kill rank 1 of srun --mpi=pmix -n 2 dprun mlp.dpx mid-epoch"
out=$(python3 "$e2e/kill_rank.py" --rank 1 --at-step 700 --limit 30 -- srun --mpi=pmix -n 2 --time=4 \
        "$build/bin/dprun" "$work/mlp.dpx" --data "$data" --epochs 100000 --collective-timeout 10 2>&1) \
  || fail "the job did not end within 30 s of the kill:
$out"
echo "$out"
grep -q "job ended: exit" <<<"$out" || fail "no job end"
echo "PASS"
