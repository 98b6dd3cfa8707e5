#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test (lit + GoogleTest + end to
# end) through one ctest, whose summary is the result; then the sanitizer build's unit tests
# and fuzzers (scripts/fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j "${DP_JOBS:-$(nproc)}"
# ctest shows a passing test's output only in its log: print lit's own summary too.
echo "lit summary:"
grep -A6 "^Total Discovered Tests" Testing/Temporary/LastTest.log || true
# The sanitizer build: the runtime's unit tests under ASan and UBSan, the fuzzers' regression
# inputs, and a short run of each fuzzer (DP_FUZZ_SECONDS, default 60; 0 replays only).
bash "$root/scripts/fuzz.sh" --seconds "${DP_FUZZ_SECONDS:-60}"
