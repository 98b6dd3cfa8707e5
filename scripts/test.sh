#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test (lit + GoogleTest + end to
# end) through one ctest, whose summary is the result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j "${DP_JOBS:-$(nproc)}"
# ctest shows a passing test's output only in its log: print lit's own summary too.
echo "lit summary:"
grep -A6 "^Total Discovered Tests" Testing/Temporary/LastTest.log || true
