#!/usr/bin/env python3
"""Kills one rank of a running data-parallel dprun job and checks that the job ends.

Usage: kill_rank.py --rank N [--signal KILL|STOP|TERM|USR1|INT] [--after-line TEXT |
                    --after-file GLOB] [--delay S] [--limit S] [--any-exit]
                    [--cont-after S] -- COMMAND...

Starts the command (e.g. `mpirun -n 2 dprun plan.dpx ...` or `srun -n 2 ...`), waits until its
output shows TEXT (default: the first epoch line, so training is under way) or a file matching
GLOB exists, then sends SIGKILL
(a dead rank), SIGSTOP (a hung one) or SIGTERM, SIGUSR1 or SIGINT (a stop, seen by that rank
alone) to the dprun process of rank N (found by its MPI/PMIx/SLURM rank variables) and waits for
every process to end. Prints the job's output, then `job ended: exit <code> after <s> s`. Exits
1 when the job outlived LIMIT seconds (default 30) after the signal or exited 0 (unless
--any-exit: `mpirun --enable-recovery` exits 0 whatever its processes did). With --cont-after,
a stopped rank is continued (SIGCONT) after S seconds: a slow rank, not a hung one.
"""
import argparse
import glob
import os
import signal
import subprocess
import sys
import time

from job_output import JobOutput, signal_group

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def rank_of(pid, plan=None):
    """The MPI rank of a dprun process running `plan` (any plan when None), else None."""
    try:
        if plan is not None:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if plan.encode() not in f.read().split(b"\0"):
                    return None
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() != "dprun":
                return None
    except OSError:
        return None
    for var in RANK_VARS:
        if var.encode() in env:
            return int(env[var.encode()])
    return None


def cpu_seconds(pid, ticks):
    """User and system CPU seconds a process has used (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, IndexError, ValueError):
        return 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--after-line", default="epoch 1/")
    parser.add_argument("--after-file", help="wait for a file matching this glob instead of a line "
                        "(a line may reach the launcher's output late on a busy machine)")
    parser.add_argument("--after-cpu", type=float,
                        help="wait until the rank's process has used this many CPU seconds "
                        "instead of a line (robust where the launcher forwards output late)")
    parser.add_argument("--line-fallback-cpu", type=float, default=3,
                        help="with a line to wait for: go on once the rank has used this many "
                        "CPU seconds even if the line has not arrived (a late launcher)")
    parser.add_argument("--limit", type=float, default=30)
    parser.add_argument("--delay", type=float, default=0,
                        help="seconds to wait after the line or file before the signal")
    parser.add_argument("--signal", choices=["KILL", "STOP", "TERM", "USR1", "INT"], default="KILL")
    parser.add_argument("--cont-after", type=float,
                        help="send SIGCONT this many seconds after a SIGSTOP")
    parser.add_argument("--any-exit", action="store_true",
                        help="accept exit 0 (a launcher that keeps the job past a lost process)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    # A rank of an earlier job on the same plan (one this script stopped and killed may still
    # be going away) is not this job's: only processes that were not there before count.
    before = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    out = JobOutput(command, None if args.after_file else args.after_line)
    job = out.proc
    try:  # (after the job started, which keeps the default priority) not starved by the job
        os.setpriority(os.PRIO_PROCESS, 0, -5)
    except OSError:
        pass

    def give_up(why):
        """Ends the job (if it still runs) and exits 1 with the reason and the job's output."""
        signal_group(job, signal.SIGKILL)
        code = job.wait()
        sys.exit("%s (the job ended with exit %s); its output:\n%s" % (why, code, out.text()))

    plan = next((a for a in command if a.endswith(".dpx")), None)

    def ranks_processes():
        """This job's dprun processes of rank --rank."""
        return [int(p) for p in os.listdir("/proc")
                if p.isdigit() and int(p) not in before and rank_of(int(p), plan) == args.rank]

    victims = []
    if args.after_cpu is not None:
        deadline = time.monotonic() + 120
        ticks = os.sysconf("SC_CLK_TCK")
        while time.monotonic() < deadline and job.poll() is None:
            # Scan /proc only until the rank has started, then read its stat alone: on a loaded
            # machine a scan per poll starved this script for seconds, and the signal came late.
            if not victims:
                victims = ranks_processes()
            if any(cpu_seconds(pid, ticks) >= args.after_cpu for pid in victims):
                break
            time.sleep(0.01 if victims else 0.05)
        else:
            give_up(f"rank {args.rank} never used {args.after_cpu} s of CPU")
    elif args.after_file:
        deadline = time.monotonic() + 120
        while not glob.glob(args.after_file) and time.monotonic() < deadline \
                and job.poll() is None:
            time.sleep(0.01)
        if not glob.glob(args.after_file):
            give_up("no file %r appeared" % args.after_file)
    else:
        # The line, or (mpirun was seen forwarding lines minutes late on a loaded machine) the
        # rank's CPU time showing that it trains: --line-fallback-cpu seconds.
        deadline = time.monotonic() + 120
        ticks = os.sysconf("SC_CLK_TCK")
        while not out.seen.wait(0.05):
            if time.monotonic() >= deadline or job.poll() is not None:
                give_up("the job never printed %r" % args.after_line)
            if not victims:
                victims = ranks_processes()
            if any(cpu_seconds(pid, ticks) >= args.line_fallback_cpu for pid in victims):
                print(f"kill_rank: no {args.after_line!r} line yet, but rank {args.rank} has "
                      f"used {args.line_fallback_cpu} s of CPU: going on", file=sys.stderr)
                break
    time.sleep(args.delay)
    # Only the processes of this job: those running its plan file.
    victims = [pid for pid in victims if rank_of(pid, plan) == args.rank] or ranks_processes()
    if not victims:
        give_up(f"no dprun process of rank {args.rank} found")
    signalled = []
    for pid in victims:
        try:
            os.kill(pid, getattr(signal, "SIG" + args.signal))
            signalled.append(pid)
        except ProcessLookupError:
            pass
    if not signalled:
        give_up(f"the dprun process of rank {args.rank} ended before the signal")
    victims = signalled
    killed = time.monotonic()
    if args.cont_after is not None:
        time.sleep(args.cont_after)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
    try:
        code = job.wait(timeout=args.limit + 30)
    except subprocess.TimeoutExpired:
        signal_group(job, signal.SIGKILL)
        job.wait()
        code = None
    if args.signal == "STOP":
        for pid in victims:  # a stopped rank the launcher did not end must not outlive the test
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    elapsed = time.monotonic() - killed
    # Every dprun of the job must be gone too, not just the launcher.
    deadline = time.monotonic() + 5
    def jobs_processes():
        return [int(p) for p in os.listdir("/proc")
                if p.isdigit() and int(p) not in before and rank_of(int(p), plan) is not None]

    while time.monotonic() < deadline and jobs_processes():
        time.sleep(0.2)
    left = jobs_processes()
    sys.stdout.write(out.text())
    print(f"sent SIG{args.signal} to rank {args.rank} (pid {', '.join(map(str, victims))})")
    print(f"job ended: exit {code} after {elapsed:.1f} s")
    if code is None or elapsed > args.limit or (code == 0 and not args.any_exit) or left:
        print(f"FAILED: the job must end{'' if args.any_exit else ' with a non-zero exit'} "
              f"within {args.limit:g} s of the kill"
              + (f"; dprun processes left: {left}" if left else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
