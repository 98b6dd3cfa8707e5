#!/usr/bin/env python3
"""dp vs PyTorch (CPU) training-throughput benchmark on the seed MLP (Fashion-MNIST).

Runs N interleaved rounds of dp (build/bin/dprun on models/mnist_mlp.mlir compiled once by
build/bin/dpc) and PyTorch eager (bench/peers/torch_mlp.py in bench/.venv), same data, model,
batch, lr, epochs, fp32 and thread count; prints a table and writes bench/results/*.json.
Standard library only: run it with any python3. See bench/README.md for the fairness rules.
"""
import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
VENV_PY = os.path.join(BENCH, ".venv", "bin", "python")
PEER = os.path.join(BENCH, "peers", "torch_mlp.py")
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- machine and load

def cpu_times():
    """(busy, total) jiffies over all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    total = sum(vals[:8])  # guest time is already counted in user
    return total - idle, total


def busy_cores(interval=1.0):
    """Average number of busy CPUs over `interval` seconds."""
    b0, t0 = cpu_times()
    time.sleep(interval)
    b1, t1 = cpu_times()
    ncpu = os.cpu_count() or 1
    return ncpu * (b1 - b0) / max(1, t1 - t0)


def wait_for_idle(max_wait, threshold):
    """Waits (up to max_wait s) until fewer than `threshold` cores are busy; returns the last
    reading."""
    deadline = time.monotonic() + max_wait
    busy = busy_cores(0.5)
    announced = False
    while busy > threshold and time.monotonic() < deadline:
        if not announced:
            log(f"  machine busy ({busy:.2f} cores in use by others); waiting up to "
                f"{max_wait:.0f}s for it to go idle")
            announced = True
        busy = busy_cores(2.0)
    return busy


def machine_info():
    info = {"cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k in ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
                     "Flags") and v:
                if k == "Flags":
                    v = " ".join(f for f in v.split() if f.startswith(("avx", "amx", "fma")))
                info[k.lower().replace("(s)", "s").replace(" ", "_")] = v
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_gb"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    return info


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + ("+dirty" if dirty else "") if rev else None
    except (OSError, subprocess.SubprocessError):
        return None


# ---------------------------------------------------------------- running a child

def run_child(cmd, env, log_path, timeout):
    """Runs cmd with stdout+stderr to log_path; returns (rc, wall_s, rusage, other_cores)
    where rusage is the child's own (peak RSS, CPU) and other_cores the average number of CPUs
    busy with anything other than this child (a contention indicator)."""
    b0, t0 = cpu_times()
    start = time.perf_counter()
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        deadline = start + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                proc.returncode = -9
                raise BenchError(f"{cmd[0]} timed out after {timeout}s (log: {log_path})")
            time.sleep(0.02)
    wall = time.perf_counter() - start
    b1, t1 = cpu_times()
    proc.returncode = os.waitstatus_to_exitcode(status)
    hz = os.sysconf("SC_CLK_TCK")
    ncpu = os.cpu_count() or 1
    total_busy_s = (b1 - b0) / hz
    child_cpu_s = ru.ru_utime + ru.ru_stime
    other = max(0.0, (total_busy_s - child_cpu_s) / wall) if wall > 0 else 0.0
    other = min(other, float(ncpu))
    return proc.returncode, wall, ru, other


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def help_text(binary, sub=None):
    for flag in ("--help", "-h"):
        try:
            p = subprocess.run([binary] + ([sub] if sub else []) + [flag], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        text = p.stdout + p.stderr
        if "--" in text:
            return text
    return ""


def binary_version(binary):
    try:
        p = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
        if p.returncode == 0:
            out = (p.stdout or p.stderr).strip().splitlines()
            return out[0] if out else None
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def epoch_summary(epochs):
    """Overall samples/s over whole epochs, and the same without epoch 1 (warm-up)."""
    def samples(e):
        if "samples" in e:
            return float(e["samples"])
        return float(e["samples_per_sec"]) * float(e["seconds"])
    tot_s = sum(float(e["seconds"]) for e in epochs)
    tot_n = sum(samples(e) for e in epochs)
    later = epochs[1:]
    lat_s = sum(float(e["seconds"]) for e in later)
    lat_n = sum(samples(e) for e in later)
    return {
        "samples_per_sec": tot_n / tot_s if tot_s > 0 else None,
        "samples_per_sec_after_epoch1": lat_n / lat_s if later and lat_s > 0 else None,
        "train_seconds": tot_s,
        "samples": tot_n,
    }


def model_hyper(path):
    """(lr, batch) as written in the model file, or None where not found."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None, None
    m = re.search(r"graph\.optimizer\s*=\s*#graph\.\w+<[^>]*?\blr\s*=\s*([0-9.eE+-]+)", text)
    b = re.search(r"tensor<(\d+)x[^>]*>\s*\{[^}]*graph\.input", text)
    return (float(m.group(1)) if m else None), (int(b.group(1)) if b else None)


