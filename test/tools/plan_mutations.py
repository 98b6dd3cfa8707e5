#!/usr/bin/env python3
"""Mutation harness for dprun's plan checks: does `dprun PLAN --inspect` accept only plans that
dprun runs?

Takes valid plans (compiled here from models, or given), makes deterministic mutations of each
that keep the file's checksum valid (as a hostile or corrupted-then-rewritten plan would have
it: the header's CRC-32 is recomputed over the mutated payload, as fuzz/FuzzPlan.cpp's odd mode
does), and runs each mutated plan three ways:

  dprun M --inspect
  dprun M --check-gradients
  dprun M --data DATA --steps-per-epoch 2 --quiet   (under mpirun for multi-process plans)

It reports every crash (a signal, an exit status of 128 or more, a sanitizer report, a hang
past the timeout) and every mismatch: --inspect accepts a plan that a run refuses, or
--check-gradients refuses as broken a plan that --inspect accepted (a refusal the unmutated
plan gets too, such as a parameter-server plan's, is expected). A run's refusals for the data
set or the machine (exit 4, exit 7 for memory, no backend or GPU for the plan's device kind)
are counted apart: --inspect leaves those to the run. The reverse (--inspect refuses, a run
trains) is reported as well. Runs take a subset of the data set (--subset) and one thread.

Exit status: 0 when there is no crash and no mismatch either way, 1 otherwise, 2 on a usage
error.

  plan_mutations.py --dpc build/bin/dpc --dprun build/bin/dprun --models models \\
      --data /usr/share/datasets/fashion-mnist --mutations 100 --work /tmp/mut
"""
import argparse
import gzip
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib

HEADER = 32  # magic (8), version (4), header size (4), payload size (8), CRC-32 (4), reserved (4)
CRC_AT = 24

# The plans mutated by default: (name, model file under --models, dpc options).
DEFAULT_PLANS = [
    ("mlp", "mnist_mlp.mlir", []),
    ("cnn", "mnist_cnn.mlir", []),
    ("mlp-2replicas", "mnist_mlp.mlir", ["--devices-per-process", "2"]),
    ("mlp-ps", "mnist_mlp.mlir", ["--strategy", "parameter-server"]),
]

# Values written over 4- and 8-byte words: limits, small counts, sizes around buffer shapes.
WORDS32 = [0, 1, 2, 3, 4, 7, 10, 63, 64, 100, 255, 256, 1000, 65535, 65536, 0x7FFFFFFF,
           0x80000000, 0xFFFFFFFF, 0xFFFFFFFE]
WORDS64 = [0, 1, 2, 64, 1 << 20, 1 << 31, 1 << 32, 1 << 40, (1 << 63) - 1, 1 << 63,
           (1 << 64) - 1]

# A run's refusals that are the machine's, not the plan's: no backend or device for the plan's
# device kind (--inspect describes a CUDA plan on a machine without a GPU).
MACHINE = re.compile(r"this dprun has no \w+ backend|has no usable GPU")
SANITIZER = re.compile(r"Sanitizer|runtime error:|terminate called|Segmentation fault|Aborted")


def fix_crc(data):
    payload = bytes(data[HEADER:])
    data[CRC_AT:CRC_AT + 4] = struct.pack("<I", zlib.crc32(payload) & 0xFFFFFFFF)


