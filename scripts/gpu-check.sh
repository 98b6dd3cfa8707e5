#!/usr/bin/env bash
# Checks dp's CUDA backend on a GPU machine and prints one summary line per check.
#
#   bash scripts/gpu-check.sh [--bench] [--no-sanitizer]    # in a checkout with a build
#   bash gpu-bundle/gpu-check.sh [--bench]                  # in a bundle (scripts/gpu-bundle.sh)
#
# In a checkout it first packs a bundle (scripts/gpu-bundle.sh, into $DP_GPU_BUNDLE or
# gpu-bundle/: needs a build with the CUDA toolkit); a bundle carries everything, so it also
# runs where dp cannot be built. Checks:
#   gpu-tests     every kernel kind on the GPU against the CPU backend (ctest label gpu)
#   libraries     cuBLAS, cuDNN and NCCL load, with every entry point dp calls
#   step1-*       one train step of each seed model on the GPU equals the CPU's loss (1e-4)
#   steps40-*     40 steps: loss and accuracy near the CPU's (2e-2 relative, 0.03)
#   *-resnet50v2_32  one step on generated CIFAR-10 records: the loss (1e-4), the parameters
#                 (within twice the CPU's own one- vs two-replica difference)
#   gradients-*   dprun --check-gradients on the gradient-check models (finite differences)
#   accuracy      mnist_cnn, one epoch of the bundle's subset: test accuracy within 0.02 of CPU
#   nccl-r2       two replicas on two GPUs (NCCL) near the CPU's two replicas; needs 2 GPUs
#   interrupt     SIGINT mid-training: exit 130 with the finished epochs' metrics
#   memcheck      compute-sanitizer memcheck on two steps of mnist_cnn
#   peak          (--bench) the GPU's f32 and bf16 peak through dp's kernels (--measure-peak)
#   bench-*       (--bench) samples/s of dprun against PyTorch eager and torch.compile on
#                 mnist_cnn and mnist_lstm, and dprun's MFU
# Exit status: 0 when nothing failed (skips are listed), 1 when a check failed, 77 without a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=0 sanitizer=1
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --no-sanitizer) sanitizer=0 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

if [ -f "$here/REVISION" ] && [ -d "$here/plans" ]; then
  bundle=$here
else
  bundle=${DP_GPU_BUNDLE:-"$here/../gpu-bundle"}
  bash "$here/gpu-bundle.sh" "$bundle" || exit 2
  bundle=$(cd "$bundle" && pwd)
fi

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu-check: no GPU here (nvidia-smi lists none): nothing to check" >&2
  exit 77
fi

# The CUDA libraries dp loads at run time: the toolkit's, or the NVIDIA wheels of a Python.
libpath="$bundle/lib"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
  [ -d "$dir" ] && libpath="$libpath:$dir"
