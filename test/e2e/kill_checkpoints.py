#!/usr/bin/env python3
"""Kills a dprun with SIGKILL while it writes checkpoints, many times, and checks every file left.

Usage: kill_checkpoints.py --dir DIR [--trials N] [--spread S] -- COMMAND...

COMMAND is a dprun that writes a checkpoint into DIR every step (--checkpoint-every 1). Each
trial starts it, waits until DIR holds its first checkpoint of the trial, then kills it with
SIGKILL after a delay that sweeps [0, S) seconds over the trials (so the kill lands at every
moment of the write: while the temporary file grows, before the rename, after it), and then
reads every checkpoint in DIR with this script's own reader of the format (docs/checkpoints.md):
the magic, the version, the payload size against the file's, and the CRC-32 of the payload. A
file named ckpt-*.dpk that does not verify is a partial file a reader could pick up: the test
fails. Temporary files (ckpt-*.dpk.tmp.<pid>) may be left by a kill; dprun removes them later.
Prints one line per trial and exits 1 on the first broken file.
"""
import argparse
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

from job_output import signal_group

MAGIC = b"\x89dpckpt\n"
NAME = re.compile(r"^ckpt-\d{12}\.dpk$")


def verify(path):
    """None when `path` is a whole checkpoint, else what is wrong."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != MAGIC:
        return f"no header ({len(data)} bytes)"
    version, header_bytes, payload, crc = struct.unpack_from("<IIQI", data, 8)
    if version not in (1, 2, 3, 4) or header_bytes != 64:
        return f"version {version}, header {header_bytes}"
    if payload != len(data) - 64:
        return f"payload of {payload} bytes recorded, {len(data) - 64} present"
    # From version 3 the CRC-32 covers the version's bytes, then the payload.
    start = zlib.crc32(struct.pack("<I", version)) if version >= 3 else 0
    if zlib.crc32(data[64:], start) != crc:
        return "CRC-32 mismatch"
    return None


def checkpoints(directory):
    return sorted(n for n in os.listdir(directory) if NAME.match(n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--spread", type=float, default=0.5)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    os.makedirs(args.dir, exist_ok=True)
    checked = 0
    for trial in range(args.trials):
        before = set(checkpoints(args.dir))
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while set(checkpoints(args.dir)) <= before and proc.poll() is None:
            if time.monotonic() > deadline:
                signal_group(proc, signal.SIGKILL)
                sys.exit(f"trial {trial}: no checkpoint appeared in 120 s")
            time.sleep(0.005)
        if proc.poll() is not None:
            sys.exit(f"trial {trial}: dprun ended (exit {proc.returncode}) before the kill: "
                     + proc.stderr.read().decode(errors="replace"))
        delay = args.spread * trial / args.trials
        time.sleep(delay)
        if not signal_group(proc, signal.SIGKILL):  # it finished during the delay: still checked
            print(f"trial {trial}: dprun ended (exit {proc.wait()}) before the kill")
        proc.wait()
        names = checkpoints(args.dir)
        temps = [n for n in os.listdir(args.dir) if ".tmp." in n]
        for name in names:
            problem = verify(os.path.join(args.dir, name))
            if problem:
                print(f"trial {trial}: BROKEN {name}: {problem}")
                return 1
        checked += len(names)
        print(f"trial {trial}: killed {delay:.3f} s after a new checkpoint appeared; "
              f"{len(names)} checkpoint(s) verify, {len(temps)} temporary file(s) left")
    print(f"all {args.trials} kills left only whole checkpoints ({checked} checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
