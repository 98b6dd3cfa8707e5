#!/usr/bin/env python3
"""dp vs PyTorch and TensorFlow (CPU) training-throughput benchmark on the seed models (Fashion-MNIST,
CIFAR-10).

Runs N interleaved rounds of dp (build/bin/dprun on models/<model>.mlir compiled once by
build/bin/dpc), PyTorch eager (bench/peers/torch_peer.py) and TensorFlow/Keras
(bench/peers/keras_peer.py), both in bench/.venv, with the same data, model, batch, optimizer,
lr, epochs, precision and thread count; prints a table and writes bench/results/*.json.
--precision bf16: dp's mixed precision against PyTorch autocast and Keras mixed_bfloat16, with
PyTorch fp32 (pytorch-fp32) as the baseline.
--model: mnist_mlp (default), mnist_small_cnn, mnist_cnn, mnist_lstm, resnet50v2_32 (or a .mlir
path), and the ONNX models onnx_resnet18 and onnx_vit (models/onnx/*.onnx: dp compiles the file,
PyTorch trains the module that wrote it, from the file's weights; --peers pytorch,pytorch-compile
adds torch.compile). resnet50v2_32 and onnx_resnet18 train on CIFAR-10 binary batches: --data
DIR, else batches generated for the run (test/e2e/make_cifar.py: learnable coloured squares over
noise).
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
PEERS_DIR = os.path.join(BENCH, "peers")
sys.path.insert(0, PEERS_DIR)
import common  # noqa: E402  (the peers' model table; standard library only at import)

PEER_SCRIPTS = {"pytorch": "torch_peer.py", "pytorch-compile": "torch_peer.py",
                "tensorflow": "keras_peer.py", "pytorch-fp32": "torch_peer.py"}
PEER_MODULES = {"pytorch": "torch", "pytorch-compile": "torch", "tensorflow": "tensorflow",
                "pytorch-fp32": "torch"}
# Under --precision bf16, pytorch-fp32 is PyTorch without autocast: the fp32 baseline.
# Peers that run on a GPU (--device cuda).
CUDA_PEERS = ("pytorch", "pytorch-compile")
DEFAULT_DATA = common.DEFAULT_DATA
DESCRIPTIONS = {
    "mnist_mlp": "seed MLP 784-100(sigmoid)-10",
    "mnist_small_cnn": "small CNN conv32-pool-conv64-pool-dense64-10 (121,930 params)",
    "mnist_cnn": "CNN conv32/128/256 + pools, dropout 0.5, dense 1000-100-10 (690,590 params)",
    "mnist_lstm": "LSTM 3x256 (dropout 0.2) + dense 256-256-10 (1,476,618 params)",
    "resnet50v2_32": "Keras ResNet50V2 on 32x32x3, 10 classes (23,539,850 trainable params)",
    "onnx_resnet18": "models/onnx/resnet18.onnx: ResNet-18 at width 12 for 32x32x3 from PyTorch's "
                     "exporter (395,350 trainable params)",
    "onnx_vit": "models/onnx/vit.onnx: ViT, 49 tokens of width 128, 4 blocks of 4 heads, from "
                "PyTorch's exporter (474,122 params)",
}
MAKE_CIFAR = os.path.join(ROOT, "test", "e2e", "make_cifar.py")


class BenchError(Exception):
    pass


class CannotCompile(BenchError):
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


def git_rev(where=ROOT):
    """The commit of the checkout holding `where` (a build folder inside one: the dp that ran)."""
    try:
        rev = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain",
                                "--untracked-files=no"],
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
    h = model_optimizer(path)
    return h.get("lr"), h.get("batch")


def model_optimizer(path):
    """{"optimizer": "sgd"|"adam"|..., "lr", "beta1", "beta2", "epsilon", "batch"} as written in
    the model file; keys missing where not found (an empty dict when the file is unreadable)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return {}
    out = {}
    o = re.search(r"graph\.optimizer\s*=\s*#graph\.(\w+)<([^>]*)>", text)
    if o:
        out["optimizer"] = o.group(1)
        for k, v in re.findall(r"\b(\w+)\s*=\s*([0-9.eE+-]+)", o.group(2)):
            try:
                out[k] = float(v)
            except ValueError:
                pass
    b = re.search(r"tensor<(\d+)x[^>]*>\s*\{[^}]*graph\.input", text)
    if b:
        out["batch"] = int(b.group(1))
    return out