# The plan's FlatBuffer schema (runtime/format/plan.fbs): each table's fields in id order, as
# (name, type). Types: a scalar's struct code, "str", ("table", name), or ("vec", element).
SCHEMA = {
    "Attr": [("name", "str"), ("i", "q"), ("f", "d"), ("ints", ("vec", "q"))],
    "Buffer": [("dtype", "B"), ("shape", ("vec", "q")), ("offset", "Q"), ("device", "H")],
    "Init": [("kind", "B"), ("a", "d"), ("b", "d"), ("fan_in", "q"), ("fan_out", "q")],
    "Param": [("name", "str"), ("buffer", "I"), ("grad", "i"), ("init", ("table", "Init")),
              ("kind", "B")],
    "Input": [("name", "str"), ("buffer", "I"), ("role", "B")],
    "Kernel": [("kind", "H"), ("inputs", ("vec", "I")), ("outputs", ("vec", "I")),
               ("attrs", ("vec", ("table", "Attr"))), ("loc", "str"), ("device", "h")],
    "Output": [("name", "str"), ("buffer", "I"), ("role", "B")],
    "Collective": [("kind", "B"), ("bucket", "i"), ("dtype", "B"), ("elements", "q"),
                   ("group", "B"), ("group_id", "i"), ("tensors", ("vec", "str")),
                   ("loc", "str")],
    "Step": [("name", "str"), ("kernels", ("vec", ("table", "Kernel"))),
             ("outputs", ("vec", ("table", "Output")))],
    "LrSchedule": [("kind", "B"), ("warmup_epochs", "d"), ("warmup_start", "d"), ("every", "d"),
                   ("factor", "d"), ("epochs", "d"), ("min_scale", "d"), ("patience", "q"),
                   ("threshold", "d")],
    "Plan": [("producer", "str"), ("model", "str"), ("batch", "q"), ("arena_bytes", "Q"),
             ("persistent_bytes", "Q"), ("buffers", ("vec", ("table", "Buffer"))),
             ("params", ("vec", ("table", "Param"))), ("inputs", ("vec", ("table", "Input"))),
             ("train", ("table", "Step")), ("eval", ("table", "Step")),
             ("devices_per_process", "i"), ("processes", "i"),
             ("collectives", ("vec", ("table", "Collective"))), ("manifest_hash", "Q"),
             ("device_kind", "B"), ("lr_schedule", ("table", "LrSchedule")), ("nodes", "i"),
             ("servers", ("vec", ("table", "Plan"))), ("staleness", "q"), ("sync", "B"),
             ("server", "i")],
}


def plan_fields(payload):
    """Every scalar and string of a plan's FlatBuffer payload, as (path, struct code or "str",
    byte offset in the payload): where a mutation changes one value and leaves the structure
    intact, so that it reaches the checks behind the FlatBuffer verifier."""
    out = []

    def u32(at):
        return struct.unpack_from("<I", payload, at)[0]

    def element(kind, at, path):
        if kind == "str":
            out.append((path, "str", at + u32(at)))
        elif isinstance(kind, tuple) and kind[0] == "table":
            table(kind[1], at + u32(at), path)
        elif isinstance(kind, tuple) and kind[0] == "vec":
            start = at + u32(at)
            width = 4 if not isinstance(kind[1], str) or kind[1] == "str" \
                else struct.calcsize("<" + kind[1])
            for i in range(u32(start)):
                element(kind[1], start + 4 + i * width, "%s[%d]" % (path, i))
        else:
            out.append((path, kind, at))

    def table(name, at, path):
        vtable = at - struct.unpack_from("<i", payload, at)[0]
        vsize = struct.unpack_from("<H", payload, vtable)[0]
        for i, (field, kind) in enumerate(SCHEMA[name]):
            if 4 + 2 * i + 2 > vsize:
                break
            off = struct.unpack_from("<H", payload, vtable + 4 + 2 * i)[0]
            if off:
                element(kind, at + off, "%s.%s" % (path, field) if path else field)

    table("Plan", u32(0), "")
    return out


BUFFER_ID = re.compile(r"\.(buffer|grad)$|\.(inputs|outputs)\[\d+\]$")


def interesting(kind, value, rng):
    """A new value for a scalar: a neighbour, a double or half, a limit, 0, 1 or -1."""
    if kind == "d":
        return rng.choice([0.0, -1.0, 1e308, float("inf"), float("nan"), value * 2, -value,
                           value + 1, 1e-300])
    bits = struct.calcsize("<" + kind) * 8
    signed = kind.islower()
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    choice = rng.choice([value + 1, value - 1, value * 2, value // 2, 0, 1, -1, high, low,
                         value + rng.randrange(2, 9)])
    return min(max(choice, low), high)


