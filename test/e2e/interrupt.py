#!/usr/bin/env python3
"""Interrupts a running dprun and reports how it ended.

Usage: interrupt.py --signal INT|TERM|USR1 [--after-line TEXT] [--limit S] -- COMMAND...

Starts COMMAND (a dprun, or an mpirun of dprun), waits until its output shows TEXT (default
"epoch 1/", so a first epoch has finished), sends the signal to the command's process group
(as a terminal's Ctrl-C does), then waits at most LIMIT seconds (default 30). Prints the output,
then `ended: exit <code> after <s> s`. Exits 1 when the command outlived the limit.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from job_output import JobOutput, signal_group

ap = argparse.ArgumentParser()
ap.add_argument("--signal", choices=["INT", "TERM", "USR1"], required=True)
ap.add_argument("--after-line", default="epoch 1/")
ap.add_argument("--limit", type=float, default=30)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command

job = JobOutput(command, args.after_line)
proc = job.proc
if not job.seen.wait(120):
    signal_group(proc, signal.SIGKILL)
    proc.wait()
    sys.stdout.write(job.text())
    sys.exit(f"the command never printed {args.after_line!r} within 120 s")
if not signal_group(proc, getattr(signal, "SIG" + args.signal)):
    sys.stdout.write(job.text())
    sys.exit(f"the command ended (exit {proc.wait()}) before SIG{args.signal} could be sent")
sent = time.monotonic()
try:
    proc.wait(timeout=args.limit)
except subprocess.TimeoutExpired:
    signal_group(proc, signal.SIGKILL)
    proc.wait()
    sys.stdout.write(job.text())
    print(f"still running {args.limit} s after SIG{args.signal}: killed")
    sys.exit(1)
sys.stdout.write(job.text())
print(f"sent SIG{args.signal}")
print(f"ended: exit {proc.returncode} after {time.monotonic() - sent:.1f} s")