def venv_has(module):
    """Whether bench/.venv's python can find `module` (without importing it)."""
    if not os.path.exists(VENV_PY):
        return False
    try:
        p = subprocess.run([VENV_PY, "-c", "import importlib.util, sys; "
                            f"sys.exit(importlib.util.find_spec({module!r}) is None)"],
                           capture_output=True, timeout=60)
        return p.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


# ---------------------------------------------------------------- the two peers

class Peer:
    """A framework peer: bench/peers/<script> in bench/.venv, one JSON result line per run."""

    def __init__(self, name, args, tmp):
        if not os.path.exists(VENV_PY):
            raise BenchError(f"{VENV_PY} is missing: run bench/setup.sh first")
        self.name, self.args, self.tmp = name, args, tmp
        self.script = os.path.join(PEERS_DIR, PEER_SCRIPTS[name])
        self.version = None
        self.extra_versions = {}

    def command(self):
        a = self.args
        cmd = [VENV_PY, self.script, "--model", a.model_name, "--data", a.data,
               "--epochs", str(a.epochs), "--batch", str(a.batch), "--optimizer", a.optimizer,
               "--lr", repr(a.lr), "--threads", str(a.threads), "--seed", str(a.seed)]
        if a.max_steps:
            cmd += ["--max-steps", str(a.max_steps)]
        if a.device != "cpu":
            cmd += ["--device", a.device]
        if self.name == "pytorch-compile":
            cmd += ["--compile"]
        if a.precision != "fp32" and self.name != "pytorch-fp32":
            cmd += ["--precision", a.precision]
        return cmd

    def run(self, env, rnd):
        log_path = os.path.join(self.tmp, f"{self.name}-{rnd}.log")
        if rnd == 0:
            log(f"{self.name} command: {' '.join(shlex.quote(c) for c in self.command())}")
        rc, wall, ru, other = run_child(self.command(), env, log_path, self.args.timeout)
        if rc != 0:
            raise BenchError(f"{self.name} peer failed (rc {rc}):\n{tail(log_path)}")
        line = None
        with open(log_path, errors="replace") as f:
            for ln in f:
                ln = ln.strip()
                if ln.startswith("{") and '"framework"' in ln:
                    line = ln
        if line is None:
            raise BenchError(f"{self.name} peer printed no JSON result:\n{tail(log_path)}")
        out = json.loads(line)
        self.version = out.get("version")
        if out.get("keras_version"):
            self.extra_versions["keras"] = out["keras_version"]
        res = epoch_summary(out["epochs"])
        res.update({"test_accuracy": out["test_accuracy"], "steps": out.get("steps"),
                    "params": out.get("params"),
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
        self.dpx = os.path.join(tmp, f"{args.model_name}.dpx")
        self.version = (binary_version(self.dprun) or binary_version(self.dpc)
                        or f"git {git_rev(args.build)}")
        self.flags_passed = []
        self.notes = []

    def compile(self, env):
        """Compiles the model once. Raises CannotCompile when the model file is missing or dpc
        rejects it (the driver then runs the peers alone), BenchError on a setup mismatch."""
        a = self.args
        if not os.path.exists(a.model):
            raise CannotCompile(f"{os.path.relpath(a.model, ROOT)} does not exist")
        cmd = [self.dpc, "compile", a.model, "-o", self.dpx] + shlex.split(a.dpc_args)
        if a.precision != "fp32":
            cmd += ["--precision", a.precision]
        if a.device != "cpu":
            cmd += ["--device", a.device]
        if a.model.endswith(".onnx"):
            # The batch and the optimizer are the import's: the peers' settings.
            opt = f"sgd:lr={a.lr!r}" if a.optimizer == "sgd" else (
                f"adam:lr={a.lr!r},beta1={common.ADAM['beta1']!r},"
                f"beta2={common.ADAM['beta2']!r},epsilon={common.ADAM['eps']!r}")
            cmd += [f"--batch={a.batch}", f"--optimizer={opt}"]
            self.flags_passed.append(f"dpc --batch={a.batch} --optimizer={opt}")
            self.model_lr, self.model_batch = a.lr, a.batch
            return self._compile(cmd, env)
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
        return self._compile(cmd, env)

    def _compile(self, cmd, env):
        a = self.args
        log(f"compiling: {' '.join(shlex.quote(c) for c in cmd)}")
        log_path = os.path.join(self.tmp, "dpc.log")
        rc, wall, _, _ = run_child(cmd, env, log_path, a.timeout)
        if rc != 0 or not os.path.exists(self.dpx):
            raise CannotCompile(f"dpc failed (rc {rc}):\n{tail(log_path)}")
        self.compile_seconds = wall

    def measure_peak(self, env):
        """dprun --measure-peak with the threads of the runs, into a peak file of this bench:
        the machine's f32 and bf16 peaks (TFLOP/s) that every side's MFU divides by, or None
        where this dprun cannot measure it."""
        self.peak_file = os.path.join(self.tmp, "peak.tsv")
        env = dict(env, DP_PEAK_FILE=self.peak_file, DPRUN_THREADS=str(self.args.threads))
        if self.args.device != "cpu":
            env.pop("DPRUN_THREADS")
        cmd = [self.dprun, self.dpx, "--measure-peak"]
        rc, _, _, _ = run_child(cmd, env, os.path.join(self.tmp, "peak.log"), self.args.timeout)
        if rc != 0 or not os.path.exists(self.peak_file):
            self.notes.append(f"dprun --measure-peak failed (rc {rc}): no MFU")
            return None
        fields = [line.rstrip("\n").split("\t") for line in open(self.peak_file)
                  if not line.startswith("#")]
        if not fields or len(fields[-1]) != 5:
            return None
        f32m, f32c, bf16m, bf16c = (float(v) for v in fields[-1][1:])
        log(f"peak (dprun --measure-peak): f32 {max(f32m, f32c):.3f} TFLOP/s, bf16 "
            f"{max(bf16m, bf16c):.3f} TFLOP/s")
        return {"fp32": max(f32m, f32c), "bf16": max(bf16m, bf16c)}

    def command(self, metrics):
        a = self.args
        cmd = [self.dprun, self.dpx, "--data", a.data, "--epochs", str(a.epochs),
               "--metrics", metrics]
        if getattr(self, "peak_file", None):
            cmd[0:0] = ["env", f"DP_PEAK_FILE={self.peak_file}"]
        if not hasattr(self, "_help"):
            self._help = help_text(self.dprun)
            # The per-epoch cap is --steps-per-epoch (an older dprun: --max-steps, then per epoch).
            self._cap = "--steps-per-epoch" if "--steps-per-epoch" in self._help else "--max-steps"
            found = [f for f in ("--threads", "--seed", self._cap) if f in self._help]
            self.notes.append("dprun options passed from --help: " + (", ".join(found) or "none"))
            if a.max_steps and self._cap not in self._help:
                raise BenchError("dprun has no --max-steps: --max-steps works with --only "
                                 "pytorch only")
            if "--threads" not in self._help:
                self.notes.append("dprun takes no --threads: it gets OMP_NUM_THREADS="
                                  f"{a.threads} like the peer")
        # Beside a neighbour dp chooses its threads itself, as it does by default.
        for flag, val in (("--threads", "auto" if a.neighbour else a.threads), ("--seed", a.seed),
                          (self._cap, a.max_steps)):
            if flag in self._help and (flag != self._cap or val):
                cmd += [flag, str(val)]
        return cmd + shlex.split(a.dprun_args)

    def run(self, env, rnd):
        metrics = os.path.join(self.tmp, f"m-{rnd}.json")
        log_path = os.path.join(self.tmp, f"dprun-{rnd}.log")
        cmd = self.command(metrics)
        if rnd == 0:
            log(f"dp command: {' '.join(shlex.quote(c) for c in cmd)}")
        if self.args.neighbour:  # dprun's auto keeps OMP_NUM_THREADS: leave it out
            env = {k: v for k, v in env.items() if k != "OMP_NUM_THREADS"}
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
        compute = m.get("compute") or {}
        if compute.get("step_flops"):
            # The products' FLOPs of one sample: the model's, whichever side trains it.
            res["flops_per_sample"] = compute["step_flops"] / self.args.batch
            res["dp_tflops"] = compute.get("tflops")
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
    fps = col("flops_per_sample")
    return {
        "flops_per_sample": fps[0] if fps else None,
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


def mfu(samples_per_sec, flops_per_sample, peak_tflops):
    """Model FLOP utilization: the products' FLOPs a second over the machine's peak."""
    if not (samples_per_sec and flops_per_sample and peak_tflops):
        return None
    return samples_per_sec * flops_per_sample / (peak_tflops * 1e12)


def print_table(summary, names, args):
    hdr = (f"{'framework':<10} {'samples/s median [min-max]':<28} {'ep>=2 s/s':>10} "
           f"{'ms/step':>8} {'MFU %':>6} {'test acc':>9} {'peak RSS MB':>11} {'wall s':>7}")
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
        sps = s["samples_per_sec_after_epoch1_median"] or s["samples_per_sec_median"]
        ms = 1e3 * args.batch / sps if sps else None
        u = s.get("mfu")
        print(f"{n:<10} {rng:<28} {fmt(s['samples_per_sec_after_epoch1_median']):>10} "
              f"{fmt(ms, '.2f'):>8} {fmt(100 * u if u else None, '.1f'):>6} {acc:>9} "
              f"{fmt(s['peak_rss_mb_median']):>11} {fmt(s['wall_s_median'], '.1f'):>7}{flag}")
    if any(summary[n]["contended_rounds"] for n in names):
        print(f"* rounds during which other processes used > {args.busy_threshold} cores are "
              "left out of the medians (all kept where every round was contended: then the "
              "numbers are suspect); see 'other_cores' in the results JSON")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="mnist_mlp",
                    help="mnist_mlp (default), mnist_small_cnn, mnist_cnn, mnist_lstm, "
                         "resnet50v2_32: "
                         "models/<model>.mlir for dp and the same network in the peers; or a "
                         ".mlir path whose file name is one of those; onnx_resnet18, onnx_vit: "
                         "models/onnx/*.onnx for dp, the module that exported it in PyTorch")
    ap.add_argument("--peers", default=None,
                    help="comma-separated framework peers: pytorch,tensorflow (default: those "
                         "installed in bench/.venv)")
    ap.add_argument("--only", choices=["dp"] + sorted(PEER_SCRIPTS), help="run one side only")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: dp compiled for cuda against the PyTorch peers on the GPU "
                         "(pytorch eager and pytorch-compile; no TensorFlow peer)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: dp's --precision bf16 against PyTorch autocast bf16, Keras "
                         "mixed_bfloat16 and PyTorch fp32 (pytorch-fp32)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=None,
                    help="default: the model file's static batch, else the model's (mnist_mlp "
                         "100, mnist_small_cnn 64, mnist_cnn 128, mnist_lstm 128)")
    ap.add_argument("--lr", type=float, default=None,
                    help="learning rate for all (default: the model file's, else the model's: "
                         "mnist_mlp 0.5, CNNs 0.001 (Adam), mnist_lstm 0.01 (SGD))")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for all (default: all cores)")
    ap.add_argument("--neighbour", action="store_true",
                    help="run every side beside one CPU-bound process (a `while True: pass` "
                         "started before each run): the shared-node case. dp then keeps its "
                         "default --threads auto; the peers keep --threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=0, help="at most N train steps per epoch (quick tests; all sides)")
    ap.add_argument("--data", default=None,
                    help=f"Fashion-MNIST IDX files (default {DEFAULT_DATA}); for resnet50v2_32 "
                         "CIFAR-10 binary batches (default: generated for the run)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="dp build dir")
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

    # The model: a name from the table, or a .mlir path named after one.
    if args.model.endswith(".mlir") or os.sep in args.model:
        args.model = os.path.abspath(args.model)
        args.model_name = os.path.splitext(os.path.basename(args.model))[0]
    else:
        args.model_name = args.model
        args.model = os.path.join(ROOT, "models", f"{args.model_name}.mlir")
    spec = common.MODELS.get(args.model_name)
    if spec and spec.get("onnx"):
        # An ONNX model: dp compiles the file, PyTorch trains export.py's module from it.
        args.model = os.path.join(ROOT, "models", "onnx", spec["onnx"] + ".onnx")
    hyper = {} if args.model.endswith(".onnx") else model_optimizer(args.model)
    if spec is None and args.only != "dp":
        ap.error(f"the peers know {', '.join(sorted(common.MODELS))}, not {args.model_name!r} "
                 "(use --only dp for another model)")
    spec = spec or {}
    if args.batch is None:
        args.batch = hyper.get("batch") or spec.get("batch") or 100
    if args.lr is None:
        args.lr = hyper.get("lr") or spec.get("lr") or 0.5
    args.optimizer = hyper.get("optimizer") or spec.get("optimizer") or "sgd"
    if args.optimizer not in ("sgd", "adam"):
        ap.error(f"{args.model} uses #graph.{args.optimizer}: the peers know sgd and adam")
    opt_notes = []
    if hyper.get("optimizer") and spec.get("optimizer") and hyper["optimizer"] != spec["optimizer"]:
        opt_notes.append(f"{os.path.relpath(args.model, ROOT)} uses {hyper['optimizer']}, the seed "
                         f"table {spec['optimizer']}: all sides use {hyper['optimizer']}")
    if args.optimizer == "adam":
        for k, want in (("beta1", common.ADAM["beta1"]), ("beta2", common.ADAM["beta2"]),
                        ("epsilon", common.ADAM["eps"])):
            if k in hyper and abs(hyper[k] - want) > 1e-9 * max(1.0, want):
                opt_notes.append(f"the model's Adam {k} is {hyper[k]}, the peers use Keras's {want}")

    # Which sides run.
    if args.only:
        names = [args.only]
    else:
        if args.peers is None:
            # torch.compile is a peer of its own on a GPU (the issue's target), not on the CPU.
            default = [n for n in PEER_SCRIPTS if n != "pytorch-compile" or args.device == "cuda"]
            if args.precision == "fp32":
                default = [n for n in default if n != "pytorch-fp32"]
            if args.device == "cuda":
                default = [n for n in default if n in CUDA_PEERS]
            if spec.get("onnx"):  # the Keras peer has no ONNX models
                default = [n for n in default if n != "tensorflow"]
            installed = [n for n in default if venv_has(PEER_MODULES[n])]
            for n in default:
                if n not in installed:
                    log(f"note: {n} is not installed in bench/.venv (bench/setup.sh): left out")
            wanted = installed
        else:
            wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
            bad = [p for p in wanted if p not in PEER_SCRIPTS]
            if bad:
                ap.error(f"unknown peer(s) {', '.join(bad)}: choose from {', '.join(PEER_SCRIPTS)}")
            if args.device == "cuda" and any(p not in CUDA_PEERS for p in wanted):
                ap.error(f"--device cuda runs the peers {', '.join(CUDA_PEERS)} only")
        names = ["dp"] + wanted

    cifar = spec.get("input") == "cifar"
    generate = cifar and args.data is None
    if args.data is None and not cifar:
        args.data = DEFAULT_DATA
    if cifar and not generate:
        folder = common.cifar_dir(args.data)
        for f in common.CIFAR_TRAIN + [common.CIFAR_TEST]:
            if not os.path.isfile(os.path.join(folder, f)):
                log(f"error: {os.path.join(folder, f)} is missing (CIFAR-10 binary batches)")
                return 2
    elif not cifar:
        for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                  "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
            if not os.path.exists(os.path.join(args.data, f)):
                log(f"error: {os.path.join(args.data, f)} is missing (Fashion-MNIST IDX files)")
                return 2

    tmp = tempfile.mkdtemp(prefix="dp-bench-")
    try:
        if generate:
            # Enough records for the steps asked for (5 files), at least 64 per file.
            per_file = max(64, -(-(args.max_steps or 40) * args.batch // 5))
            args.data = os.path.join(tmp, "cifar")
            subprocess.run([sys.executable, MAKE_CIFAR, args.data, "--per-file", str(per_file)],
                           check=True)
            log(f"data: generated CIFAR-10 batches, {5 * per_file} training and {per_file} test "
                f"images ({os.path.relpath(MAKE_CIFAR, ROOT)})")
        peers = []
        try:
            for n in names:
                peers.append(Dp(args, tmp) if n == "dp" else Peer(n, args, tmp))
        except BenchError as e:
            log(f"error: {e}")
            return 2

        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(args.threads)
        machine = machine_info()
        log(f"machine: {machine.get('model_name', '?')}, {machine['cores']} cores, "
            f"{machine.get('mem_total_gb', '?')} GiB; threads {args.threads}")
        log(f"config: model {args.model_name}, epochs {args.epochs}, batch {args.batch}, "
            f"{args.optimizer} lr {args.lr}, rounds {args.rounds}, seed {args.seed}, "
            f"sides {', '.join(names)}")

        dp = next((p for p in peers if p.name == "dp"), None)
        dp_error = None
        peak = None
        if dp:
            try:
                dp.compile(env)
                peak = dp.measure_peak(env)
            except CannotCompile as e:
                dp_error = str(e).strip()
                msg = f"dp cannot compile {args.model_name} yet: {dp_error}"
                peers.remove(dp)
                dp = None
                if not peers:
                    log(f"error: {msg}")
                    return 1
                log(f"{msg}\n  running the peers alone (as with --only "
                    f"{'/'.join(p.name for p in peers)})")
            except BenchError as e:
                log(f"error: {e}")
                return 1

        runs = {p.name: [] for p in peers}
        for rnd in range(args.rounds):
            order = peers if rnd % 2 == 0 else list(reversed(peers))
            for p in order:
                before = wait_for_idle(args.idle_wait, args.busy_threshold)
                neighbour = None
                if args.neighbour:
                    neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    time.sleep(0.5)
                try:
                    res, wall, ru, other = p.run(env, rnd)
                except BenchError as e:
                    log(f"error: round {rnd + 1}, {p.name}: {e}")
                    return 1
                finally:
                    if neighbour:
                        neighbour.kill()
                        neighbour.wait()
                if neighbour:
                    other = max(0.0, other - 1.0)  # the neighbour is the point, not contention
                res.update({"round": rnd + 1, "wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024.0,
                            "cpu_s": ru.ru_utime + ru.ru_stime, "other_cores": other,
                            "busy_cores_before": before,
                            "contended": other > args.busy_threshold or before > args.busy_threshold})
                runs[p.name].append(res)
                log(f"round {rnd + 1} {p.name:<10} {fmt(res['samples_per_sec']):>8} samples/s  "
                    f"acc {fmt(res['test_accuracy'], '.4f')}  rss {res['peak_rss_mb']:.0f} MB  "
                    f"wall {wall:.1f}s  cpu {res['cpu_s']:.1f}s  others {other:.2f} cores"
                    + ("  (contended)" if res["contended"] else ""))

        names = [p.name for p in peers]
        summary = {n: summarize(runs[n]) for n in names}
        # MFU of every side: the model's products (dp's count) at its samples/s, against the
        # peak of the precision it computes in (pytorch-fp32 is the f32 baseline).
        flops = summary["dp"]["flops_per_sample"] if "dp" in summary else None
        for n in names:
            s = summary[n]
            prec = "fp32" if n == "pytorch-fp32" else args.precision
            sps = s["samples_per_sec_after_epoch1_median"] or s["samples_per_sec_median"]
            s["peak_tflops"] = peak.get(prec) if peak else None
            s["mfu"] = mfu(sps, flops, s["peak_tflops"])
        ratios = {}
        base = "dp" if dp else ("tensorflow" if "tensorflow" in names else None)
        for n in names:
            if base and n != base and (base == "dp" or n.startswith("pytorch")):
                a = summary[base]["samples_per_sec_median"]
                b = summary[n]["samples_per_sec_median"]
                ratios[f"{base}/{n}"] = a / b if a and b else None
        versions = {p.name: p.version for p in peers}
        for p in peers:
            versions.update(getattr(p, "extra_versions", {}))
        versions["dp_git"] = git_rev(args.build)

        print()
        print(f"machine: {machine.get('model_name', '?')}, {machine['cores']} cores "
              f"({machine.get('flags', '')}); threads {args.threads}")
        print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        print(f"model: {args.model_name}: {DESCRIPTIONS.get(args.model_name, args.model)}, "
              f"{args.precision}" + (" (pytorch-fp32: fp32)" if args.precision != "fp32" else "")
              + ", "
              f"{args.optimizer} lr {args.lr}, batch {args.batch}, {args.epochs} epochs"
              + (f" (max {args.max_steps} steps each)" if args.max_steps else "")
              + f", {args.rounds} interleaved rounds; samples/s over whole epochs (ep>=2: without "
              "epoch 1; ms/step from ep>=2 when there is one)")
        if dp_error is not None:
            lines = [ln.strip() for ln in dp_error.splitlines() if ln.strip()]
            first = next((ln for ln in lines if "error" in ln.lower() and not ln.startswith("dpc failed")),
                         lines[-1] if lines else "")
            print(f"dp cannot compile {args.model_name} yet: {first}")
        print()
        print_table(summary, names, args)
        if ratios:
            print()
        for k, r in ratios.items():
            print(f"ratio {k} (median samples/s): {fmt(r, '.2f')}x")
        if flops and peak:
            print(f"MFU: {flops / 1e9:.3g} GFLOP a sample in the products (dpc's count, the same "
                  f"model on every side) at ep>=2 samples/s, against this machine's peak from "
                  f"dprun --measure-peak: f32 {peak['fp32']:.3f}, bf16 {peak['bf16']:.3f} TFLOP/s")
        for n in opt_notes:
            print(f"note: {n}")
        if dp:
            for n in dp.notes:
                print(f"note: {n}")

        os.makedirs(args.out, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        short = "mlp" if args.model_name == "mnist_mlp" else args.model_name
        if args.precision != "fp32":
            short += f"-{args.precision}"
        out_path = os.path.join(args.out, f"{short}-{stamp}.json")
        result = {
            "benchmark": short, "model": args.model_name,
            "date": dt.datetime.now().isoformat(timespec="seconds"),
            "machine": machine, "versions": versions,
            "config": {k: getattr(args, k) for k in ("rounds", "epochs", "batch", "optimizer", "lr",
                                                      "threads", "seed", "max_steps", "data",
                                                      "model", "neighbour", "precision")},
            "data_generated": generate,
            "dp_compile_seconds": getattr(dp, "compile_seconds", None) if dp else None,
            "dp_compile_error": dp_error,
            "dp_flags": (dp.flags_passed + dp.notes) if dp else None,
            "notes": opt_notes,
            "summary": summary, "ratios": ratios, "peak_tflops": peak,
            "ratio_dp_over_pytorch": ratios.get("dp/pytorch"), "runs": runs,
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
