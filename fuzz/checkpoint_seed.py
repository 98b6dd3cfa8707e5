#!/usr/bin/env python3
"""Writes small whole checkpoints (format versions 1 and 4, docs/checkpoints.md) as fuzzing seeds.

Usage: checkpoint_seed.py DIR

DIR/whole-0 and DIR/whole-1: the fuzz_checkpoint mode byte (0 as is, 1 checksum fixed up), then
a version 1 checkpoint of three tensors with a finished epoch and a partial one, built from the
format's description alone (an independent writer of it). DIR/whole4-0 and DIR/whole4-1: the
same run in version 4, with the compute threads, the validation figures, two validations and
--restore-best's copies of the two weights.
"""
import struct
import sys
import zlib


def string(b):
    return struct.pack("<I", len(b)) + b


def align(n):
    return (n + 63) // 64 * 64


def checkpoint(version):
    records = struct.pack("<qqqqQqQII", 17, 1, 3, 24, 42, 8, 0x1234, 2, 1)
    records += struct.pack("<ddd", 3.25, 11.0, 0.5)
    records += struct.pack("<ddIq", 0.5, 0.42, 1, 1) + struct.pack("<ddIq", 1.0, 0.4, 1, 0)
    records += string(b"tiny")
    records += struct.pack("<I3f", 3, 1.5, 1.0, 0.75)
    records += struct.pack("<I", 1) + struct.pack("<qqqddddddd", 1, 7, 56, 0.6, 0.5, 1.2, 44.8,
                                                 0.5, 0.45, 0.8)
    records += struct.pack("<I2f", 2, 2.0, 1.0)
    tensors = [(b"dense/kernel", 0, [4, 3]), (b"dense/kernel/m", 1, [4, 3]),
               (b"dense/bias", 0, [3])]
    if version >= 4:
        records += struct.pack("<I", 2)                   # threads
        records += struct.pack("<dd", 0.5, 0.75)          # epoch 1's validation figures
        records += struct.pack("<I", 2)                   # validations: epoch, step, samples,
        records += struct.pack("<qqqddI", 1, 7, 16, 0.5, 0.75, 1)  # loss, accuracy, epoch end
        records += struct.pack("<qqqddI", 2, 9, 16, 0.4, 0.8125, 0)
        records += struct.pack("<II", 1, 1) + string(b"val_accuracy")  # the best: validation 2
        tensors += [(b"dense/kernel", 2, [4, 3]), (b"dense/bias", 2, [3])]
    table_bytes = 4 + sum(4 + len(n) + 4 + 8 * len(dims) + 16 for n, _, dims in tensors)
    at = align(64 + len(records) + table_bytes)
    table, layout = struct.pack("<I", len(tensors)), []
    for name, kind, dims in tensors:
        count = 1
        for d in dims:
            count *= d
        table += string(name) + struct.pack("<BBBB", kind, 0, len(dims), 0)
        table += b"".join(struct.pack("<q", d) for d in dims) + struct.pack("<QQ", at, 4 * count)
        layout.append((at, count))
        at = align(at + 4 * count)
    payload = bytearray(records + table)
    for offset, count in layout:
        payload += b"\0" * (offset - 64 - len(payload))
        payload += struct.pack(f"<{count}f", *[0.25 * i for i in range(count)])
    # From version 3 the CRC-32 covers the version's 4 bytes, then the payload.
    start = zlib.crc32(struct.pack("<I", version)) if version >= 3 else 0
    crc = zlib.crc32(bytes(payload), start)
    header = b"\x89dpckpt\n" + struct.pack("<IIQI", version, 64, len(payload), crc)
    return header + b"\0" * (64 - len(header)) + bytes(payload)


for name, version in (("whole", 1), ("whole4", 4)):
    image = checkpoint(version)
    for mode in (0, 1):
        with open(f"{sys.argv[1]}/{name}-{mode}", "wb") as f:
            f.write(bytes([mode]) + image)