# ---------------------------------------------------------------- the two peers

class Torch:
    name = "pytorch"

    def __init__(self, args, tmp):
        if not os.path.exists(VENV_PY):
            raise BenchError(f"{VENV_PY} is missing: run bench/setup.sh first")
        self.args, self.tmp = args, tmp
        self.version = None

    def command(self):
        a = self.args
        cmd = [VENV_PY, PEER, "--data", a.data, "--epochs", str(a.epochs), "--batch", str(a.batch),
               "--lr", repr(a.lr), "--threads", str(a.threads), "--seed", str(a.seed)]
        if a.max_steps:
            cmd += ["--max-steps", str(a.max_steps)]
        return cmd

    def run(self, env, rnd):
        log_path = os.path.join(self.tmp, f"torch-{rnd}.log")
        rc, wall, ru, other = run_child(self.command(), env, log_path, self.args.timeout)
        if rc != 0:
            raise BenchError(f"pytorch peer failed (rc {rc}):\n{tail(log_path)}")
        line = None
        with open(log_path, errors="replace") as f:
            for ln in f:
                ln = ln.strip()
                if ln.startswith("{") and '"framework"' in ln:
                    line = ln
        if line is None:
            raise BenchError(f"pytorch peer printed no JSON result:\n{tail(log_path)}")
        out = json.loads(line)
        self.version = out.get("version")
        res = epoch_summary(out["epochs"])
        res.update({"test_accuracy": out["test_accuracy"], "steps": out.get("steps"),
                    "rss_after_import_mb": out.get("rss_after_import_mb"),
                    "epochs": out["epochs"]})
        return res, wall, ru, other


