#!/usr/bin/env python3
"""Writes a hostile copy of a checkpoint: some fields of its records set to other values, and the
header's CRC-32 fixed up so that the file still verifies (as a file crafted on purpose, or
written by a buggy tool, would). Built from the format's description (docs/checkpoints.md).

Usage: patch_checkpoint.py SRC DST FIELD=VALUE...

FIELD is one of the fixed records at the start of the payload: step, epochs_done,
steps_in_epoch, samples_in_epoch, seed, global_batch (integers), epoch_loss_sum, epoch_correct,
epoch_seconds, plateau_scale, plateau_best, early_stop_scale, early_stop_best (floats: also nan,
inf). Prints the fields it changed.
"""
import struct
import sys
import zlib

HEADER = 64
MAGIC = b"\x89dpckpt\n"
# Offsets from the payload's start, and the struct format of each field.
FIELDS = {
    "step": (0, "<q"),
    "epochs_done": (8, "<q"),
    "steps_in_epoch": (16, "<q"),
    "samples_in_epoch": (24, "<q"),
    "seed": (32, "<Q"),
    "global_batch": (40, "<q"),
    "epoch_loss_sum": (64, "<d"),
    "epoch_correct": (72, "<d"),
    "epoch_seconds": (80, "<d"),
    "plateau_scale": (88, "<d"),
    "plateau_best": (96, "<d"),
    "early_stop_scale": (116, "<d"),
    "early_stop_best": (124, "<d"),
}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, dst, changes = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(src, "rb") as f:
        data = bytearray(f.read())
    if len(data) < HEADER or data[:8] != MAGIC:
        sys.exit(f"{src}: not a checkpoint")
    version, header_bytes, payload, crc = struct.unpack_from("<IIQI", data, 8)
    if version not in (1, 2, 3, 4) or header_bytes != HEADER or payload != len(data) - HEADER:
        sys.exit(f"{src}: not a whole version 1 to 4 checkpoint")
    # From version 3 the CRC-32 covers the version too.
    start = zlib.crc32(struct.pack("<I", version)) if version >= 3 else 0
    if zlib.crc32(bytes(data[HEADER:]), start) != crc:
        sys.exit(f"{src}: its CRC-32 does not match: patch a file that verifies")
    for change in changes:
        name, _, text = change.partition("=")
        if name not in FIELDS:
            sys.exit(f"unknown field {name!r} (one of {', '.join(FIELDS)})")
        offset, fmt = FIELDS[name]
        value = float(text) if fmt == "<d" else int(text, 0)
        struct.pack_into(fmt, data, HEADER + offset, value)
        print(f"{name} = {value}")
    struct.pack_into("<I", data, 24, zlib.crc32(bytes(data[HEADER:]), start))
    with open(dst, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
