#!/usr/bin/env python3
"""The cost of dprun --reproducible: the same plan trained in alternating rounds with and
without the flag (dp alone, one machine, one run: ratios only), samples/s of the train phase
from each run's metrics. Also checks that the fast mode with 1 and 2 threads leaves different
parameters where --reproducible leaves the same (printed, not asserted).

  python3 bench/reproducible.py --model mnist_cnn --steps 40 --rounds 3
  python3 bench/reproducible.py --model resnet50v2_32 --steps 12 --rounds 2

Needs an idle machine. Standard library only.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed (rc {r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mnist_cnn")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--compile-args", default="", help="extra dpc compile arguments")
    a = ap.parse_args()
    dpc, dprun = (os.path.join(a.build, "bin", b) for b in ("dpc", "dprun"))
    tmp = tempfile.mkdtemp(prefix="dp-repro-")
    plan = os.path.join(tmp, "m.dpx")
    run([dpc, "compile", os.path.join(ROOT, "models", a.model + ".mlir"), "-o", plan, "--quiet"]
        + a.compile_args.split())
    data = ["--data", "/usr/share/datasets/fashion-mnist"]
    if "resnet" in a.model:
        cifar = os.path.join(tmp, "cifar")
        run([sys.executable, os.path.join(ROOT, "test", "e2e", "make_cifar.py"), cifar,
             "--per-file", "256"])
        data = ["--data", cifar]
    print(f"{cpu_name()}, {os.cpu_count()} cores; {a.model}, {a.steps} steps, "
          f"--threads {a.threads}, {a.rounds} alternating rounds")
    rates = {"fast": [], "reproducible": []}
    for rnd in range(a.rounds):
        for mode in ("fast", "reproducible"):
            metrics = os.path.join(tmp, f"{mode}-{rnd}.json")
            cmd = [dprun, plan, *data, "--steps-per-epoch", str(a.steps), "--epochs", "1",
                   "--threads", str(a.threads), "--prefetch", "0", "--quiet", "--metrics", metrics]
            if mode == "reproducible":
                cmd.append("--reproducible")
            run(cmd)
            m = json.load(open(metrics))
            rate = m["epochs"][-1].get("samples_per_sec") or m.get("samples_per_sec")
            rates[mode].append(rate)
            print(f"  round {rnd + 1} {mode:13s} {rate:9.1f} samples/s")
    f, r = statistics.median(rates["fast"]), statistics.median(rates["reproducible"])
    print(f"median: fast {f:.1f}, reproducible {r:.1f} samples/s: reproducible takes "
          f"{f / r:.3f}x the fast mode's time ({(f / r - 1) * 100:+.1f}%)")
    # The fast mode's thread dependence, for the record.
    bins = {}
    for mode in ("fast", "reproducible"):
        for t in (1, 2):
            out = os.path.join(tmp, f"{mode}-t{t}.bin")
            cmd = [dprun, plan, *data, "--steps-per-epoch", "4", "--epochs", "1", "--threads",
                   str(t), "--prefetch", "0", "--quiet", "--save-params", out]
            if mode == "reproducible":
                cmd.append("--reproducible")
            run(cmd)
            bins[(mode, t)] = open(out, "rb").read()
        same = bins[(mode, 1)] == bins[(mode, 2)]
        print(f"{mode}: 1 and 2 threads leave {'the same' if same else 'different'} "
              "parameters after 4 steps")


if __name__ == "__main__":
    main()
