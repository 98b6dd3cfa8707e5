#!/usr/bin/env bash
# Preemption through the local SLURM cluster: examples/slurm/mnist_cnn_requeue.sbatch (2 tasks,
# a checkpoint every epoch, --requeue) gets SLURM's notice by hand (`scancel --signal=USR1
# --batch`, what `--signal=B:USR1@120` sends before a time limit) in its second epoch. The tasks
# agree on a step, write one checkpoint, exit 75; the script requeues the job; the requeued run
# resumes from the checkpoint and finishes. Its metrics must equal, step for step and bit for
# bit, those of the same training run straight through with srun. Run under with-slurm.sh.
#
#   dprun-requeue.sh BUILD_DIR DATA_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR DATA_DIR" >&2; exit 2; }
build=$1 data=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
job=""
cleanup() {
  [ -n "$job" ] && scancel "$job" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/job.out" ] && cat "$work/job.out" >&2; exit 1; }
epochs=3 steps=40

"$build/bin/dpc" compile "$root/models/mnist_cnn.mlir" -o "$work/straight.dpx" --processes 2 --quiet
echo "+ srun --mpi=pmix -n 2 dprun cnn.dpx --epochs $epochs --steps-per-epoch $steps (uninterrupted)"
# With the batch script's threads: oneDNN's sums depend on them, and the runs must agree bit
# for bit.
OMP_NUM_THREADS=1 timeout 300 srun --mpi=pmix -n 2 --cpus-per-task=1 --time=5 \
  "$build/bin/dprun" "$work/straight.dpx" --data "$data" \
  --epochs $epochs --steps-per-epoch $steps --metrics "$work/straight.json" --quiet \
  || fail "the uninterrupted run failed"

echo "+ sbatch examples/slurm/mnist_cnn_requeue.sbatch (EPOCHS=$epochs STEPS_PER_EPOCH=$steps)"
# Rank 0 holds itself at step 50 (epoch 2 of 40-step epochs; test events: test/e2e/events.py)
# until SLURM's notice has reached it, so that the notice lands mid-run however late it comes.
events="$work/events"
mkdir -p "$events"
job=$(sbatch --parsable --output="$work/job.out" --time=10 \
  --export=ALL,DP_ROOT="$root",DP_BIN="$build/bin",DATA="$data",EPOCHS=$epochs,STEPS_PER_EPOCH=$steps,OUT="$work/job",DPRUN_TEST_EVENTS="$events",DPRUN_TEST_STOP=0:50 \
  "$root/examples/slurm/mnist_cnn_requeue.sbatch") || fail "sbatch failed"
echo "job $job"
stopped=$(python3 "$here/../e2e/events.py" wait "$events" 0 "stopped 50" 240) ||
  fail "rank 0 never reached step 50"
pid=${stopped##*pid=}
echo "+ rank 0 (pid $pid) held at step 50: scancel --signal=USR1 --batch $job"
scancel --signal=USR1 --batch "$job"
python3 "$here/../e2e/events.py" pending "$pid" USR1 60 || fail "the notice never reached rank 0"
kill -CONT "$pid"
# Requeued, it runs again (SLURM may hold a requeued job back for a few seconds) and finishes.
state="" released=0
for _ in $(seq 1 900); do
  info=$(scontrol show job "$job" 2>/dev/null || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  # SLURM holds a requeued job back (its begin time two minutes ahead); let it start sooner,
  # once the first run's credential is gone (at once, SLURM refuses to start it: "Job
  # credential revoked").
  if [ "$state" = PENDING ] && [ $released = 0 ] && grep -q "Reason=BeginTime" <<<"$info"; then
    echo "+ scontrol update JobId=$job StartTime=now+5 (requeued, held until its begin time)"
    scontrol update JobId="$job" StartTime=now+5
    released=1
  fi
  grep -q "dprun exited with" "$work/job.out" 2>/dev/null && [ "$state" = COMPLETED ] && break
  case "$state" in FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
  sleep 0.2
done
cat "$work/job.out"
[ "$state" = COMPLETED ] || fail "the job ended $state, not COMPLETED"
grep -q "interrupted by SIGUSR1 .*checkpoint .*ckpt-[0-9]*.dpk holds step" "$work/job.out" \
  || fail "no checkpoint at the notice"
grep -q "checkpointed (exit 75): requeueing job $job" "$work/job.out" || fail "no requeue after exit 75"
grep -q "^run 2 of job $job" "$work/job.out" || fail "the job did not run a second time"
grep -q "^resuming from .*/ckpt-[0-9]*.dpk: step" "$work/job.out" || fail "the second run did not resume"
grep -q "^epoch $epochs/$epochs" "$work/job.out" || fail "the second run did not finish"
python3 "$here/../e2e/same_steps.py" "$work/straight.json" "$work/job/metrics.json" \
  || fail "the requeued job's steps differ from the uninterrupted run's"
echo "PASS"