def mutate_field(original, rng, fields):
    """A mutation of one field of the plan's FlatBuffer, or None where it changes nothing."""
    data = bytearray(original)
    path, kind, at = rng.choice(fields)
    at += HEADER
    if kind == "str":
        length = struct.unpack_from("<I", data, at)[0]
        if length == 0:
            return None
        i = at + 4 + rng.randrange(length)
        old = chr(data[i])
        data[i] = ord(rng.choice("abcdefghijklmnopqrstuvwxyz_0123456789"))
        what = "%s char %d %r -> %r" % (path, i - at - 4, old, chr(data[i]))
    else:
        value = struct.unpack_from("<" + kind, data, at)[0]
        new = interesting(kind, value, rng)
        # A buffer id half the time another buffer of the same plan: an input, output or
        # gradient re-pointed at a buffer of another shape is what the id checks let through.
        prefix = path[:path.index("]") + 2] if path.startswith("servers[") else ""
        if BUFFER_ID.search(path) and rng.random() < 0.5:
            ids = [int(m.group(1)) for m in (re.match(re.escape(prefix) + r"buffers\[(\d+)\]", p)
                                             for p, _, _ in fields) if m]
            new = rng.randrange(max(ids) + 1 if ids else 1)
        struct.pack_into("<" + kind, data, at, new)
        what = "%s %r -> %r" % (path, value, new)
    return what, data


def mutate_bytes(original, rng):
    """A mutation of the payload's raw bytes, blind to its structure."""
    size = len(original)
    data = bytearray(original)
    at = rng.randrange(HEADER, size)
    op = rng.choice(["flip", "byte", "inc", "dec", "word", "qword"])
    if op == "flip":
        bit = rng.randrange(8)
        data[at] ^= 1 << bit
        what = "flip bit %d" % bit
    elif op == "byte":
        data[at] = rng.randrange(256)
        what = "byte=0x%02x" % data[at]
    elif op in ("inc", "dec"):
        data[at] = (data[at] + (1 if op == "inc" else -1)) & 0xFF
        what = "byte%s1" % ("+" if op == "inc" else "-")
    else:  # an aligned u32 ("word") or u64 set to a value that tends to break things
        width, fmt, words = (4, "<I", WORDS32) if op == "word" else (8, "<Q", WORDS64)
        at = max(HEADER, at & ~(width - 1))
        if at + width > size:
            return None
        value = rng.choice(words)
        data[at:at + width] = struct.pack(fmt, value)
        what = "u%d=0x%x" % (8 * width, value)
    return "%s @%d" % (what, at), data


def mutate(original, rng, fields):
    """One deterministic mutation: of a field of the FlatBuffer (three in four), else of raw
    bytes; (description, bytes with the header's CRC-32 recomputed)."""
    while True:
        made = mutate_field(original, rng, fields) if rng.random() < 0.75 \
            else mutate_bytes(original, rng)
        if made is None or bytes(made[1]) == original:
            continue
        what, data = made
        fix_crc(data)
        return what, bytes(data)


def write_subset(src, dst, train, test):
    """The first `train` and `test` samples of an IDX data set (gzipped or not): runs of a
    mutated plan load it in a fraction of the full set's time."""
    os.makedirs(dst, exist_ok=True)
    for prefix, keep in (("train", train), ("t10k", test)):
        for kind in ("images", "labels"):
            dims = 3 if kind == "images" else 1
            name = "%s-%s-idx%d-ubyte" % (prefix, kind, dims)
            path = os.path.join(src, name)
            data = None
            if os.path.exists(path + ".gz"):
                with gzip.open(path + ".gz", "rb") as f:
                    data = f.read()
            elif os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
            else:
                sys.exit("plan_mutations.py: %s: no %s file" % (src, name))
            shape = list(struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims]))
            per = 1
            for d in shape[1:]:
                per *= d
            shape[0] = min(shape[0], keep)
            start = 4 + 4 * dims
            body = data[start:start + shape[0] * per]
            with open(os.path.join(dst, name), "wb") as f:
                f.write(data[:4] + struct.pack(">" + "I" * dims, *shape) + body)


class Outcome:
    def __init__(self, code, err, seconds, timed_out=False):
        self.code, self.err, self.seconds, self.timed_out = code, err, seconds, timed_out

    def crashed(self):
        return self.timed_out or self.code < 0 or self.code >= 128 or bool(SANITIZER.search(self.err))

    def message(self):
        # dprun's own line; under mpirun the launcher's notes follow it.
        lines = [l for l in self.err.strip().splitlines() if l.strip()]
        ours = [l for l in lines if "dprun: " in l]
        text = (ours or lines or [""])[-1]
        return text if len(text) <= 240 else text[:237] + "..."

    def text(self):
        if self.timed_out:
            return "timed out after %.0f s" % self.seconds
        if self.code < 0:
            return "killed by signal %d" % -self.code
        return "exit %d%s" % (self.code, (": " + self.message()) if self.code else "")


