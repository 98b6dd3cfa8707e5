#!/usr/bin/env python3
"""Runs a second command while a first dprun is held at an exact step, then kills the first.

Usage: hold_and_run.py --at-step S FIRST... --then SECOND...

Starts FIRST (a dprun) with the test events on (events.py), so that it stops itself (SIGSTOP)
just before its training step S and says so; once it is stopped, runs SECOND to its end (at
most --limit seconds, default 120) with the plain environment, and prints its output and exit
code; then kills FIRST with SIGKILL (a job that dies, as a node failure or a scheduler's kill
ends it) and waits for it. Prints:

    first: stopped at step S, pid P
    <the second command's output>
    second: exit C
    first: killed

Exits 1 when FIRST ended before step S or SECOND outlived the limit. Nothing here waits on
wall time but for the limits.
"""
import argparse
import os
import signal
import subprocess
import sys

from events import HeldJob
from job_output import signal_group


def main():
    argv = sys.argv[1:]
    if "--then" not in argv:
        sys.exit(__doc__)
    split = argv.index("--then")
    ap = argparse.ArgumentParser()
    ap.add_argument("--at-step", type=int, required=True)
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("first", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv[:split])
    first = args.first[1:] if args.first[:1] == ["--"] else args.first
    second = argv[split + 1:]
    if not first or not second:
        sys.exit(__doc__)

    held = HeldJob(first, 0, args.at_step)
    proc, events, give_up = held.proc, held.events, held.give_up
    pid = held.held()
    print(f"first: stopped at step {args.at_step}, pid {pid}", flush=True)

    env = dict(os.environ)
    env.pop("DPRUN_TEST_EVENTS", None)
    env.pop("DPRUN_TEST_STOP", None)
    try:
        done = subprocess.run(second, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, timeout=args.limit)
    except subprocess.TimeoutExpired as e:
        out = e.output or ""
        print(out.decode(errors="replace") if isinstance(out, bytes) else out, end="")
        give_up(f"the second command was still running after {args.limit} s")
    print(done.stdout, end="")
    print(f"second: exit {done.returncode}", flush=True)

    signal_group(proc, signal.SIGKILL)
    proc.wait()
    events.close()
    print("first: killed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
