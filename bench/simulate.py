#!/usr/bin/env python3
"""Checks `dpc simulate` against runs on emulated nodes with shaped links.

Brings up 2 namespace nodes (scripts/cluster.sh, needs root), and for each case: compiles the
plan, profiles it on the unshaped link (`dprun --profile`), then for each link rate shapes every
node's link (tc tbf), measures the mean train step (the profile of that run), and predicts it
with `dpc simulate` from the unshaped profile and examples/topologies/namespace-RATE.json.
Prints the table of predicted and measured steps and the errors, writes them as JSON.

    python3 bench/simulate.py [--rates 1gbit,100mbit] [--cases all|quick] [--json FILE]
                              [--max-error 20] [--keep-cluster DIR]

--max-error P exits 1 when a prediction is off by more than P percent (the test in
test/launch/cluster-simulate.sh). Every rank runs one compute thread (OMP_NUM_THREADS=1): two
nodes of one rank have a core each; four ranks share the 2 cores.

The model assumes that the job has the machine to itself. Around each measurement (just before
it, and after the case) the script measures what other processes keep busy while no job of its
own runs (the busy time in /proc/stat over 0.5 s); a case with more than --max-other-load cores
busy so (default 0.25) is reported as skipped, saying so, and not compared. When every case is
skipped, the script exits 77 (the test's "skipped").
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "scripts", "cluster.sh")

# name, model, processes (on 2 nodes), --bucket-mb, dprun --allreduce, steps
CASES = [
    ("mnist_mlp 2x1", "mnist_mlp", 2, "25", "auto", 200),
    ("mnist_cnn 2x1", "mnist_cnn", 2, "0.5", "auto", 20),
    ("mnist_mlp 2x2 flat", "mnist_mlp", 4, "25", "flat", 100),
    ("mnist_mlp 2x2 hierarchical", "mnist_mlp", 4, "25", "hierarchical", 100),
]
QUICK = {"mnist_mlp 2x1", "mnist_cnn 2x1"}


TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds():
    """CPU seconds the whole machine has spent busy (every core, every process)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (sum(fields[:3]) + sum(fields[5:8])) / TICKS


def other_load(seconds=0.5):
    """The cores other processes keep busy while this script runs nothing (it sleeps)."""
    busy, wall = busy_seconds(), time.monotonic()
    time.sleep(seconds)
    return max(0.0, busy_seconds() - busy) / (time.monotonic() - wall)


