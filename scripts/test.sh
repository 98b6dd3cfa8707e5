#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test (lit + GoogleTest + end to
# end) through one ctest, whose summary is the result; then the sanitizer build's unit tests
# and fuzzers (scripts/fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root/build"
if ! ctest --output-on-failure -j "${DP_JOBS:-$(nproc)}"; then
  # A CI log may keep only its last lines: repeat the end of each failed test's output there.
  while IFS=: read -r _ name; do
    echo "=== the last 60 lines of $name's output"
    awk -v t="$name" '/^[0-9]+\/[0-9]+ Testing: / && substr($0, index($0, "Testing: ") + 9) == t {on = 1; next}
                      on && /^Output:$/ {out = 1; next}
                      on && /^<end of output>$/ {exit}
                      out && !/^-+$/ {print}' Testing/Temporary/LastTest.log | tail -n 60
  done < Testing/Temporary/LastTestsFailed.log
  exit 8
fi
# ctest shows a passing test's output only in its log: print lit's own summary too.
echo "lit summary:"
grep -A6 "^Total Discovered Tests" Testing/Temporary/LastTest.log || true
# The sanitizer build: the runtime's unit tests under ASan and UBSan, the fuzzers' regression
# inputs, and a short run of each fuzzer (DP_FUZZ_SECONDS, default 60; 0 replays only).
bash "$root/scripts/fuzz.sh" --seconds "${DP_FUZZ_SECONDS:-60}"
