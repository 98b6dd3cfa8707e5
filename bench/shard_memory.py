#!/usr/bin/env python3
"""What sharded optimizer state saves (dpc compile --shard-optimizer 1): a model trained with
Adam on R devices of one process (or, with --processes, on P processes of one device each,
under mpirun), sharded and not, a few steps each; the compile report's state per device and
the largest share, and dprun's maximum resident memory, measured (of the largest rank with
--processes). The saving per device is the difference of the two runs' RSS over R (over 1
with --processes), printed beside the plan's.

  python3 bench/shard_memory.py --model resnet50v2_32 --devices 2,4,8
  python3 bench/shard_memory.py --model mnist_cnn --devices 2,4
  python3 bench/shard_memory.py --model resnet50v2_32 --devices 2,4 --processes
  python3 bench/shard_memory.py --model resnet50v2_32 --devices 2,4 --stages 1,2

--stages A,B compares two stages (default 0,1: unsharded and stage 1; 1,2: what stage 2, the
gradients' buckets in the train step's memory, saves over stage 1). "planned" is the
difference of the two plans' arenas per device.

The model's optimizer is replaced by Adam (lr 1e-3). Standard library only; memory, not time,
so the machine need not be idle.
"""
import argparse
import os
import re
import sys
import tempfile

from reproducible import ROOT, cpu_name, run  # bench/'s helpers (sys.path[0] is bench/)


def max_rss_kb(cmd):
    """The maximum resident set of `cmd` (a child of its own: a fresh process's high-water
    mark, read through a wrapper so earlier children do not count)."""
    wrapper = ("import resource, subprocess, sys\n"
               "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
               "if r.returncode: sys.exit(r.returncode)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    return int(run([sys.executable, "-c", wrapper] + cmd).strip().splitlines()[-1])


def mib(text, label):
    m = re.search(re.escape(label) + r"\s+(\d+)", text)
    return int(m.group(1)) / 2**20 if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50v2_32")
    ap.add_argument("--devices", default="2,4,8")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--processes", action="store_true",
                    help="the counts are processes of 1 device each (mpirun), not devices")
    ap.add_argument("--stages", default="0,1", help="the two --shard-optimizer stages compared")

    a = ap.parse_args()
    dpc, dprun = (os.path.join(a.build, "bin", b) for b in ("dpc", "dprun"))
    tmp = tempfile.mkdtemp(prefix="dp-shard-")
    source = open(os.path.join(ROOT, "models", a.model + ".mlir")).read()
    model = os.path.join(tmp, a.model + "_adam.mlir")
    with open(model, "w") as f:
        f.write(re.sub(r"#graph\.(sgd|momentum|adam)<[^>]*>", "#graph.adam<lr = 1.0e-03>", source))
    data = ["--data", "/usr/share/datasets/fashion-mnist"]
    extra = []
    if "resnet" in a.model:
        cifar = os.path.join(tmp, "cifar")
        run([sys.executable, os.path.join(ROOT, "test", "e2e", "make_cifar.py"), cifar,
             "--per-file", "256"])
        data = ["--data", cifar]
        extra = ["--batch-norm-stats", "local"]
    first, second = (int(x) for x in a.stages.split(","))
    print(f"{cpu_name()}; {a.model} with Adam, {a.steps} steps, --threads {a.threads}; "
          f"--shard-optimizer {first} against {second}")
    print(f"{'P' if a.processes else 'R':>3} {'state/device':>13} {'largest share':>14} "
          f"{f'RSS stage {first}':>14} {f'RSS stage {second}':>14} {'saved/device':>13} "
          f"{'planned':>9}")
    for r in (int(x) for x in a.devices.split(",")):
        rss = {}
        report = {}
        for shard in (first, second):
            plan = os.path.join(tmp, f"r{r}s{shard}.dpx")
            layout = "--processes" if a.processes else "--devices-per-process"
            report[shard] = run([dpc, "compile", model, "-o", plan, layout, str(r),
                                 "--shard-optimizer", str(shard)] + extra)
            launch = (["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl",
                       "self,vader,tcp", "-n", str(r)] if a.processes else [])
            rss[shard] = max_rss_kb(launch + [dprun, plan] + data +
                                    ["--steps-per-epoch", str(a.steps), "--threads",
                                     str(a.threads), "--prefetch", "0", "--quiet"])
        whole = mib(report[first], "optimizer state" if first == 0 else
                    "optimizer state (largest share)")
        share = mib(report[second], "optimizer state (largest share)")
        saved = (rss[first] - rss[second]) / 1024 / (1 if a.processes else r)
        planned = mib(report[first], "arena total") - mib(report[second], "arena total")
        print(f"{r:>3} {whole:>9.2f} MiB {share:>10.2f} MiB {rss[first]:>11,} KB "
              f"{rss[second]:>11,} KB {saved:>9.1f} MiB {planned:>5.1f} MiB")


if __name__ == "__main__":
    main()
