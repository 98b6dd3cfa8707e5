#!/usr/bin/env python3
"""Input prefetch on and off, side by side: dprun --prefetch 0 vs --prefetch N on one model.

Usage: python3 bench/prefetch.py [--model mnist_mlp] [--rounds 3] [--epochs 3] [--ahead 2]
                                 [--data DIR] [--build build]

Three layouts, each run with the batches gathered on the compute threads (--prefetch 0) and by
a loader thread (--prefetch N), in interleaved rounds:
  threads-all   one process, OpenMP's default threads (every core of the process computes)
  threads-1     one process, OMP_NUM_THREADS=1 (a core is left for the loader)
  mpi-2         mpirun -n 2 on a plan for 2 processes (each rank bound to a core)
For each it prints the median samples/s over the epochs after the first, the input wait per
epoch (metrics "input_wait_seconds"), and the ratio prefetch/inline of the medians. Needs
build/bin/dpc and dprun; standard library only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--model", default="mnist_mlp")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--ahead", type=int, default=2)
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
parser.add_argument("--build", default="build")
args = parser.parse_args()
if args.epochs < 2:
    sys.exit("prefetch.py: --epochs must be at least 2 (the first epoch is not counted)")

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
dpc = os.path.join(args.build, "bin", "dpc")
dprun = os.path.join(args.build, "bin", "dprun")
for tool in (dpc, dprun):
    if not os.access(tool, os.X_OK):
        sys.exit("prefetch.py: %s is missing: build dp first (scripts/build.sh)" % tool)
model = os.path.join(root, "models", args.model + ".mlir")
tmp = tempfile.mkdtemp(prefix="dp-prefetch-")
mpirun = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader,tcp"]
if os.geteuid() == 0:
    mpirun.insert(1, "--allow-run-as-root")


def compile_plan(name, extra):
    path = os.path.join(tmp, name + ".dpx")
    subprocess.run([dpc, "compile", model, "-o", path, "--quiet"] + extra, check=True)
    return path


one = compile_plan("p1", [])
layouts = {"threads-all": ([], one, {}), "threads-1": ([], one, {"OMP_NUM_THREADS": "1"})}
if shutil.which("mpirun"):
    layouts["mpi-2"] = (mpirun + ["-n", "2"], compile_plan("p2", ["--processes", "2"]), {})
else:
    print("prefetch.py: no mpirun: the mpi-2 layout is left out")


def run(layout, ahead):
    launcher, plan, env = layouts[layout]
    metrics = os.path.join(tmp, "m.json")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = launcher + [dprun, plan, "--data", args.data, "--epochs", str(args.epochs),
                      "--prefetch", str(ahead), "--metrics", metrics, "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
    epochs = json.load(open(metrics))["epochs"][1:]
    return (statistics.median(e["samples_per_sec"] for e in epochs),
            statistics.mean(e["input_wait_seconds"] for e in epochs))


results = {(layout, ahead): [] for layout in layouts for ahead in (0, args.ahead)}
for r in range(args.rounds):
    for layout in layouts:
        for ahead in (0, args.ahead):
            results[(layout, ahead)].append(run(layout, ahead))
    print("round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)

print("%s, %d epochs, %d rounds, %d cores" % (args.model, args.epochs, args.rounds, os.cpu_count()))
print("%-12s %-10s %22s %16s" % ("layout", "prefetch", "samples/s median [min-max]", "input wait/epoch"))
for layout in layouts:
    medians = {}
    for ahead in (0, args.ahead):
        rates = [x[0] for x in results[(layout, ahead)]]
        waits = [x[1] for x in results[(layout, ahead)]]
        medians[ahead] = statistics.median(rates)
        print("%-12s %-10d %9.0f [%.0f-%.0f] %14.3f s" % (layout, ahead, medians[ahead], min(rates),
                                                          max(rates), statistics.median(waits)))
    print("%-12s ratio prefetch/inline: %.2fx" % (layout, medians[args.ahead] / medians[0]))
shutil.rmtree(tmp, ignore_errors=True)
