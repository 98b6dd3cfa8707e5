#!/usr/bin/env python3
"""Interrupts a running dprun at an exact step and reports how it ended.

Usage: interrupt.py --signal INT|TERM|USR1 --at-step S [--limit S] -- COMMAND...

Starts COMMAND (a dprun, or an mpirun of dprun) with the test events on (events.py), so that
the dprun process of rank 0 stops itself just before its training step S and says so; then
sends the signal to the command's process group (as a terminal's Ctrl-C does) and continues
the stopped process, so that the signal lands at step S however late this script gets to it.
Then it waits at most LIMIT seconds (default 30). Prints the output, then `ended: exit <code>
after <s> s`. Exits 1 when the command outlived the limit.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from events import HeldJob
from job_output import signal_group

ap = argparse.ArgumentParser()
ap.add_argument("--signal", choices=["INT", "TERM", "USR1"], required=True)
ap.add_argument("--at-step", type=int, required=True)
ap.add_argument("--limit", type=float, default=30)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command

held = HeldJob(command, 0, args.at_step)
job, proc, events, give_up = held.output, held.proc, held.events, held.give_up
pid = held.held()
if not signal_group(proc, getattr(signal, "SIG" + args.signal)):
    give_up(f"the command ended (exit {proc.wait()}) before SIG{args.signal} could be sent")
os.kill(pid, signal.SIGCONT)
sent = time.monotonic()
try:
    proc.wait(timeout=args.limit)
except subprocess.TimeoutExpired:
    signal_group(proc, signal.SIGKILL)
    proc.wait()
    events.close()
    sys.stdout.write(job.text())
    print(f"still running {args.limit} s after SIG{args.signal}: killed")
    sys.exit(1)
events.close()
sys.stdout.write(job.text())
print(f"sent SIG{args.signal} at step {args.at_step}")
print(f"ended: exit {proc.returncode} after {time.monotonic() - sent:.1f} s")