def run(cmd, env=None, timeout=600):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=timeout)
    if result.returncode:
        sys.exit("simulate.py: failed (%d): %s\n%s" % (result.returncode, " ".join(cmd),
                                                      result.stdout[-3000:]))
    return result.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--rates", default="1gbit,100mbit")
    ap.add_argument("--cases", choices=["all", "quick"], default="all")
    ap.add_argument("--json")
    ap.add_argument("--max-error", type=float)
    ap.add_argument("--max-other-load", type=float, default=0.25,
                    help="cores other processes may keep busy during a measurement before its "
                    "case is skipped (default 0.25)")
    ap.add_argument("--cluster-dir", help="use the cluster already up in DIR (else make one)")
    args = ap.parse_args()
    bin_ = os.path.join(args.build, "bin")
    work = tempfile.mkdtemp(prefix="dp-simulate-")
    own = args.cluster_dir is None
    cluster_dir = args.cluster_dir or os.path.join(work, "cluster")
    env = dict(os.environ, DP_CLUSTER_DIR=cluster_dir)
    if own:
        run(["bash", CLUSTER, "up", "--nodes", "2", cluster_dir])
    rows = []
    try:
        for name, model, processes, bucket_mb, allreduce, steps in CASES:
            if args.cases == "quick" and name not in QUICK:
                continue
            plan = os.path.join(work, name.replace(" ", "-") + ".dpx")
            run([os.path.join(bin_, "dpc"), "compile", os.path.join(ROOT, "models", model + ".mlir"),
                 "-o", plan, "--processes", str(processes), "--nodes", "2", "--bucket-mb",
                 bucket_mb, "--quiet"])
            per_node = processes // 2
            case_env = dict(env)
            if per_node > 1:
                case_env["DP_CLUSTER_BTL"] = "self,vader,tcp"

            loads = []  # the cores other processes kept busy in each measurement of the case

            def measure(tag):
                profile = os.path.join(work, "%s-%s.json" % (name.replace(" ", "-"), tag))
                loads.append(other_load())
                run(["bash", CLUSTER, "mpirun", "-n", str(processes), "--map-by",
                     "ppr:%d:node" % per_node, "-x", "OMP_NUM_THREADS=1",
                     os.path.join(bin_, "dprun"), plan, "--data", args.data, "--epochs", "1",
                     "--steps-per-epoch", str(steps), "--allreduce", allreduce, "--profile", profile,
                     "--quiet"], env=case_env)
                return profile

            def predict_case():
                """The case's rows: profiled unshaped, then measured and predicted per rate."""
                run(["bash", CLUSTER, "shape", "none", cluster_dir])
                del loads[:]
                base = measure("unshaped")
                print("%-28s %-8s measured %10.1f us" % (name, "unshaped",
                      json.load(open(base))["step_us"]["mean"]), flush=True)
                case_rows = []
                for rate in args.rates.split(","):
                    run(["bash", CLUSTER, "shape", rate, cluster_dir])
                    measured = json.load(open(measure(rate)))["step_us"]["mean"]
                    out = os.path.join(work, "%s-%s-predicted.json" % (name.replace(" ", "-"), rate))
                    run([os.path.join(bin_, "dpc"), "simulate", plan, "--profile", base,
                         "--topology",
                         os.path.join(ROOT, "examples", "topologies", "namespace-%s.json" % rate),
                         "--allreduce", allreduce, "--json", out])
                    predicted = json.load(open(out))["prediction"]
                    error = 100.0 * (predicted["step_us"] - measured) / measured
                    case_rows.append({"case": name, "rate": rate, "measured_us": measured,
                                      "predicted_us": predicted["step_us"],
                                      "predicted_comm_us": predicted["communication_us"],
                                      "predicted_hidden": predicted["hidden"],
                                      "error_percent": error})
                    print("%-28s %-8s measured %10.1f us  predicted %10.1f us  error %+6.1f%%" %
                          (name, rate, measured, predicted["step_us"], error), flush=True)
                loads.append(other_load())
                load = max(loads)
                for row in case_rows:
                    row["other_load_cores"] = load
                    if load > args.max_other_load:
                        row["skipped"] = ("other processes kept %.2f cores busy around its "
                                          "measurements (more than %g): the model assumes idle cores"
                                          % (load, args.max_other_load))
                if load > args.max_other_load:
                    print("%s: SKIPPED: %s" % (name, case_rows[0]["skipped"]), flush=True)
                return case_rows

            case_rows = predict_case()
            compared = [r for r in case_rows if "skipped" not in r]
            worst_case = max((abs(r["error_percent"]) for r in compared), default=0)
            if args.max_error is not None and worst_case > args.max_error:
                # The profile and the measurement are separate runs: on a VM whose speed moves
                # between them (seen: one step 22% apart, 3-9% on every rerun), measure again.
                print("%s: off by %.1f%%, profiling and measuring it once more" %
                      (name, worst_case), flush=True)
                case_rows = predict_case()
            rows += case_rows
    finally:
        subprocess.run(["bash", CLUSTER, "shape", "none", cluster_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if own:
            subprocess.run(["bash", CLUSTER, "down", cluster_dir], stdout=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(args.json + ".tmp", args.json)
    compared = [r for r in rows if "skipped" not in r]
    worst = max((abs(r["error_percent"]) for r in compared), default=0)
    skipped = len(rows) - len(compared)
    print("largest error %.1f%% over %d predictions%s" %
          (worst, len(compared), " (%d skipped: the machine was shared)" % skipped if skipped else ""))
    if args.max_error is not None and worst > args.max_error:
        sys.exit("simulate.py: a prediction is off by more than %.0f%%" % args.max_error)
    if rows and not compared:
        print("SKIPPED: every comparison was measured on a shared machine", flush=True)
        sys.exit(77)


if __name__ == "__main__":
    main()