def run(command, timeout):
    """The command's outcome, and its standard output."""
    start = time.monotonic()
    try:
        p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        return (Outcome(p.returncode, p.stderr.decode("utf-8", "replace"),
                        time.monotonic() - start), p.stdout.decode("utf-8", "replace"))
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode("utf-8", "replace") if e.stderr else ""
        return Outcome(-9, err, time.monotonic() - start, timed_out=True), ""


def launch_size(inspect_text):
    """Processes a run of the plan takes, from its --inspect summary."""
    m = re.search(r"parameter servers: (\d+) server\(s\) \+ (\d+) worker", inspect_text)
    if m:
        return int(m.group(1)) + int(m.group(2))
    m = re.search(r"data parallel: \d+ device\(s\) per process x (\d+) process", inspect_text)
    return int(m.group(1)) if m else 1


class Harness:
    def __init__(self, args):
        self.args = args
        self.counts = {"mutations": 0, "inspect accepts": 0, "inspect refuses": 0,
                       "runs": 0, "crashes": 0, "mismatches": 0, "data or machine refusals": 0,
                       "inspect refuses, run trains": 0}
        self.findings = []

    def dprun(self, plan, *extra):
        return [self.args.dprun, plan] + list(extra)

    def run_command(self, plan, processes):
        command = self.dprun(plan, "--data", self.args.data_dir, "--steps-per-epoch", "2", "--quiet",
                             "--threads", "1", "--collective-timeout", "20")
        if processes > 1:
            if not self.args.mpirun:
                return None
            command = self.args.mpirun.split() + ["-n", str(processes)] + command
        return command

    def finding(self, kind, name, detail, plan_bytes):
        self.findings.append((kind, name, detail))
        print("%s: %s: %s" % (kind, name, detail), flush=True)
        if self.args.keep:
            os.makedirs(self.args.keep, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
            with open(os.path.join(self.args.keep, safe + ".dpx"), "wb") as f:
                f.write(plan_bytes)

    def baseline(self, path):
        """The unmutated plan's --inspect summary and --check-gradients exit status."""
        p = subprocess.run(self.dprun(path, "--inspect"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit("plan_mutations.py: %s is refused unmutated: %s" %
                     (path, p.stderr.decode().strip()))
        summary = p.stdout.decode()
        grad, _ = run(self.dprun(path, "--check-gradients"), self.args.timeout)
        return summary, grad.code

    def check(self, name, path, plan_bytes, base_processes, base_grad_code):
        timeout = self.args.timeout
        self.counts["mutations"] += 1
        inspected, summary = run(self.dprun(path, "--inspect"), timeout)
        accepted = inspected.code == 0
        self.counts["inspect accepts" if accepted else "inspect refuses"] += 1
        processes = launch_size(summary) if accepted else base_processes
        grad, _ = run(self.dprun(path, "--check-gradients"), timeout)
        command = self.run_command(path, processes)
        trained = run(command, timeout)[0] if command else None
        if trained:
            self.counts["runs"] += 1
        crashes = [(what, o) for what, o in (("--inspect", inspected), ("--check-gradients", grad),
                                             ("run", trained)) if o and o.crashed()]
        self.counts["crashes"] += bool(crashes)
        for what, o in crashes:
            self.finding("CRASH", name, "%s: %s %s" % (what, o.text(), o.err.strip()[-400:]),
                         plan_bytes)
        if crashes:
            return
        if accepted:
            mismatch = False
            if trained and (trained.code in (4, 7) or MACHINE.search(trained.err)):
                self.counts["data or machine refusals"] += 1
                if self.args.verbose:
                    print("data/machine: %s: run %s" % (name, trained.text()))
            elif trained and trained.code != 0:
                mismatch = True
                self.finding("MISMATCH", name, "--inspect accepts, run " + trained.text(),
                             plan_bytes)
            # A refusal of a plan the check cannot take (its unmutated plan's too) is not one,
            # nor is a report of gradients that disagree (a mutated attribute may make them).
            broken = grad.code not in (0, 5) and grad.code != base_grad_code
            if grad.code == 5 and "disagree with finite differences" not in grad.err:
                broken = True
            if broken and not (grad.code == 7 or MACHINE.search(grad.err)):
                mismatch = True
                self.finding("MISMATCH", name, "--inspect accepts, --check-gradients " +
                             grad.text(), plan_bytes)
            self.counts["mismatches"] += mismatch
        elif trained and trained.code == 0:
            self.counts["inspect refuses, run trains"] += 1
            self.finding("STRICT", name, "--inspect refuses (%s), a run trains" %
                         inspected.message(), plan_bytes)
        if self.args.verbose:
            print("%s: inspect %s; check-gradients %s; run %s" %
                  (name, inspected.text(), grad.text(), trained.text() if trained else "skipped"))

    def plans(self):
        """(name, path) of each plan to mutate: given, or compiled from the default models."""
        if self.args.plan:
            return [(os.path.splitext(os.path.basename(p))[0], p) for p in self.args.plan]
        out = []
        for name, model, options in DEFAULT_PLANS:
            if self.args.only and name not in self.args.only:
                continue
            path = os.path.join(self.args.work, name + ".dpx")
            subprocess.run([self.args.dpc, "compile", os.path.join(self.args.models, model), "-o",
                            path, "--quiet"] + options, check=True)
            out.append((name, path))
        return out

    def main(self):
        a = self.args
        os.makedirs(a.work, exist_ok=True)
        if a.subset:
            subset = os.path.join(a.work, "data")
            write_subset(a.data, subset, a.subset, max(a.subset // 2, 1))
            a.data_dir = subset
        else:
            a.data_dir = a.data
        plans = self.plans()
        for index, (name, path) in enumerate(plans):
            with open(path, "rb") as f:
                original = f.read()
            summary, base_grad = self.baseline(path)
            processes = launch_size(summary)
            # Each plan's mutations come from their own stream: adding a plan leaves the
            # others' unchanged.
            rng = random.Random("%d/%s" % (a.seed, name))
            fields = plan_fields(original[HEADER:])
            for i in range(a.mutations):
                what, data = mutate(original, rng, fields)
                mutated = os.path.join(a.work, "mutated.dpx")
                with open(mutated, "wb") as f:
                    f.write(data)
                self.check("%s#%d (%s)" % (name, i, what), mutated, data, processes, base_grad)
        c = self.counts
        print("%d mutations of %d plan(s): --inspect accepted %d, refused %d; %d crashed, %d "
              "mismatched, %d refused by a run for the data or the machine, %d accepted by a "
              "run but not by --inspect" % (c["mutations"], len(plans), c["inspect accepts"],
                                            c["inspect refuses"], c["crashes"], c["mismatches"],
                                            c["data or machine refusals"],
                                            c["inspect refuses, run trains"]))
        return 1 if c["crashes"] or c["mismatches"] or c["inspect refuses, run trains"] else 0


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dprun", required=True)
    p.add_argument("--dpc", help="compiles the default plans (without --plan)")
    p.add_argument("--models", help="the models folder the default plans come from")
    p.add_argument("--plan", action="append", help="a plan to mutate (repeatable); default: "
                   + ", ".join(n for n, _, _ in DEFAULT_PLANS))
    p.add_argument("--only", action="append", help="of the default plans, only this one")
    p.add_argument("--data", required=True, help="an IDX data set (fashion-mnist)")
    p.add_argument("--subset", type=int, default=256,
                   help="train on this many of its samples (half as many test ones); 0: all")
    p.add_argument("--mutations", type=int, default=100, help="mutations of each plan")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=120, help="seconds each command may take")
    p.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe --mca btl "
                   "self,vader,tcp", help="launcher of multi-process plans ('' skips their runs)")
    p.add_argument("--work", required=True, help="folder for the plans and the data subset")
    p.add_argument("--keep", help="copy each plan with a finding here")
    p.add_argument("--verbose", "-v", action="store_true")
    args = p.parse_args()
    if not args.plan and not (args.dpc and args.models):
        p.error("give --plan, or --dpc and --models")
    if args.mpirun and not shutil.which(args.mpirun.split()[0]):
        args.mpirun = ""
    return args


if __name__ == "__main__":
    sys.exit(Harness(parse()).main())
