#!/usr/bin/env python3
"""Runs a command under a sweep of address-space limits (ulimit -v) and checks how each run
ends: exit 0, or exit 7 with a `dprun: error:` line about memory; never a crash (a signal), a
runtime failure (exit 5) or silence.

Usage: memory_sweep.py --from MIB --to MIB --step MIB -- COMMAND...
Prints one line per limit (`<MiB> MiB: exit <code>`) and a summary; exits 1 on a bad ending.
"""
import argparse
import resource
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--from", dest="lo", type=int, required=True)
ap.add_argument("--to", dest="hi", type=int, required=True)
ap.add_argument("--step", type=int, required=True)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
bad = []
codes = set()
for mib in range(args.lo, args.hi + 1, args.step):
    limit = mib << 20

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    run = subprocess.run(command, preexec_fn=cap, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, timeout=300)
    codes.add(run.returncode)
    last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
    print(f"{mib} MiB: exit {run.returncode} {last[:160]}")
    if run.returncode == 0:
        continue
    if run.returncode != 7 or "dprun: error:" not in run.stderr or "memory" not in last:
        bad.append(mib)
print("exit codes: " + ", ".join(str(c) for c in sorted(codes)))
if bad:
    sys.exit(f"FAILED: limits {bad} ended otherwise than exit 0 or 7 with a memory message")
print("every limit ended with exit 0 or with exit 7 and a message")
