#!/usr/bin/env python3
"""Kills compiles at many moments and checks that the plan path is always whole.

Usage: kill_compiles.py DPC MODEL OUT.dpx [--kills N] [--signal KILL|INT|TERM]...

OUT.dpx must already hold a plan. Each round starts `DPC compile MODEL -o OUT.dpx`, sends a
signal after a delay that sweeps the compile's measured duration (so some land while the plan
is written), and waits for the end. After every round OUT.dpx must be a whole plan: its header's
payload size is the file's and the payload's CRC-32 is the header's (the old plan or the new
one, never a part); after SIGINT and SIGTERM no temporary file may be left beside it. Prints one
line per signal and exits 1 at the first violation.
"""
import argparse
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

ap = argparse.ArgumentParser()
ap.add_argument("dpc")
ap.add_argument("model")
ap.add_argument("out")
ap.add_argument("--kills", type=int, default=8)
ap.add_argument("--signal", action="append", choices=["KILL", "INT", "TERM"])
args = ap.parse_args()


def whole(path):
    data = open(path, "rb").read()
    if len(data) < 32 or data[:8] != b"DPXPLAN\0":
        return f"{len(data)} bytes, no plan header"
    size, crc = struct.unpack_from("<QI", data, 16)
    if size != len(data) - 32:
        return f"header says {size} payload bytes, file has {len(data) - 32}"
    if zlib.crc32(data[32:]) != crc:
        return "checksum mismatch"
    return None


command = [args.dpc, "compile", args.model, "-o", args.out, "--quiet"]
start = time.monotonic()
subprocess.run(command, check=True)
duration = time.monotonic() - start
directory = os.path.dirname(os.path.abspath(args.out))
for name in args.signal or ["KILL", "INT", "TERM"]:
    sig = getattr(signal, "SIG" + name)
    for k in range(args.kills):
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * (0.5 + 0.6 * k / max(args.kills - 1, 1)))
        proc.send_signal(sig)
        proc.wait()
        problem = whole(args.out)
        if problem:
            sys.exit(f"after SIG{name} #{k + 1}: {args.out} is not a whole plan: {problem}")
        left = [f for f in os.listdir(directory) if ".tmp." in f]
        if left and name != "KILL":
            sys.exit(f"after SIG{name} #{k + 1}: temporary files left: {left}")
        for f in left:  # SIGKILL cannot clean up; the next compile must not mind
            os.unlink(os.path.join(directory, f))
    print(f"SIG{name}: {args.kills} compiles killed, the plan always whole")
