#!/usr/bin/env bash
# The sanitizer build and the fuzzers (docs/fuzzing.md).
#
#   bash scripts/fuzz.sh [--seconds N] [--no-unit-tests] [TARGET...]
#
# Builds dp with clang, AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/, then:
#   1. runs the runtime's and the importer's unit tests and ONNX's operator conformance cases
#      under the sanitizers;
#   2. replays every regression input of fuzz/regressions/<target>/ (and those generated into
#      the build tree: fuzz/GeneratedRegressions.cmake);
#   3. fuzzes each target (plan, data, model, checkpoint, simulate, onnx; default all) for N seconds
#      (default 60), from seeds made here (the models and lit inputs of the tree, plans compiled
#      from them, small IDX and CIFAR files, the simulator's test profile with each topology,
#      the ONNX models of the tree and fuzz/seeds/onnx/ (made by fuzz/onnx_seeds.py))
#      plus the corpus left by earlier runs in build-fuzz/corpus/.
# A finding is written to build-fuzz/findings/<target>/ and fails the run; once fixed, copy it
# into fuzz/regressions/<target>/. Prints one line per target: runs, executions per second,
# coverage, findings. Exit 0 when nothing failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
seconds=60 unit=1 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --no-unit-tests) unit=0; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    plan|data|model|checkpoint|simulate|onnx) targets+=("$1"); shift ;;
    *) echo "fuzz: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(plan data model checkpoint simulate onnx)
case "$seconds" in ''|*[!0-9]*) echo "fuzz: --seconds takes a whole number" >&2; exit 2 ;; esac

bash "$root/scripts/setup.sh"
# Debug line tables make ccache hash the directory; a clone elsewhere should still hit.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DDP_SANITIZE=ON -DDP_BUILD_CUDA=OFF > /dev/null
fi
unit_tests=(dprt_base_tests dprt_format_tests dprt_data_tests dprt_core_tests dprt_device_tests
            dprt_kernels_tests dprt_train_tests dprt_comm_tests dprt_cuda_host_tests dprun_cli_tests
            dp_onnx_tests)
echo "fuzz: building with ASan and UBSan in $build"
ninja -C "$build" -j "${DP_JOBS:-$(nproc)}" dpc dprun fuzz_plan fuzz_data fuzz_model fuzz_checkpoint fuzz_simulate fuzz_onnx \
  "${unit_tests[@]}" dp_onnx_conformance > "$build/build.log" 2>&1 || { tail -n 30 "$build/build.log"; exit 1; }

# Leaks count (a leak per input is unbounded memory); Open MPI and oneDNN keep some on purpose,
# so the unit tests run without leak checks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0

if [ $unit = 1 ]; then
  for t in "${unit_tests[@]}"; do
    start=$SECONDS
    if ASAN_OPTIONS=detect_leaks=0 "$build/bin/$t" --gtest_brief=1 > "$build/$t.log" 2>&1; then
      echo "fuzz: sanitizers: $t passed ($((SECONDS - start)) s)"
    else
      echo "fuzz: sanitizers: $t FAILED (log: $build/$t.log)"; tail -n 25 "$build/$t.log"; failed=1
    fi
  done
  # ONNX's conformance cases through the importer, the compiler and the runtime
  # (allow_user_poisoning=0: see the seeds below).
  start=$SECONDS
  if ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "$build/bin/dp_onnx_conformance" \
      /usr/share/libonnx-testdata/data/node --expected "$root/test/onnx-conformance/conformance.txt" \
      > "$build/dp_onnx_conformance.log" 2>&1; then
    echo "fuzz: sanitizers: dp_onnx_conformance passed ($((SECONDS - start)) s)"
  else
    echo "fuzz: sanitizers: dp_onnx_conformance FAILED (log: $build/dp_onnx_conformance.log)"
    tail -n 25 "$build/dp_onnx_conformance.log"; failed=1
  fi
fi

echo "fuzz: making seeds"
seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"/{plan,data,model,checkpoint,simulate,onnx}
(cd "$root" && find models test -name '*.mlir' -size -64k) | while read -r f; do
  cp "$root/$f" "$seeds/model/${f//\//_}"
