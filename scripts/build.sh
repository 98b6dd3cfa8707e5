#!/usr/bin/env bash
# Configures and builds dp into build/ (binaries in build/bin/). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${DP_JOBS:-$(nproc)}
# Paths under the checkout are hashed relative to it, so fresh clones reuse the compile cache.
export CCACHE_BASEDIR="$root"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
echo "build: compiling with $jobs jobs (ccache: $(command -v ccache >/dev/null && echo on || echo off))"
ninja -C "$root/build" -j "$jobs"
