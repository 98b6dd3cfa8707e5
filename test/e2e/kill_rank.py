#!/usr/bin/env python3
"""Stops one rank of a running dprun job at an exact step, signals it, and checks that the job
ends.

Usage: kill_rank.py --rank N --at-step S [--signal KILL|STOP|TERM|USR1|INT]
                    [--cont-after-event R:EVENT] [--limit S] [--any-exit] -- COMMAND...

Starts the command (e.g. `mpirun -n 2 dprun plan.dpx ...` or `srun -n 2 ...`) with the test
events on (events.py: DPRUN_TEST_EVENTS and DPRUN_TEST_STOP=N:S), so that the dprun process of
rank N stops itself (SIGSTOP) just before its step S (a parameter server: its update S) and
says so. Once it is stopped, the signal lands there however late this script gets to it:
SIGKILL (a rank dead at step S), SIGSTOP (a hung one: it stays stopped), or SIGTERM, SIGUSR1 or
SIGINT (a stop seen by that rank alone: sent, then the rank is continued). With
--cont-after-event, a stopped rank is continued once rank R reports EVENT (e.g. `1:epoch 2`): a
slow rank, not a hung one. Then it waits for every process to end. Prints the job's output,
then `job ended: exit <code> after <s> s`. Exits 1 when the job outlived LIMIT seconds (default
30) after the signal or exited 0 (unless --any-exit: `mpirun --enable-recovery` exits 0
whatever its processes did).
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from events import HeldJob
from job_output import signal_group

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def is_dprun_of(pid, plan):
    """Whether `pid` is a dprun process of an MPI job running `plan`."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() != "dprun":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if plan is not None and plan.encode() not in f.read().split(b"\0"):
                return False
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:
        return False
    return any(var.encode() + b"=" in env for var in RANK_VARS)


def describe_processes(launcher, before):
    """One line per process of the job still there (the launcher's group, or a dprun started
    since `before`): pid, name, state and the kernel function it waits in."""
    lines = []
    for p in sorted(int(x) for x in os.listdir("/proc") if x.isdigit() and int(x) not in before):
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            state, pgid = fields[0], int(fields[2])
            with open(f"/proc/{p}/wchan") as f:
                wchan = f.read().strip() or "-"
        except (OSError, ValueError, IndexError):
            continue
        if pgid == launcher or name == "dprun" or p == launcher:
            lines.append(f"  pid {p} {name}: state {state}, waiting in {wchan}")
    return "left when the limit passed:\n" + ("\n".join(lines) if lines else "  (none)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--at-step", type=int, required=True,
                        help="the rank stops itself just before this step (server: update)")
    parser.add_argument("--limit", type=float, default=30)
    parser.add_argument("--signal", choices=["KILL", "STOP", "TERM", "USR1", "INT"], default="KILL")
    parser.add_argument("--cont-after-event",
                        help="R:EVENT: continue the stopped rank once rank R reports EVENT")
    parser.add_argument("--any-exit", action="store_true",
                        help="accept exit 0 (a launcher that keeps the job past a lost process)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    # Processes there before the job are not its own (an earlier job on the same plan may still
    # be going away).
    before = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    held = HeldJob(command, args.rank, args.at_step)
    out, job, events, give_up, alive = held.output, held.proc, held.events, held.give_up, held.alive
    victim = held.held()
    sig = getattr(signal, "SIG" + args.signal)
    if sig != signal.SIGSTOP:
        os.kill(victim, sig)  # queued before kill() returns: delivered when it runs on
    if sig not in (signal.SIGSTOP, signal.SIGKILL) or args.cont_after_event:
        if args.cont_after_event:
            rank, _, event = args.cont_after_event.partition(":")
            if events.wait(int(rank), event, alive) is None:
                give_up(f"rank {rank} never reported {event!r} while rank {args.rank} was stopped")
        os.kill(victim, signal.SIGCONT)
    killed = time.monotonic()
    try:
        code = job.wait(timeout=args.limit + 30)
    except subprocess.TimeoutExpired:
        # What was still there, for the failure's diagnosis, before it is all killed.
        print(describe_processes(job.pid, before), file=sys.stderr)
        signal_group(job, signal.SIGKILL)
        job.wait()
        code = None
    elapsed = time.monotonic() - killed
    try:  # a stopped rank the launcher did not end must not outlive the test
        os.kill(victim, signal.SIGKILL)
    except OSError:
        pass
    plan = next((a for a in command if a.endswith(".dpx")), None)

    def jobs_processes():
        return [int(p) for p in os.listdir("/proc")
                if p.isdigit() and int(p) not in before and is_dprun_of(int(p), plan)]

    # Every dprun of the job must be gone too, not just the launcher.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and jobs_processes():
        time.sleep(0.2)
    left = jobs_processes()
    events.close()
    sys.stdout.write(out.text())
    print(f"sent SIG{args.signal} to rank {args.rank} at step {args.at_step} (pid {victim})")
    print(f"job ended: exit {code} after {elapsed:.1f} s")
    if code is None or elapsed > args.limit or (code == 0 and not args.any_exit) or left:
        print(f"FAILED: the job must end{'' if args.any_exit else ' with a non-zero exit'} "
              f"within {args.limit:g} s of the signal"
              + (f"; dprun processes left: {left}" if left else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
