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
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
rounds=20 lit=1 ctest=1 filter=""
while [ $# -gt 0 ]; do
  case $1 in
    --lit-only) ctest=0 ;;
    --ctest-only) lit=0 ;;
    --filter) filter=$2; shift ;;
    -h|--help) sed -n 2,13p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) rounds=$1 ;;
    *) echo "stress-tests.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$build/bin/dprun" ] || { echo "stress-tests.sh: build first (scripts/build.sh)" >&2; exit 2; }
lit_py=/usr/lib/llvm-19/build/utils/lit/lit.py
logs=$build/stress
rm -rf "$logs" && mkdir -p "$logs"
declare -A passed=() ran=()

sh -c 'while :; do :; done' &
neighbour=$!
trap 'kill $neighbour 2>/dev/null' EXIT
echo "stress-tests: $rounds round(s) beside a busy loop (pid $neighbour) on $(nproc) core(s)"

lit_filter='e2e/mpi/|e2e/checkpoint.test'
[ -n "$filter" ] && lit_filter=$filter
for round in $(seq 1 "$rounds"); do
  start=$(date +%s)
  if [ $lit = 1 ]; then
    out=$(python3 "$lit_py" -v --filter "$lit_filter" "$build/test" 2>&1)
    while read -r status name; do
      ran[$name]=$(( ${ran[$name]:-0} + 1 ))
      if [ "$status" = PASS ] || [ "$status" = UNSUPPORTED ]; then
        passed[$name]=$(( ${passed[$name]:-0} + 1 ))
      else
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
      ran[$name]=$(( ${ran[$name]:-0} + 1 ))
      case $status in Passed|Skipped) passed[$name]=$(( ${passed[$name]:-0} + 1 )) ;;
                      *) cp "$logs/round$round-ctest.out" "$logs/round$round-ctest.log" ;; esac
    done < <(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [. ]*\**\([A-Za-z]*\).*/\1 \2/p' "$logs/round$round-ctest.out")
    rm -f "$logs/round$round-ctest.out"
  fi
  echo "round $round/$rounds: $(( $(date +%s) - start )) s"
done

echo
printf '%-50s %s\n' test "passed/runs"
failed=0
for name in $(printf '%s\n' "${!ran[@]}" | sort); do
  printf '%-50s %d/%d\n' "$name" "${passed[$name]:-0}" "${ran[$name]}"
  [ "${passed[$name]:-0}" = "${ran[$name]}" ] || failed=1
done
[ $failed = 0 ] || echo "logs of the failed rounds: $logs"
exit $failed
