#!/usr/bin/env bash
# Runs the MPI and cluster tests N times beside a CPU-bound neighbour and prints how often each
# passed: the tool that shows a fault test to be deterministic (every fault test triggers on an
# event the job reports: test/e2e/events.py). Not part of CI; run it on an otherwise idle
# machine after scripts/build.sh (the cluster and SLURM tests need root, else they skip).
#
#   scripts/stress-tests.sh [N] [--lit-only | --ctest-only] [--filter REGEX]
#
# Each round runs lit on test/e2e/mpi (and the e2e tests that signal a run: checkpoint,
# interrupt) and ctest on the cluster_* and slurm_* tests, each with its fixtures. The
# neighbour is one busy loop at normal priority for the whole run. The logs of failed runs (and
# a failed lit test's temporary folder) are kept in build/stress/. Exits 1 unless every test
# passed every round.
#
# Each round's results are recorded in build/stress/rounds, with the commit and the binaries
# they ran: --resume goes on from the rounds recorded (up to N in all), where the commit, the
# work tree and the binaries are still those, so that a run of 20 rounds (about 5 hours) may be
# cut in two; the table counts every round of the run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
rounds=20 lit=1 ctest=1 filter="" resume=0
while [ $# -gt 0 ]; do
  case $1 in
    --lit-only) ctest=0 ;;
    --ctest-only) lit=0 ;;
    --filter) filter=$2; shift ;;
    --resume) resume=1 ;;
    -h|--help) sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) rounds=$1 ;;
    *) echo "stress-tests.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$build/bin/dprun" ] || { echo "stress-tests.sh: build first (scripts/build.sh)" >&2; exit 2; }
lit_py=/usr/lib/llvm-19/build/utils/lit/lit.py
logs=$build/stress
record=$logs/rounds
# What the rounds ran: the commit, whether the tree differs from it, the binaries, the options.
identity="$(git -C "$root" rev-parse HEAD 2>/dev/null) $(git -C "$root" status --porcelain \
  --untracked-files=no | sha256sum | cut -c1-12) $(cat "$build/bin/dprun" "$build/bin/dpc" \
  | sha256sum | cut -c1-12) lit=$lit ctest=$ctest filter=$filter"
declare -A passed=() ran=()
done_rounds=0
if [ $resume = 1 ] && [ -f "$record" ]; then
  if [ "$(head -n 1 "$record")" != "run $identity" ]; then
    echo "stress-tests.sh: cannot resume: the recorded rounds ran $(head -n 1 "$record" | cut -d' ' -f2-)," \
         "this would run $identity (another commit, a changed tree or build, other options)" >&2
    exit 2
  fi
  while read -r round name status; do
    ran[$name]=$(( ${ran[$name]:-0} + 1 ))
    [ "$status" = pass ] && passed[$name]=$(( ${passed[$name]:-0} + 1 ))
    done_rounds=$round
  done < <(tail -n +2 "$record")
  echo "stress-tests: resuming after round $done_rounds"
else
  rm -rf "$logs" && mkdir -p "$logs"
  echo "run $identity" > "$record"
fi

sh -c 'while :; do :; done' &
neighbour=$!
trap 'kill $neighbour 2>/dev/null' EXIT
echo "stress-tests: $rounds round(s) beside a busy loop (pid $neighbour) on $(nproc) core(s)"

lit_filter='e2e/mpi/|e2e/checkpoint.test'
[ -n "$filter" ] && lit_filter=$filter
for round in $(seq $((done_rounds + 1)) "$rounds"); do
  start=$(date +%s)
  declare -A result=()
  if [ $lit = 1 ]; then
    out=$(python3 "$lit_py" -v --filter "$lit_filter" "$build/test" 2>&1)
    while read -r status name; do
      if [ "$status" = PASS ] || [ "$status" = UNSUPPORTED ]; then
        result[$name]=pass
      else
        result[$name]=fail
        printf '%s\n' "$out" > "$logs/round$round-lit.log"
        # lit cuts long outputs short: keep the test's whole temporary folder too.
        tmp="$build/test/$(dirname "$name")/Output/$(basename "$name").tmp"
        [ -d "$tmp" ] && cp -r "$tmp" "$logs/round$round-$(basename "$name").tmp"
      fi
    done < <(sed -n 's/^\(PASS\|FAIL\|UNSUPPORTED\|XFAIL\|XPASS\|UNRESOLVED\|TIMEOUT\): [^:]* :: \([^ ]*\) .*/\1 \2/p' <<<"$out")
  fi
  if [ $ctest = 1 ]; then
    regex='^(cluster|slurm)_'
    [ -n "$filter" ] && regex=$filter
    (cd "$build" && ctest -R "$regex" --output-on-failure > "$logs/round$round-ctest.out" 2>&1)
    while read -r name status; do
      case $name in *_up|*_down|*_start|*_stop) continue ;; esac
      case $status in Passed|Skipped) result[$name]=pass ;;
                      *) result[$name]=fail
                         cp "$logs/round$round-ctest.out" "$logs/round$round-ctest.log" ;; esac
    done < <(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [. ]*\**\([A-Za-z]*\).*/\1 \2/p' "$logs/round$round-ctest.out")
    rm -f "$logs/round$round-ctest.out"
  fi
  # The round counts once it is over: a run cut short mid-round resumes with that round.
  for name in "${!result[@]}"; do
    ran[$name]=$(( ${ran[$name]:-0} + 1 ))
    [ "${result[$name]}" = pass ] && passed[$name]=$(( ${passed[$name]:-0} + 1 ))
  done
  for name in $(printf '%s\n' "${!result[@]}" | sort); do
    echo "$round $name ${result[$name]}"
  done >> "$record"
  unset result
  echo "round $round/$rounds: $(( $(date +%s) - start )) s"
done

echo
printf '%-50s %s\n' test "passed/rounds"
failed=0
for name in $(printf '%s\n' "${!ran[@]}" | sort); do
  # A test that did not report in some round (lit or ctest cut short) counts as failed there.
  printf '%-50s %d/%d\n' "$name" "${passed[$name]:-0}" "$rounds"
  [ "${passed[$name]:-0}" = "$rounds" ] || failed=1
done
[ $failed = 0 ] || echo "logs of the failed rounds: $logs"
exit $failed