class Dp:
    name = "dp"

    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.dpc = os.path.join(args.build, "bin", "dpc")
        self.dprun = os.path.join(args.build, "bin", "dprun")
        missing = [p for p in (self.dpc, self.dprun) if not os.access(p, os.X_OK)]
        if missing:
            raise BenchError("dp is not built: missing " + ", ".join(missing) +
                             "\n  build it first (cmake -S . -B build -G Ninja && "
                             "cmake --build build), or run with --only pytorch")
        if not os.path.exists(args.model):
            raise BenchError(f"model file {args.model} is missing")
        self.dpx = os.path.join(tmp, "mlp.dpx")
        self.version = (binary_version(self.dprun) or binary_version(self.dpc)
                        or f"git {git_rev()}")
        self.flags_passed = []
        self.notes = []

    def compile(self, env):
        a = self.args
        cmd = [self.dpc, "compile", a.model, "-o", self.dpx] + shlex.split(a.dpc_args)
        dpc_help = help_text(self.dpc, "compile")
        model_lr, model_batch = model_hyper(a.model)
        self.model_lr, self.model_batch = model_lr, model_batch
        # Batch: static in the model; dp must train with the same batch as the peer.
        if model_batch is not None and model_batch != a.batch:
            if "--batch" in dpc_help:
                cmd += [f"--batch={a.batch}"]
                self.flags_passed.append(f"dpc --batch={a.batch}")
            else:
                raise BenchError(f"{a.model} has batch {model_batch} but --batch is {a.batch}, "
                                 "and dpc cannot change it")
        # lr: the model's, scaled by dpc --lr-scale when --lr differs.
        if model_lr is None:
            self.notes.append(f"could not read the lr from {a.model}: check it is {a.lr}")
        elif abs(model_lr - a.lr) > 1e-12 * max(1.0, abs(a.lr)):
            if "--lr-scale" in dpc_help:
                scale = a.lr / model_lr
                cmd += [f"--lr-scale={scale!r}"]
                self.flags_passed.append(f"dpc --lr-scale={scale!r} (model lr {model_lr})")
            elif "--lr" in dpc_help:
                cmd += [f"--lr={a.lr!r}"]
                self.flags_passed.append(f"dpc --lr={a.lr!r}")
            else:
                raise BenchError(f"{a.model} has lr {model_lr} but --lr is {a.lr}, and dpc "
                                 "cannot change it")
        log(f"compiling: {' '.join(shlex.quote(c) for c in cmd)}")
        log_path = os.path.join(self.tmp, "dpc.log")
        rc, wall, _, _ = run_child(cmd, env, log_path, a.timeout)
        if rc != 0 or not os.path.exists(self.dpx):
            raise BenchError(f"dpc failed (rc {rc}):\n{tail(log_path)}")
        self.compile_seconds = wall

    def command(self, metrics):
        a = self.args
        cmd = [self.dprun, self.dpx, "--data", a.data, "--epochs", str(a.epochs),
               "--metrics", metrics]
        if not hasattr(self, "_help"):
            self._help = help_text(self.dprun)
            found = [f for f in ("--threads", "--seed", "--max-steps") if f in self._help]
            self.notes.append("dprun options passed from --help: " + (", ".join(found) or "none"))
            if a.max_steps and "--max-steps" not in self._help:
                raise BenchError("dprun has no --max-steps: --max-steps works with --only "
                                 "pytorch only")
            if "--threads" not in self._help:
                self.notes.append("dprun takes no --threads: it gets OMP_NUM_THREADS="
                                  f"{a.threads} like the peer")
        for flag, val in (("--threads", a.threads), ("--seed", a.seed),
                          ("--max-steps", a.max_steps)):
            if flag in self._help and (flag != "--max-steps" or val):
                cmd += [flag, str(val)]
        return cmd + shlex.split(a.dprun_args)

    def run(self, env, rnd):
        metrics = os.path.join(self.tmp, f"m-{rnd}.json")
        log_path = os.path.join(self.tmp, f"dprun-{rnd}.log")
        cmd = self.command(metrics)
        if rnd == 0:
            log(f"dp command: {' '.join(shlex.quote(c) for c in cmd)}")
        rc, wall, ru, other = run_child(cmd, env, log_path, self.args.timeout)
        if rc != 0:
            raise BenchError(f"dprun failed (rc {rc}):\n{tail(log_path)}")
        try:
            with open(metrics) as f:
                m = json.load(f)
        except (OSError, ValueError) as e:
            raise BenchError(f"dprun wrote no readable metrics {metrics}: {e}\n{tail(log_path)}")
        if not m.get("epochs"):
            raise BenchError(f"dprun metrics have no epochs: {m}")
        res = epoch_summary(m["epochs"])
        res.update({"test_accuracy": m.get("test_accuracy"), "params": m.get("params"),
                    "epochs": m["epochs"]})
        return res, wall, ru, other


# ---------------------------------------------------------------- report

def fmt(v, spec=".0f", none="-"):
    return none if v is None else format(v, spec)


