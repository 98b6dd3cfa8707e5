#!/usr/bin/env python3
"""Writes a small CIFAR-10 binary data set: data_batch_1..5.bin and test_batch.bin.

Usage: make_cifar.py DIR [--per-file N]

Each record is a label byte then 3 x 32 x 32 channel-planar pixel bytes, as in the real files.
The images are learnable: class c has a bright square in a position and colour of its own over
seeded noise, so a small CNN's loss falls within a few dozen steps.
"""
import argparse
import os
import random


def record(label, rng):
    planes = []
    for channel in range(3):
        plane = bytearray(rng.randrange(0, 64) for _ in range(32 * 32))
        if channel == label % 3:
            top, left = 2 + (label // 3) * 6, 4 + (label % 5) * 4
            for y in range(top, top + 8):
                for x in range(left, left + 8):
                    plane[y * 32 + x] = 255
        planes.append(bytes(plane))
    return bytes([label]) + b"".join(planes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--per-file", type=int, default=64)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    rng = random.Random(3)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for name in names:
        with open(os.path.join(args.dir, name), "wb") as f:
            for i in range(args.per_file):
                f.write(record(rng.randrange(10), rng))


if __name__ == "__main__":
    main()
