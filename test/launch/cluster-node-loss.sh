#!/usr/bin/env bash
# A job that loses a node and ends as if it had not, on the emulated nodes with SLURM
# (scripts/cluster.sh up --slurm): examples/slurm/mnist_cnn_node_loss.sbatch starts 2 tasks on 2
# nodes (60 steps, a checkpoint every 20, --reproducible). Rank 1 (on dpnode1) stops itself
# before step 30 (test events), after the checkpoint of step 20 is in place; then every process
# on dpnode1 is killed (cluster.sh fail: its slurmd, its rank). slurmctld marks the node down
# after SlurmdTimeout (30 s here) and requeues the job; the requeued run gets dpnode0 alone,
# compiles for 1 node x 2 tasks, resumes from step 20 and finishes. Its final parameters equal, bit for bit, those of an uninterrupted run of 1 process
# x 4 micro-shards. Prints the recovery's times (detection and requeue, start, compile and
# resume). dpnode1's slurmd is started again at the end.
#
#   cluster-node-loss.sh BUILD_DIR DATA_DIR CLUSTER_DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BUILD_DIR DATA_DIR CLUSTER_DIR" >&2; exit 2; }
build=$1 data=$2
export DP_CLUSTER_DIR=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/scripts/cluster.sh"
[ -r "$DP_CLUSTER_DIR/slurm/slurm.env" ] ||
  { echo "SKIPPED: no SLURM on the emulated nodes in $DP_CLUSTER_DIR" >&2; exit 77; }
[ -x "$build/bin/dprun" ] || { echo "SKIPPED: no dprun in $build" >&2; exit 77; }
work=$(mktemp -d "$build/cluster-node-loss.XXXXXX")
job="" failed=""
fail() {
  echo "FAIL: $*" >&2
  [ -r "$work/job.out" ] && { echo "--- the job's output" >&2; cat "$work/job.out" >&2; }
  local log
  for log in "$DP_CLUSTER_DIR"/slurm/slurmctld.log; do
    [ -r "$log" ] && { echo "--- last lines of $log" >&2; tail -n 25 "$log" >&2; }
  done
  exit 1
}
cleanup() {
  [ -z "$job" ] || "$cluster" slurm scancel "$job" 2>/dev/null || true
  # The other tests of the fixture need both nodes.
  [ -z "$failed" ] || "$cluster" revive dpnode1 || true
  rm -rf "$work"
}
trap cleanup EXIT
steps=60

echo "+ the uninterrupted run: 1 process x 4 micro-shards of 32 rows, $steps steps"
"$build/bin/dpc" compile "$root/models/mnist_cnn.mlir" -o "$work/ref.dpx" --micro-batch 32 --quiet
"$build/bin/dprun" "$work/ref.dpx" --data "$data" --epochs 1 --steps-per-epoch $steps \
  --reproducible --save-params "$work/ref.bin" --quiet

echo "+ sbatch examples/slurm/mnist_cnn_node_loss.sbatch (2 nodes x 1 task, rank 1 held at step 30)"
events="$work/events"
mkdir -p "$events"
job=$("$cluster" slurm sbatch --parsable --output="$work/job.out" --time=10 \
  --export=ALL,DP_ROOT="$root",DP_BIN="$build/bin",DATA="$data",EPOCHS=1,STEPS_PER_EPOCH=$steps,CHECKPOINT_EVERY=20,REQUEUE_WAIT=240,OUT="$work/run",DPRUN_TEST_EVENTS="$events",DPRUN_TEST_STOP=1:30 \
  "$root/examples/slurm/mnist_cnn_node_loss.sbatch") || fail "sbatch failed"
echo "job $job"
python3 "$here/../e2e/events.py" wait "$events" 1 "stopped 30" 240 >/dev/null ||
  fail "rank 1 never reached step 30"
grep -qx "checkpoint 20" "$events/rank0.events" || fail "no checkpoint of step 20 before step 30"
grep -q "^run 1 of job $job on 2 node(s) x 1 task(s)" "$work/job.out" ||
  fail "the first run was not on 2 nodes x 1 task"

echo "+ dpnode1 fails: every process on it killed"
failed=1
t0=$SECONDS
"$cluster" fail dpnode1
requeued="" started="" resumed="" released=0 state=""
end=$((SECONDS + 300))
while [ "$SECONDS" -lt "$end" ]; do
  info=$("$cluster" slurm scontrol show job -o "$job" 2>/dev/null || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  [ -z "$requeued" ] && [ "${restarts:-0}" -ge 1 ] && requeued=$((SECONDS - t0))
  # SLURM holds a requeued job back (its begin time two minutes ahead): let it start sooner,
  # once the first run's credential is gone.
  if [ "$state" = PENDING ] && [ $released = 0 ] && grep -q "Reason=BeginTime" <<<"$info"; then
    "$cluster" slurm scontrol update JobId="$job" StartTime=now+5
    released=1
  fi
  [ -z "$started" ] && grep -q "^run 2 of job $job" "$work/job.out" 2>/dev/null &&
    started=$((SECONDS - t0))
  [ -z "$resumed" ] && grep -q "^resuming from .*ckpt-0*20.dpk" "$work/job.out" 2>/dev/null &&
    resumed=$((SECONDS - t0))
  [ "$state" = COMPLETED ] && grep -q "^dprun exited with 0" "$work/job.out" 2>/dev/null && break
  case "$state" in FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY) break ;; esac
  sleep 0.5
done
job_done=$((SECONDS - t0))
cat "$work/job.out"
[ "$state" = COMPLETED ] || fail "the job ended ${state:-unknown}, not COMPLETED"
[ -n "$requeued" ] || fail "SLURM did not requeue the job"
grep -q "^run 2 of job $job on 1 node(s) x 2 task(s): dpnode0" "$work/job.out" ||
  fail "the requeued run was not on dpnode0 alone"
[ -n "$resumed" ] || fail "the requeued run did not resume from the checkpoint of step 20"
echo "recovery: node lost at 0 s; job requeued by ${requeued} s (the node marked down after" \
  "SlurmdTimeout 30 s), run 2 started by ${started:-?} s (its begin time moved to now + 5 s)," \
  "compiled and resumed by ${resumed} s, the job done at ${job_done} s"
cmp "$work/ref.bin" "$work/run/params.bin" ||
  fail "the job's final parameters differ from the uninterrupted run's"
echo "the final parameters equal the uninterrupted run's, bit for bit"
job=""
echo "+ dpnode1 back"
"$cluster" revive dpnode1
failed=""
echo PASS
