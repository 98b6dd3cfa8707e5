#!/usr/bin/env python3
"""Parameter servers against allreduce on this machine: samples/s and test accuracy of one
model under allreduce data parallelism (2 processes), --sync, --staleness K and asynchronous
parameter servers (1 server + 2 workers), each also with worker 1 (or rank 1) slowed by a
CPU-bound neighbour on its core.

Usage: bench/ps.py [--model mnist_mlp] [--epochs 2] [--max-steps N] [--staleness 2]
                   [--data DIR] [--build build]

Each process runs one compute thread, pinned: the server and worker 0 (rank 0) on core 0,
worker 1 (rank 1) on core 1, where the slowed runs also start a busy loop. samples/s is the
training samples of every worker over worker 0's train phase, which ends with the last
worker's last step. Under --sync and --staleness each worker trains its rows of every batch;
asynchronous workers share the batches, a faster one training more of them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Pins each rank to its core and starts the neighbour beside the slowed rank (by the rank
# variables mpirun sets).
WRAPPER = r"""#!/bin/sh
rank=${OMPI_COMM_WORLD_RANK:-0}
core=0
[ "$rank" = "$DP_BENCH_SLOW_RANK" ] && core=1
[ "$rank" = "$DP_BENCH_SLOW_RANK" ] && [ "$DP_BENCH_NEIGHBOUR" = 1 ] && {
  taskset -c 1 sh -c 'while :; do :; done' & busy=$!
  trap 'kill $busy 2>/dev/null' EXIT
}
taskset -c $core "$@"
status=$?
[ -n "$busy" ] && kill $busy 2>/dev/null
exit $status
"""


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=3600)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stdout[-3000:]))
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mnist_mlp")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--staleness", type=int, default=2)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bin_ = os.path.join(args.build, "bin")
    tmp = tempfile.mkdtemp(prefix="dp-ps-bench-")
    wrapper = os.path.join(tmp, "pin.sh")
    with open(wrapper, "w") as f:
        f.write(WRAPPER)
    os.chmod(wrapper, 0o755)
    model = os.path.join(ROOT, "models", args.model + ".mlir")
    layouts = [
        ("allreduce 2 processes", ["--processes", "2"], 2, 1),
        ("parameter server --sync", ["--strategy", "parameter-server", "--sync"], 3, 2),
        ("parameter server --staleness %d" % args.staleness,
         ["--strategy", "parameter-server", "--staleness", str(args.staleness)], 3, 2),
        ("parameter server asynchronous", ["--strategy", "parameter-server"], 3, 2),
    ]
    print("%s, %d epoch(s)%s, one thread per process; samples/s (test accuracy)" %
          (args.model, args.epochs, ", %d steps" % args.max_steps if args.max_steps else ""))
    print("| layout | alone | worker 1 beside a busy loop | slowdown |")
    print("| --- | --- | --- | --- |")
    for name, flags, ranks, slow_rank in layouts:
        plan = os.path.join(tmp, "plan.dpx")
        report = run([os.path.join(bin_, "dpc"), "compile", model, "-o", plan] + flags)
        batch = int(re.search(r"global batch (\d+)", report).group(1))
        cells = []
        for neighbour in (0, 1):
            env = dict(os.environ, DP_BENCH_SLOW_RANK=str(slow_rank),
                       DP_BENCH_NEIGHBOUR=str(neighbour), DPRUN_THREADS="1")
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                   "--mca", "btl", "self,vader,tcp", "-n", str(ranks), wrapper,
                   os.path.join(bin_, "dprun"), plan, "--data", args.data, "--epochs",
                   str(args.epochs)]
            if args.max_steps:
                cmd += ["--max-steps", str(args.max_steps)]
            out = run(cmd, env)
            train = float(re.search(r"^train\s+([0-9.]+)\s+[0-9.]+%", out, re.M).group(1))
            per_epoch = int(re.search(r"(\d+) steps per epoch", out).group(1))
            accuracy = float(re.search(r"^test\s+loss [0-9.]+\s+accuracy ([0-9.]+)", out,
                                       re.M).group(1))
            total_steps = min(per_epoch, args.max_steps or 1 << 60) * args.epochs
            samples = total_steps * batch
            cells.append((samples / train, accuracy))
        (a, acc_a), (b, acc_b) = cells
        print("| %s | %s (%.4f) | %s (%.4f) | %.2fx |" %
              (name, format(int(a), ","), acc_a, format(int(b), ","), acc_b, a / b))


if __name__ == "__main__":
    main()
