#!/usr/bin/env python3
"""Runs a command beside one busy process, both on the same 2 CPUs.

Usage: beside_busy.py -- COMMAND...

Starts `while True: pass` pinned to the first 2 CPUs this process may use, gives it a moment
to be running, runs COMMAND pinned to the same 2 CPUs (its output passes through), then ends
the busy process. Exits with the command's status; 77 when fewer than 2 CPUs are allowed.
"""
import os
import subprocess
import sys
import time

command = sys.argv[1:]
if command[:1] == ["--"]:
    command = command[1:]
cpus = sorted(os.sched_getaffinity(0))[:2]
if len(cpus) < 2:
    print("beside_busy.py: fewer than 2 CPUs allowed", file=sys.stderr)
    sys.exit(77)
pin = lambda: os.sched_setaffinity(0, cpus)
busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pin)
try:
    time.sleep(0.5)
    sys.exit(subprocess.call(command, preexec_fn=pin))
finally:
    busy.kill()
    busy.wait()