def summarize(runs):
    """Medians over the rounds that ran on a quiet machine, or over all when none did."""
    clean = [r for r in runs if not r.get("contended")]
    used = clean or runs

    def col(key):
        return [r[key] for r in used if r.get(key) is not None]
    sps = col("samples_per_sec")
    later = col("samples_per_sec_after_epoch1")
    acc = col("test_accuracy")
    rss = col("peak_rss_mb")
    wall = col("wall_s")
    med = statistics.median
    return {
        "rounds": len(runs),
        "rounds_used": len(used),
        "only_contended_rounds": not clean,
        "samples_per_sec_median": med(sps) if sps else None,
        "samples_per_sec_min": min(sps) if sps else None,
        "samples_per_sec_max": max(sps) if sps else None,
        "samples_per_sec_after_epoch1_median": med(later) if later else None,
        "test_accuracy_median": med(acc) if acc else None,
        "test_accuracy_min": min(acc) if acc else None,
        "test_accuracy_max": max(acc) if acc else None,
        "peak_rss_mb_median": med(rss) if rss else None,
        "wall_s_median": med(wall) if wall else None,
        "contended_rounds": sum(1 for r in runs if r.get("contended")),
    }


def print_table(summary, names, args):
    hdr = (f"{'framework':<10} {'samples/s median [min-max]':<28} {'ep>=2 s/s':>10} "
           f"{'test acc':>9} {'peak RSS MB':>11} {'wall s':>7}")
    print(hdr)
    print("-" * len(hdr))
    for n in names:
        s = summary[n]
        rng = (f"{fmt(s['samples_per_sec_median'])} [{fmt(s['samples_per_sec_min'])}-"
               f"{fmt(s['samples_per_sec_max'])}]")
        acc = fmt(s["test_accuracy_median"], ".4f")
        if s["test_accuracy_min"] is not None and s["test_accuracy_max"] - s["test_accuracy_min"] > 1e-9:
            acc += "~"
        flag = ""
        if s["contended_rounds"]:
            flag = (f" * ({s['contended_rounds']} contended round(s) left out)"
                    if not s["only_contended_rounds"] else " * (all rounds contended!)")
        print(f"{n:<10} {rng:<28} {fmt(s['samples_per_sec_after_epoch1_median']):>10} "
              f"{acc:>9} {fmt(s['peak_rss_mb_median']):>11} {fmt(s['wall_s_median'], '.1f'):>7}{flag}")
    if any(summary[n]["contended_rounds"] for n in names):
        print(f"* rounds during which other processes used > {args.busy_threshold} cores are "
              "left out of the medians (all kept where every round was contended: then the "
              "numbers are suspect); see 'other_cores' in the results JSON")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--lr", type=float, default=None,
                    help="SGD learning rate for both (default: the model file's, else 0.5)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for both (default: all cores)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=0, help="at most N train steps per epoch (quick tests; both sides)")
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "mnist_mlp.mlir"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="dp build dir")
    ap.add_argument("--only", choices=["dp", "pytorch"], help="run one side only")
    ap.add_argument("--dpc-args", default="", help="extra dpc arguments (one string)")
    ap.add_argument("--dprun-args", default="", help="extra dprun arguments (one string)")
    ap.add_argument("--idle-wait", type=float, default=120.0,
                    help="seconds to wait before each run for the machine to go idle")
    ap.add_argument("--busy-threshold", type=float, default=0.3,
                    help="cores busy with other work above which a run counts as contended")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per child, seconds")
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    ap.add_argument("--keep-tmp", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    if args.rounds < 1 or args.epochs < 1 or args.threads < 1:
        ap.error("--rounds, --epochs and --threads must be >= 1")
    args.model = os.path.abspath(args.model)
    if args.lr is None:
        args.lr = model_hyper(args.model)[0] or 0.5
    args.build = os.path.abspath(args.build)

    for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        if not os.path.exists(os.path.join(args.data, f)):
            log(f"error: {os.path.join(args.data, f)} is missing (Fashion-MNIST IDX files)")
            return 2

    tmp = tempfile.mkdtemp(prefix="dp-bench-")
    try:
        peers = []
        try:
            if args.only != "pytorch":
                peers.append(Dp(args, tmp))
            if args.only != "dp":
                peers.append(Torch(args, tmp))
        except BenchError as e:
            log(f"error: {e}")
            return 2

        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(args.threads)
        machine = machine_info()
        log(f"machine: {machine.get('model_name', '?')}, {machine['cores']} cores, "
            f"{machine.get('mem_total_gb', '?')} GiB; threads {args.threads}")
        log(f"config: epochs {args.epochs}, batch {args.batch}, lr {args.lr}, rounds {args.rounds}, "
            f"seed {args.seed}")

        dp = next((p for p in peers if p.name == "dp"), None)
        try:
            if dp:
                dp.compile(env)
        except BenchError as e:
            log(f"error: {e}")
            return 1

        runs = {p.name: [] for p in peers}
        for rnd in range(args.rounds):
            order = peers if rnd % 2 == 0 else list(reversed(peers))
            for p in order:
                before = wait_for_idle(args.idle_wait, args.busy_threshold)
                try:
                    res, wall, ru, other = p.run(env, rnd)
                except BenchError as e:
                    log(f"error: round {rnd + 1}, {p.name}: {e}")
                    return 1
                res.update({"round": rnd + 1, "wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024.0,
                            "cpu_s": ru.ru_utime + ru.ru_stime, "other_cores": other,
                            "busy_cores_before": before,
                            "contended": other > args.busy_threshold or before > args.busy_threshold})
                runs[p.name].append(res)
                log(f"round {rnd + 1} {p.name:<8} {fmt(res['samples_per_sec']):>8} samples/s  "
                    f"acc {fmt(res['test_accuracy'], '.4f')}  rss {res['peak_rss_mb']:.0f} MB  "
                    f"wall {wall:.1f}s  cpu {res['cpu_s']:.1f}s  others {other:.2f} cores"
                    + ("  (contended)" if res["contended"] else ""))

        names = [p.name for p in peers]
        summary = {n: summarize(runs[n]) for n in names}
        ratio = None
        if dp and len(peers) == 2:
            a = summary["dp"]["samples_per_sec_median"]
            b = summary["pytorch"]["samples_per_sec_median"]
            ratio = a / b if a and b else None
        versions = {p.name: p.version for p in peers}
        versions["dp_git"] = git_rev()

        print()
        print(f"machine: {machine.get('model_name', '?')}, {machine['cores']} cores "
              f"({machine.get('flags', '')}); threads {args.threads}")
        print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        print(f"model: seed MLP 784-100(sigmoid)-10, fp32, SGD lr {args.lr}, batch {args.batch}, "
              f"{args.epochs} epochs, {args.rounds} interleaved rounds; samples/s over whole "
              "epochs (ep>=2: without epoch 1)")
        print()
        print_table(summary, names, args)
        if ratio is not None:
            print(f"\nratio dp/pytorch (median samples/s): {ratio:.2f}x")
        if dp:
            for n in dp.notes:
                print(f"note: {n}")

        os.makedirs(args.out, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out_path = os.path.join(args.out, f"mlp-{stamp}.json")
        result = {
            "benchmark": "mlp", "date": dt.datetime.now().isoformat(timespec="seconds"),
            "machine": machine, "versions": versions,
            "config": {k: getattr(args, k) for k in ("rounds", "epochs", "batch", "lr", "threads",
                                                      "seed", "max_steps", "data", "model")},
            "dp_compile_seconds": getattr(dp, "compile_seconds", None) if dp else None,
            "dp_flags": (dp.flags_passed + dp.notes) if dp else None,
            "summary": summary, "ratio_dp_over_pytorch": ratio, "runs": runs,
        }
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
        print(f"\nresults: {os.path.relpath(out_path, ROOT)}")
        return 0
    finally:
        if args.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
