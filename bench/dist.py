#!/usr/bin/env python3
"""Data-parallel layouts of dp on this machine, in interleaved rounds.

Trains mnist_mlp on Fashion-MNIST as (a) 1 process, (b) 2 MPI processes x 1 replica and
(c) 1 process x 2 replica threads, the same global batch and steps, and reports samples/s per
layout (median over rounds), the allreduce time per train step against a plain MPI_Allreduce of
the same bytes (build/bin/dprt_comm_mpi_check bench), and how much of the communication the
schedule hid behind compute (1 - replica wait / reduce time).

    python3 bench/dist.py [--rounds 3] [--epochs 1] [--max-steps N] [--build build]
                          [--model models/mnist_cnn.mlir --batch 128] [--no-peer]

Where bench/.venv has PyTorch (bench/setup.sh), the same rounds also run PyTorch's
DistributedDataParallel over gloo with the same processes, threads (1 per process, each
process on a core of its own as mpirun binds dp's ranks) and global batch
(bench/peers/torch_peer.py, one process per rank), and report dp / DDP.

With --plot DIR it runs the scaling sweep instead and draws it as seed 002 does: epoch time,
samples/s and speedup against the number of processes, on 1 node and (as root, on 2 emulated
nodes made by scripts/cluster.sh, links shaped to --rate) on 2, each measured and predicted by
`dpc simulate` on the same axes (DIR/epoch_time.png, samples_per_sec.png, speedup.png, and the
numbers in DIR/scaling.json). A prediction uses the kernel times of a short profiling run of the
same plan on one node (`dprun --profile --max-steps 40`) plus that run's input time per step;
the topology is examples/topologies/local-shm.json on one node and namespace-RATE.json across
two. Every rank runs one compute thread.

    python3 bench/dist.py --plot docs/images/scaling [--model M] [--processes 1,2,4]
                          [--rate 1gbit] [--epochs 1]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from run import BENCH, ROOT, VENV_PY, common, model_optimizer  # the peers' model table
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader,tcp"]


def run(cmd, env):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout}")
    return result.stdout


def plot_sweep(args, env):
    """--plot: the processes x nodes sweep, measured and predicted, as PNGs."""
    try:
        import matplotlib
    except ImportError:
        # Debian's python3-matplotlib (scripts/setup.sh) belongs to the system interpreter.
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("dist.py: --plot needs matplotlib (scripts/setup.sh installs python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import signal
    # A TERM (or a Ctrl-C) still takes the emulated nodes down (the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("dist.py: terminated"))

    dpc = os.path.join(args.build, "bin", "dpc")
    dprun = os.path.join(args.build, "bin", "dprun")
    cluster = os.path.join(ROOT, "scripts", "cluster.sh")
    topologies = os.path.join(ROOT, "examples", "topologies")
    tmp = tempfile.mkdtemp(prefix="dp-dist-plot-")
    counts = [int(p) for p in args.processes.split(",")]
    env = dict(env, OMP_NUM_THREADS="1")
    nodes_list = [1]
    cluster_dir = os.path.join(tmp, "cluster")
    if os.geteuid() == 0 and any(p % 2 == 0 for p in counts):
        up = subprocess.run(["bash", cluster, "up", "--nodes", "2", "--rate", args.rate,
                             cluster_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
        if up.returncode == 0:
            nodes_list.append(2)
        else:
            print("dist.py: no emulated nodes, 1 node only:\n" + up.stdout, file=sys.stderr)
    else:
        print("dist.py: not root: 1 node only", file=sys.stderr)
    name = os.path.splitext(os.path.basename(args.model))[0]
    rows = []
    try:
        for p in counts:
            profile, metrics = os.path.join(tmp, f"prof-{p}.json"), os.path.join(tmp, f"pm-{p}.json")
            one = os.path.join(tmp, f"p{p}n1.dpx")
            run([dpc, "compile", args.model, "-o", one, "--quiet", "--processes", str(p),
                 "--bucket-mb", args.bucket_mb], env)
            launch = MPIRUN + ["-n", str(p)] if p > 1 else []
            run(launch + [dprun, one, "--data", args.data, "--epochs", "1", "--max-steps", "40",
                          "--profile", profile, "--metrics", metrics, "--quiet"], env)
            pm = json.load(open(metrics))
            input_per_step = pm["input_wait_seconds"] / 40
            for nodes in nodes_list:
                if p % nodes or (nodes > 1 and p < nodes):
                    continue
                plan = one
                if nodes > 1:
                    plan = os.path.join(tmp, f"p{p}n{nodes}.dpx")
                    run([dpc, "compile", args.model, "-o", plan, "--quiet", "--processes", str(p),
                         "--nodes", str(nodes), "--bucket-mb", args.bucket_mb], env)
                m_path = os.path.join(tmp, "m.json")
                cmd = [dprun, plan, "--data", args.data, "--epochs", str(args.epochs),
                       "--metrics", m_path, "--quiet"]
                if nodes == 1:
                    run(launch + cmd, env)
                else:
                    node_env = dict(env, DP_CLUSTER_DIR=cluster_dir)
                    if p // nodes > 1:
                        node_env["DP_CLUSTER_BTL"] = "self,vader,tcp"
                    run(["bash", cluster, "mpirun", "-n", str(p), "--map-by",
                         f"ppr:{p // nodes}:node", "-x", "OMP_NUM_THREADS=1"] + cmd, node_env)
                m = json.load(open(m_path))
                topology = os.path.join(topologies, "local-shm.json" if nodes == 1
                                        else f"namespace-{args.rate}.json")
                predicted_json = os.path.join(tmp, "pred.json")
                run([dpc, "simulate", plan, "--profile", profile, "--topology", topology,
                     "--json", predicted_json], env)
                predicted = json.load(open(predicted_json))["prediction"]
                steps = 60000 // args.batch
                step_s = predicted["step_us"] * 1e-6 + input_per_step
                measured_epoch = statistics.median(e["seconds"] for e in m["epochs"])
                row = {"processes": p, "nodes": nodes,
                       "measured_epoch_s": measured_epoch,
                       "measured_samples_per_s": statistics.median(
                           e["samples_per_sec"] for e in m["epochs"]),
                       "predicted_epoch_s": steps * step_s,
                       "predicted_samples_per_s": args.batch / step_s,
                       "test_accuracy": m["test_accuracy"]}
                rows.append(row)
                print(f"{p} process(es) on {nodes} node(s): epoch {measured_epoch:.2f} s measured,"
                      f" {row['predicted_epoch_s']:.2f} s predicted", file=sys.stderr)
    finally:
        if len(nodes_list) > 1:
            subprocess.run(["bash", cluster, "down", cluster_dir], stdout=subprocess.DEVNULL)
    base = [r for r in rows if r["processes"] == counts[0] and r["nodes"] == 1][0]
    for r in rows:
        r["measured_speedup"] = r["measured_samples_per_s"] / base["measured_samples_per_s"]
        r["predicted_speedup"] = r["predicted_samples_per_s"] / base["predicted_samples_per_s"]
    os.makedirs(args.plot, exist_ok=True)
    figures = [("epoch_time", "epoch_s", "seconds per epoch"),
               ("samples_per_sec", "samples_per_s", "samples/s"),
               ("speedup", "speedup", f"speedup over {counts[0]} process")]
    link = {1: "1 node (shared memory)", 2: f"2 nodes ({args.rate} links)"}
    for stem, key, label in figures:
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        for nodes, color in zip(nodes_list, ("tab:blue", "tab:orange")):
            mine = sorted((r for r in rows if r["nodes"] == nodes), key=lambda r: r["processes"])
            xs = [r["processes"] for r in mine]
            ax.plot(xs, [r["measured_" + key] for r in mine], "o-", color=color,
                    label=f"{link[nodes]}, measured")
            ax.plot(xs, [r["predicted_" + key] for r in mine], "x--", color=color,
                    label=f"{link[nodes]}, predicted")
        if key == "speedup":
            ax.plot(counts, [c / counts[0] for c in counts], ":", color="gray", label="linear")
        ax.set_xlabel("processes (1 compute thread each, on 2 cores)")
        ax.set_ylabel(label)
        ax.set_xticks(counts)
        ax.set_title(f"{name}, global batch {args.batch}, {args.epochs} epoch(s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        out = os.path.join(args.plot, stem + ".png")
        fig.savefig(out + ".tmp.png")
        os.replace(out + ".tmp.png", out)
        plt.close(fig)
        print("wrote " + out, file=sys.stderr)
    with open(os.path.join(args.plot, "scaling.json.tmp"), "w") as f:
        json.dump(rows, f, indent=1)
    os.replace(os.path.join(args.plot, "scaling.json.tmp"), os.path.join(args.plot, "scaling.json"))
    print(f"{'processes':>9} {'nodes':>5} {'epoch s':>8} {'predicted':>9} {'samples/s':>10} "
          f"{'predicted':>10} {'speedup':>7} {'predicted':>9} {'test acc':>8}")
    for r in rows:
        print(f"{r['processes']:9d} {r['nodes']:5d} {r['measured_epoch_s']:8.2f} "
              f"{r['predicted_epoch_s']:9.2f} {r['measured_samples_per_s']:10.0f} "
              f"{r['predicted_samples_per_s']:10.0f} {r['measured_speedup']:6.2f}x "
              f"{r['predicted_speedup']:8.2f}x {r['test_accuracy']:8.4f}")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ddp(args, name, processes, env):
    """PyTorch DDP over gloo: `processes` ranks of bench/peers/torch_peer.py, 1 thread each,
    rank r pinned to core r (mod the cores); rank 0's JSON result."""
    hyper = model_optimizer(args.model)
    cmd = [VENV_PY, os.path.join(BENCH, "peers", "torch_peer.py"), "--model", name,
           "--data", args.data, "--epochs", str(args.epochs), "--batch", str(args.batch),
           "--threads", "1", "--seed", "0"]
    if hyper.get("optimizer") in ("sgd", "adam"):
        cmd += ["--optimizer", hyper["optimizer"]]
    if "lr" in hyper:
        cmd += ["--lr", repr(hyper["lr"])]
    if args.max_steps:
        cmd += ["--max-steps", str(args.max_steps)]
    cores = sorted(os.sched_getaffinity(0))
    port = str(free_port())
    procs = []
    for rank in range(processes):
        renv = dict(env, RANK=str(rank), WORLD_SIZE=str(processes), MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=port, OMP_NUM_THREADS="1")
        core = cores[rank % len(cores)]
        procs.append(subprocess.Popen(cmd, env=renv, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True,
                                      preexec_fn=lambda c=core: os.sched_setaffinity(0, [c])))
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit("PyTorch DDP failed:\n" + "\n".join(outs))
    return json.loads(outs[0].strip().splitlines()[-1])


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
    parser.add_argument("--max-steps", type=int, default=0,
                        help="at most N train steps per epoch (dp and the peer)")
    parser.add_argument("--no-peer", action="store_true",
                        help="leave out PyTorch DistributedDataParallel")
    parser.add_argument("--plot", metavar="DIR",
                        help="run the scaling sweep and write its PNGs and JSON to DIR")
    parser.add_argument("--processes", default="1,2,4", help="--plot: process counts")
    parser.add_argument("--rate", default="1gbit", help="--plot: the emulated nodes' links")
    args = parser.parse_args()
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    if args.plot:
        return plot_sweep(args, env)
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
    model_name = os.path.splitext(os.path.basename(args.model))[0]
    peer = (not args.no_peer and os.path.exists(VENV_PY) and model_name in common.MODELS)
    ddp = "PyTorch DDP 2 x 1 (gloo)"
    if peer:
        results[ddp] = []
    steps_per_epoch = 60000 // args.batch
    if args.max_steps:
        steps_per_epoch = min(steps_per_epoch, args.max_steps)
    params = 79552  # mnist_mlp's gradient elements, until a run's metrics say
    for round_ in range(args.rounds):
        for name, (r, p) in layouts.items():
            metrics = os.path.join(tmp, "m.json")
            cmd = [dprun, plans[name], "--data", args.data, "--epochs", str(args.epochs),
                   "--metrics", metrics, "--quiet"]
            if args.max_steps:
                cmd += ["--max-steps", str(args.max_steps)]
            run((MPIRUN + ["-n", str(p)] if p > 1 else []) + cmd, env)
            m = json.load(open(metrics))
            params = m.get("params", params)
            steps = len(m["epochs"]) * steps_per_epoch
            results[name].append({
                "rate": statistics.mean(e["samples_per_sec"] for e in m["epochs"]),
                "reduce_ms": 1e3 * m["allreduce_seconds"] / steps,
                "wait_ms": 1e3 * m["allreduce_wait_seconds"] / (steps * r),
                "acc": m["test_accuracy"],
            })
        if peer:
            res = run_ddp(args, model_name, 2, env)
            results[ddp].append({"rate": res["samples_per_sec"], "reduce_ms": float("nan"),
                                 "wait_ms": float("nan"), "acc": res["test_accuracy"]})
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
        if name == ddp:
            print(f"{name:26} {rate:10.0f} {rate / base:8.2f}x {'-':>18} {'-':>13} {'-':>7} "
                  f"{rows[-1]['acc']:8.4f}")
            continue
        print(f"{name:26} {rate:10.0f} {rate / base:8.2f}x {reduce_ms:18.3f} {wait_ms:13.3f} "
              f"{hidden:6.0%} {rows[-1]['acc']:8.4f}")
    if peer:
        mine = statistics.median(x["rate"] for x in results["2 processes x 1 replica"])
        theirs = statistics.median(x["rate"] for x in results[ddp])
        print(f"dp 2 processes x 1 replica / PyTorch DDP 2 x 1: {mine / theirs:.2f}x")
    check = os.path.join(args.build, "bin", "dprt_comm_mpi_check")
    if os.path.exists(check):
        out = run(MPIRUN + ["-n", "2", check, "bench", "--elements", str(params), "--iterations",
                            "300"], env)
        line = [l for l in out.splitlines() if "MPI_Allreduce" in l]
        print("the same bytes alone: " + (line[-1] if line else out.strip()))


if __name__ == "__main__":
    main()
