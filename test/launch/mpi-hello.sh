#!/usr/bin/env bash
# Launches the MPI hello program on the local SLURM cluster and checks that every rank of N
# started, saw N ranks and finished its allreduces. Run under with-slurm.sh.
#
#   mpi-hello.sh srun   HELLO N    srun --mpi=pmix -n N HELLO          (SLURM starts the ranks)
#   mpi-hello.sh mpirun HELLO N    salloc -n N mpirun HELLO            (mpirun starts them via srun)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 srun|mpirun HELLO N" >&2; exit 2; }
mode=$1 hello=$2 n=$3
[ -x "$hello" ] || { echo "error: $hello is not an executable" >&2; exit 1; }

# --time and timeout bound a hung launch; --kill-on-bad-exit ends all ranks when one fails.
case $mode in
  srun) cmd=(srun --mpi=pmix -n "$n" --time=2 --kill-on-bad-exit=1 "$hello") ;;
  mpirun) cmd=(salloc -n "$n" --time=2 mpirun --allow-run-as-root --oversubscribe "$hello") ;;
  *) echo "error: unknown mode '$mode' (expected srun or mpirun)" >&2; exit 2 ;;
esac
echo "+ ${cmd[*]}"
status=0
out=$(timeout 90 "${cmd[@]}" 2>&1) || status=$?
echo "$out"
[ "$status" -eq 0 ] || { echo "FAIL: the launch exited with status $status" >&2; exit 1; }

for ((r = 0; r < n; r++)); do
  if ! grep -q "^rank $r of $n on .*: allreduce ok$" <<<"$out"; then
    echo "FAIL: no line 'rank $r of $n on HOST: allreduce ok' in the output" >&2
    exit 1
  fi
done
lines=$(grep -c "^rank [0-9]* of " <<<"$out" || true)
[ "$lines" -eq "$n" ] || { echo "FAIL: $lines rank lines, expected $n" >&2; exit 1; }
echo "PASS: $n ranks of $n ($mode)"
