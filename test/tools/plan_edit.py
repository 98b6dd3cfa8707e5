#!/usr/bin/env python3
"""Rewrites one integer attribute of a compiled plan and its checksum, for tests that need a
plan the compiler would never write (a gradient kernel with the wrong activation):

  plan_edit.py IN OUT --step train --attr activation --value 2 [--nth -1]

sets the `i` of attribute ACTIVATION of the NTH kernel of the step that has one (Python
indexing: -1, the default, is the last), keeping the FlatBuffer's structure and recomputing the
header's CRC-32, so that dprun reads the plan and its checks and kernels see the new value."""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_mutations import HEADER, fix_crc, plan_fields  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--step", choices=["train", "eval"], default="train")
    p.add_argument("--attr", required=True)
    p.add_argument("--value", type=int, required=True)
    p.add_argument("--nth", type=int, default=-1)
    a = p.parse_args()
    with open(a.input, "rb") as f:
        data = bytearray(f.read())
    payload = bytes(data[HEADER:])
    fields = {path: (kind, at) for path, kind, at in plan_fields(payload)}
    found = []
    for path, (kind, at) in fields.items():
        if not (path.startswith(a.step + ".kernels[") and path.endswith(".name")):
            continue
        length = struct.unpack_from("<I", payload, at)[0]
        if payload[at + 4:at + 4 + length].decode() == a.attr:
            value = path[:-len(".name")] + ".i"
            if value in fields:
                found.append(value)
    if not found:
        sys.exit("plan_edit.py: %s: no %s kernel has an integer attribute '%s'" %
                 (a.input, a.step, a.attr))
    path = found[a.nth]
    kind, at = fields[path]
    struct.pack_into("<" + kind, data, HEADER + at, a.value)
    fix_crc(data)
    with open(a.output, "wb") as f:
        f.write(data)
    print("%s: %s = %d" % (a.output, path, a.value))


if __name__ == "__main__":
    main()