done
# The attribute grammars (affine maps, integer sets, dense elements, ...) that no model uses.
cp "$root"/fuzz/seeds/model/*.mlir "$seeds/model/"
i=0
for m in "$root"/models/mnist_mlp.mlir "$root"/models/mnist_lstm.mlir "$root"/test/e2e/gradcheck/*.mlir; do
  i=$((i + 1))
  for args in "" "--devices-per-process 2" "--strategy parameter-server --servers 2"; do
    # allow_user_poisoning=0: as fuzz_model sets it (FuzzModel.cpp): LLVM's allocators inlined
    # into dp's instrumented code poison memory Debian's uninstrumented libMLIR then reads (since
    # dpc links the ONNX importer, its instrumented copies are the ones linked).
    # shellcheck disable=SC2086
    ASAN_OPTIONS=allow_user_poisoning=0 \
      "$build/bin/dpc" compile "$m" -o "$build/seed.dpx" --quiet $args 2>/dev/null || continue
    tag=${args:+r2-}
    [ "${args#--strategy}" != "$args" ] && tag=ps-
    { printf '\001'; cat "$build/seed.dpx"; } > "$seeds/plan/$i-${tag}fixed"
  done
  [ $i = 1 ] && [ -f "$build/seed.dpx" ] && { printf '\000'; cat "$build/seed.dpx"; } > "$seeds/plan/$i-as-is"
done
rm -f "$build/seed.dpx"
python3 - "$seeds/data" <<'PY'
import gzip, struct, sys
d = sys.argv[1]
images = struct.pack(">IIII", 0x803, 3, 4, 5) + bytes(range(60))
labels = struct.pack(">II", 0x801, 3) + bytes([1, 2, 9])
for name, mode, data in (("idx3", 0, images), ("idx1", 1, labels)):
    open(f"{d}/{name}", "wb").write(bytes([mode]) + data)
    open(f"{d}/{name}.gz", "wb").write(bytes([mode]) + gzip.compress(data))
record = bytes([3]) + bytes(i % 251 for i in range(3072))
open(f"{d}/cifar", "wb").write(b"\x02" + record * 2)
# A pair loaded as one data set (mode 3: the images file's length, the images, the labels).
for name, pack in (("pair", lambda b: b), ("pair.gz", gzip.compress)):
    i, l = pack(images), pack(labels)
    open(f"{d}/{name}", "wb").write(b"\x03" + struct.pack(">I", len(i)) + i + l)
PY
# dpc simulate's inputs: the test profile with each topology of examples/, NUL between.
for t in "$root"/test/tools/Inputs/simulate/topology.json "$root"/examples/topologies/*.json; do
  { cat "$root/test/tools/Inputs/simulate/profile-mlp-p2.json"; printf '\000'; cat "$t"; } \
    > "$seeds/simulate/$(basename "$t" .json)"
done
cp "$root"/fuzz/regressions/simulate/* "$seeds/simulate/"
# ONNX models: the seeds with inline weights, and the tree's (whose external data a fuzzed
# model cannot reach: the reader's refusals).
cp "$root"/fuzz/seeds/onnx/*.onnx "$seeds/onnx/"
find "$root/models/onnx" -name '*.onnx' -size -128k -exec cp {} "$seeds/onnx/" \;
# A whole checkpoint (docs/checkpoints.md), with and without the checksum fix-up byte.
python3 "$root/fuzz/checkpoint_seed.py" "$seeds/checkpoint"
# A parameters file (--save-params: safetensors), which the checkpoint target reads too.
python3 "$root/fuzz/safetensors_seed.py" "$seeds/checkpoint"

summary=()
for t in "${targets[@]}"; do
  bin="$build/bin/fuzz_$t"
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  corpora=()  # kept in the source, and generated at configure time (GeneratedRegressions.cmake)
  for dir in "$root/fuzz/regressions/$t" "$build/fuzz/regressions/$t"; do
    [ -d "$dir" ] && corpora+=("$dir")
  done
  if ! "$bin" -runs=0 "${corpora[@]}" \
      > "$build/fuzz_$t-regressions.log" 2>&1; then
    echo "fuzz: $t: a regression input fails again (log: $build/fuzz_$t-regressions.log)"
    tail -n 25 "$build/fuzz_$t-regressions.log"; failed=1
  fi
  [ "$seconds" -gt 0 ] || continue
  echo "fuzz: $t: fuzzing for $seconds s"
  rc=0
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
    "$build/corpus/$t" "$seeds/$t" > "$build/fuzz_$t.log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz_$t.log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/fuzz_$t.log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$build/fuzz_$t.log" | tail -n 1 | cut -d' ' -f2)
  found=$(find "$build/findings/$t" -type f | wc -l)
  line=$(printf '%-6s %10s runs %7s exec/s  coverage %6s  findings %s' "$t" "${runs:-?}" \
         "${rate:-?}" "${cov:-?}" "$found")
  summary+=("$line")
  if [ $rc != 0 ] || [ "$found" != 0 ]; then
    echo "fuzz: $t: FOUND something (exit $rc; log: $build/fuzz_$t.log; inputs in $build/findings/$t/)"
    grep -m1 -A12 -E 'ERROR: |runtime error|SUMMARY' "$build/fuzz_$t.log" || tail -n 20 "$build/fuzz_$t.log"
    failed=1
  fi
done

if [ "$seconds" -gt 0 ]; then
  echo "fuzz summary ($seconds s per target; logs in $build):"
  printf '  %s\n' "${summary[@]}"
else
  echo "fuzz: regression inputs replayed; no fuzzing (--seconds 0)"
fi
exit $failed