done
for py in python3 /opt/torch/.venv/bin/python3; do
  site=$("$py" -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))' 2>/dev/null) || continue
  for lib in "$site"/nvidia/*/lib; do libpath="$libpath:$lib"; done
  break
done
peer_ld_path=${LD_LIBRARY_PATH:-}  # the peers load their own bundled cuDNN, not the toolkit's
export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# DP_GPU_CHECK_LOGS=DIR keeps every run's log and metrics there; else they go with the run.
if [ -n "${DP_GPU_CHECK_LOGS:-}" ]; then
  work=$DP_GPU_CHECK_LOGS
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
results=()
failed=0
record() { # name status detail
  results+=("$(printf '%-22s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = FAIL ] && failed=1
  echo "gpu-check: $1: $2 $3"
}

dprun() { "$bundle/bin/dprun" "$@"; }
# Compares two metrics files: loss relative tolerance, accuracy absolute tolerance.
compare() { # got want loss_rtol acc_atol
  python3 - "$@" <<'PY'
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:3])
rtol, atol = float(sys.argv[3]), float(sys.argv[4])
gl, wl = got["epochs"][-1]["loss"], want["epochs"][-1]["loss"]
ga, wa = got["test_accuracy"], want["test_accuracy"]
ok = abs(gl - wl) <= rtol * abs(wl) and abs(ga - wa) <= atol
print(f"loss {gl:.6g} vs cpu {wl:.6g}, test accuracy {ga:.4f} vs cpu {wa:.4f}")
sys.exit(0 if ok else 1)
PY
}

echo "gpu-check: $(nvidia-smi -L | head -n 4 | tr '\n' ' ')(dp $(cat "$bundle/REVISION"))"

out=$("$bundle/bin/dprt_cuda_library_tests" 2>&1); rc=$?
record libraries "$([ $rc = 0 ] && echo PASS || echo FAIL)" "$(echo "$out" | tail -n 1)"

out=$("$bundle/bin/dprt_gpu_tests" 2>&1); rc=$?
if echo "$out" | grep -q "no GPU:"; then
  record gpu-tests FAIL "the tests found no usable GPU: $(echo "$out" | grep -m1 'no GPU:')"
else
  record gpu-tests "$([ $rc = 0 ] && echo PASS || echo FAIL)" "$(echo "$out" | grep -E '^\[  (PASSED|FAILED) ' | tr '\n' ' ')"
  [ $rc = 0 ] || echo "$out" | grep -B2 -A6 "Failure" | head -n 60
fi

for model in mnist_mlp mnist_small_cnn mnist_cnn mnist_lstm; do
  for kind in step1 steps40; do
    steps=$([ $kind = step1 ] && echo 1 || echo 40)
    rtol=$([ $kind = step1 ] && echo 1e-4 || echo 2e-2)
    atol=$([ $kind = step1 ] && echo 0.002 || echo 0.03)
    if dprun "$bundle/plans/$model-cuda.dpx" --data "$bundle/data" --seed 1 --quiet --epochs 1 \
         --steps-per-epoch $steps --metrics "$work/$model-$kind.json" > "$work/$model-$kind.log" 2>&1; then
      detail=$(compare "$work/$model-$kind.json" "$bundle/expected/$model-$kind.json" $rtol $atol)
      record "$kind-$model" "$([ $? = 0 ] && echo PASS || echo FAIL)" "$detail"
    else
      record "$kind-$model" FAIL "dprun: $(tail -n 2 "$work/$model-$kind.log" | tr '\n' ' ')"
    fi
  done
done

# ResNet50V2 on generated CIFAR-10 records: batch norm, padding, residual adds and the deep
# convolution chain. One step's loss against the CPU's, and the parameters after it. Through 50
# batch norms at batch 16 rounding differences grow to a few percent in the early layers'
# gradients, so the parameters are judged against the model's own sensitivity: the CPU's two-
# replica run of the same step (exact too, in another reduction order) differs from its one-
# replica run by some amount; the GPU may differ from the CPU by at most twice that. (Longer
# runs are no test: after 12 steps two CPU runs on 1 and 2 threads differ by 6% in loss.)
if dprun "$bundle/plans/resnet50v2_32-cuda.dpx" --data "$bundle/cifar" --seed 1 --quiet --epochs 1 \
     --steps-per-epoch 1 --metrics "$work/resnet50v2_32-step1.json" \
     --save-params "$work/resnet50v2_32-step1.params" > "$work/resnet50v2_32-step1.log" 2>&1; then
  detail=$(compare "$work/resnet50v2_32-step1.json" "$bundle/expected/resnet50v2_32-step1.json" 1e-4 0.002)
  record step1-resnet50v2_32 "$([ $? = 0 ] && echo PASS || echo FAIL)" "$detail"
  python3 "$bundle/bin/compare_params.py" "$work/resnet50v2_32-step1.params" --sample 1024 \
    "$work/resnet50v2_32-step1.sampled"
  detail=$(python3 - "$bundle/bin/compare_params.py" "$work/resnet50v2_32-step1.sampled" \
             "$bundle/expected/resnet50v2_32-step1.params" \
             "$bundle/expected/resnet50v2_32-r2-step1.params" <<'PY'
import subprocess, sys
tool, gpu, cpu, cpu2 = sys.argv[1:5]
def worst(a, b):
    out = subprocess.run([sys.executable, tool, a, b, "--rtol", "1", "--floor", "1e-2"],
                         capture_output=True, text=True).stdout.splitlines()
    rows = [(float(l.rsplit(" ", 1)[1]), l.split(":")[0]) for l in out if ": " in l and "relative error" in l]
    return max(rows) if rows else (float("inf"), "no parameters")
g, c = worst(gpu, cpu), worst(cpu2, cpu)
print(f"parameters after one step: gpu vs cpu {g[0]:.3g} ({g[1]}); cpu 2 replicas vs 1: {c[0]:.3g} ({c[1]})")
sys.exit(0 if g[0] <= 2 * c[0] else 1)
PY
)
  record params1-resnet50v2_32 "$([ $? = 0 ] && echo PASS || echo FAIL)" "$detail"
else
  record step1-resnet50v2_32 FAIL "dprun: $(tail -n 2 "$work/resnet50v2_32-step1.log" | tr '\n' ' ')"
fi

# Finite differences on the gradient-check models (the CPU's lit tests run the same models).
for plan in "$bundle"/plans/gradcheck-*-cuda.dpx; do
  name=$(basename "$plan" -cuda.dpx); name=${name#gradcheck-}
  if dprun "$plan" --check-gradients --seed 1 > "$work/grad-$name.log" 2>&1; then
    record "gradients-$name" PASS "$(tail -n 1 "$work/grad-$name.log")"
  else
    record "gradients-$name" FAIL "$(grep FAILED "$work/grad-$name.log" | head -n 3 | tr '\n' ' ')$(tail -n 1 "$work/grad-$name.log")"
  fi
done

if dprun "$bundle/plans/mnist_cnn-cuda.dpx" --data "$bundle/data" --seed 1 --quiet --epochs 1 \
     --metrics "$work/epoch.json" > "$work/epoch.log" 2>&1; then
  detail=$(compare "$work/epoch.json" "$bundle/expected/mnist_cnn-epoch.json" 5e-2 0.02)
  record accuracy "$([ $? = 0 ] && echo PASS || echo FAIL)" "$detail"
else
  record accuracy FAIL "dprun: $(tail -n 2 "$work/epoch.log" | tr '\n' ' ')"
fi

if [ "$gpus" -ge 2 ]; then
  if dprun "$bundle/plans/mnist_cnn-r2-cuda.dpx" --data "$bundle/data" --seed 1 --quiet --epochs 1 \
       --steps-per-epoch 40 --metrics "$work/r2.json" > "$work/r2.log" 2>&1; then
    detail=$(compare "$work/r2.json" "$bundle/expected/mnist_cnn-r2-steps40.json" 2e-2 0.03)
    record nccl-r2 "$([ $? = 0 ] && echo PASS || echo FAIL)" "$detail"
  else
    record nccl-r2 FAIL "dprun: $(tail -n 3 "$work/r2.log" | tr '\n' ' ')"
  fi
else
  record nccl-r2 SKIP "needs 2 GPUs, this machine has $gpus (NCCL refuses two ranks on one GPU)"
fi

# SIGINT while the GPU trains: dprun stops at a step boundary, writes the finished epochs'
# metrics and exits 130 (the CPU's lit test checks the same).
"$bundle/bin/dprun" "$bundle/plans/mnist_cnn-cuda.dpx" --data "$bundle/data" --seed 1 \
  --epochs 1000 --metrics "$work/int.json" > "$work/int.log" 2>&1 &  # the binary: a function would run in a subshell
pid=$!
for _ in $(seq 600); do grep -q '^epoch 2/' "$work/int.log" && break; sleep 0.1; done
kill -INT $pid 2>/dev/null
for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  kill -KILL $pid; wait $pid 2>/dev/null
  record interrupt FAIL "dprun was still running 30 s after SIGINT"
else
  wait $pid; rc=$?
  if [ $rc = 130 ] && grep -q '"interrupted": "SIGINT"' "$work/int.json" 2>/dev/null; then
    record interrupt PASS "$(grep -m1 'interrupted by' "$work/int.log")"
  else
    record interrupt FAIL "exit $rc: $(tail -n 2 "$work/int.log" | tr '\n' ' ')"
  fi
fi

sanitizer_bin=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ $sanitizer = 0 ]; then
  record memcheck SKIP "--no-sanitizer"
elif [ -z "$sanitizer_bin" ]; then
  record memcheck SKIP "compute-sanitizer is not installed"
else
  if "$sanitizer_bin" --tool memcheck --error-exitcode 9 "$bundle/bin/dprun" \
       "$bundle/plans/mnist_cnn-cuda.dpx" --data "$bundle/data" --seed 1 --quiet --epochs 1 \
       --steps-per-epoch 2 > "$work/memcheck.log" 2>&1; then
    record memcheck PASS "$(grep -m1 'ERROR SUMMARY' "$work/memcheck.log")"
  else
    record memcheck FAIL "$(grep -m1 'ERROR SUMMARY' "$work/memcheck.log" || tail -n 3 "$work/memcheck.log" | tr '\n' ' ')"
  fi
fi

if [ $bench = 1 ]; then
  # Same model, batch, optimizer and data; two epochs of the subset, the second one timed.
  # The issue's targets: mnist_cnn 4x eager and 1.3x torch.compile; mnist_lstm 1.3x eager
  # (PyTorch's LSTM is cuDNN's). The GPU's peak through dp's own kernels first (cuBLAS and
  # cuDNN, f32 and bf16), which the dp runs' MFU divides by.
  export DP_PEAK_FILE="$work/peak.tsv"
  if dprun "$bundle/plans/mnist_cnn-cuda.dpx" --measure-peak > "$work/peak.log" 2>&1; then
    record peak INFO "$(grep -E '^(f32|bf16) ' "$work/peak.log" | awk '{printf "%s %s %s %s; ", $1, $2, $3, $4}')"
  else
    record peak FAIL "$(tail -n 2 "$work/peak.log" | tr '\n' ' ')"
  fi
  for model in mnist_cnn mnist_lstm; do
    dprun "$bundle/plans/$model-cuda.dpx" --data "$bundle/data" --seed 1 --quiet --epochs 2 \
      --metrics "$work/bench-$model-dp.json" > "$work/bench-$model-dp.log" 2>&1
    for mode in eager compile; do
      LD_LIBRARY_PATH=$peer_ld_path python3 "$bundle/bench/torch_peer.py" --model $model --data "$bundle/data" --epochs 2 \
        --device cuda $([ $mode = compile ] && echo --compile) \
        > "$work/bench-$model-$mode.json" 2> "$work/bench-$model-$mode.log"
    done
    detail=$(python3 - "$work" $model <<'PY'
import json, sys
w, model = sys.argv[1], sys.argv[2]
def rate(path):
    try:
        text = open(path).read().strip()
        try:
            doc = json.loads(text)          # dprun --metrics: one document
        except ValueError:
            doc = json.loads(text.splitlines()[-1])  # a peer: its result is the last line
        return doc["epochs"][-1]["samples_per_sec"]
    except Exception:
        return None
dp = rate(f"{w}/bench-{model}-dp.json")
eager, comp = rate(f"{w}/bench-{model}-eager.json"), rate(f"{w}/bench-{model}-compile.json")
fmt = lambda v: "-" if v is None else f"{v:,.0f}"
ratio = lambda a, b: "-" if a is None or b is None else f"{a / b:.2f}x"
try:
    c = json.load(open(f"{w}/bench-{model}-dp.json"))["compute"]
    mfu = f"; dp {c['tflops']:.2f} TFLOP/s, MFU {100 * c['mfu']:.1f}%" if "mfu" in c else ""
except Exception:
    mfu = ""
print(f"samples/s (epoch 2): dp {fmt(dp)}, pytorch eager {fmt(eager)}, torch.compile "
      f"{fmt(comp)}; dp/eager {ratio(dp, eager)}, dp/compile {ratio(dp, comp)}{mfu}")
PY
)
    record "bench-$model" INFO "$detail"
  done
fi

echo
echo "gpu-check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $gpus GPU(s)):"
printf '  %s\n' "${results[@]}"
exit $failed
