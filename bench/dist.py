#!/usr/bin/env python3
"""Data-parallel layouts of dp on this machine, in interleaved rounds.

Trains mnist_mlp on Fashion-MNIST as (a) 1 process, (b) 2 MPI processes x 1 replica and
(c) 1 process x 2 replica threads, the same global batch and steps, and reports samples/s per
layout (median over rounds), the allreduce time per train step against a plain MPI_Allreduce of
the same bytes (build/bin/dprt_comm_mpi_check bench), and how much of the communication the
schedule hid behind compute (1 - replica wait / reduce time).

    python3 bench/dist.py [--rounds 3] [--epochs 1] [--build build]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader,tcp"]


def run(cmd, env):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model", default=os.path.join(ROOT, "models", "mnist_mlp.mlir"))
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--bucket-mb", default="25")
    parser.add_argument("--batch", type=int, default=100,
                        help="the model's global batch (for steps per epoch: 60000 / batch)")
    args = parser.parse_args()
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    dpc = os.path.join(args.build, "bin", "dpc")
    dprun = os.path.join(args.build, "bin", "dprun")
    tmp = tempfile.mkdtemp(prefix="dp-dist-bench-")
    layouts = {
        "1 process": (1, 1),
        "2 processes x 1 replica": (1, 2),
        "1 process x 2 replicas": (2, 1),
    }
    plans = {}
    for name, (r, p) in layouts.items():
        plans[name] = os.path.join(tmp, f"r{r}p{p}.dpx")
        run([dpc, "compile", args.model, "-o", plans[name], "--quiet", "--devices-per-process",
             str(r), "--processes", str(p), "--bucket-mb", args.bucket_mb], env)
    results = {name: [] for name in layouts}
    for round_ in range(args.rounds):
        for name, (r, p) in layouts.items():
            metrics = os.path.join(tmp, "m.json")
            cmd = [dprun, plans[name], "--data", args.data, "--epochs", str(args.epochs),
                   "--metrics", metrics, "--quiet"]
            run((MPIRUN + ["-n", str(p)] if p > 1 else []) + cmd, env)
            m = json.load(open(metrics))
            steps = len(m["epochs"]) * (60000 // args.batch)
            results[name].append({
                "rate": statistics.mean(e["samples_per_sec"] for e in m["epochs"]),
                "reduce_ms": 1e3 * m["allreduce_seconds"] / steps,
                "wait_ms": 1e3 * m["allreduce_wait_seconds"] / (steps * r),
                "acc": m["test_accuracy"],
            })
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    base = statistics.median(x["rate"] for x in results["1 process"])
    print(f"{os.path.basename(args.model)}, global batch {args.batch}, {args.epochs} epoch(s), {args.rounds} rounds, "
          f"{os.cpu_count()} cores, bucket {args.bucket_mb} MiB")
    print(f"{'layout':26} {'samples/s':>10} {'vs 1 proc':>9} {'allreduce ms/step':>18} "
          f"{'wait ms/step':>13} {'hidden':>7} {'test acc':>8}")
    for name, rows in results.items():
        rate = statistics.median(x["rate"] for x in rows)
        reduce_ms = statistics.median(x["reduce_ms"] for x in rows)
        wait_ms = statistics.median(x["wait_ms"] for x in rows)
        hidden = max(0.0, 1 - wait_ms / reduce_ms) if reduce_ms > 0 else float("nan")
        print(f"{name:26} {rate:10.0f} {rate / base:8.2f}x {reduce_ms:18.3f} {wait_ms:13.3f} "
              f"{hidden:6.0%} {rows[-1]['acc']:8.4f}")
    check = os.path.join(args.build, "bin", "dprt_comm_mpi_check")
    if os.path.exists(check):
        out = run(MPIRUN + ["-n", "2", check, "bench", "--elements", "79552", "--iterations", "300"],
                  env)
        line = [l for l in out.splitlines() if "MPI_Allreduce" in l]
        print("the same bytes alone: " + (line[-1] if line else out.strip()))


if __name__ == "__main__":
    main()
