#!/usr/bin/env python3
"""Makes a regression data set from an IDX image data set (Fashion-MNIST): each image's target
is its thumbnail, the mean of each BLOCK x BLOCK block of its pixels scaled to [0, 1] (7 x 7 =
49 targets for 28 x 28 images and blocks of 4), a row of 32-bit floats.

    regression_data.py SRC DST [--block 4]

DST gets the images of SRC (linked, not copied) and the targets as dp reads a regression's:
train-targets-idx2-float and t10k-targets-idx2-float, IDX arrays of big-endian floats
[samples, targets] (magic 0x00000d02). Needs numpy.
"""
import argparse
import gzip
import os
import struct

import numpy as np


def read_images(path):
    raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def thumbnails(images, block):
    n, h, w = images.shape
    scaled = images.astype(np.float32) / np.float32(255)
    blocks = scaled.reshape(n, h // block, block, w // block, block)
    return blocks.mean(axis=(2, 4), dtype=np.float32).reshape(n, -1)


def write_floats(path, values):
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x0D02) + struct.pack(">II", *values.shape))
        f.write(values.astype(">f4").tobytes())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--block", type=int, default=4)
    a = p.parse_args()
    os.makedirs(a.dst, exist_ok=True)
    for split in ("train", "t10k"):
        name = next(n for n in (f"{split}-images-idx3-ubyte.gz", f"{split}-images-idx3-ubyte")
                    if os.path.exists(os.path.join(a.src, n)))
        link = os.path.join(a.dst, name)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(os.path.join(a.src, name)), link)
        targets = thumbnails(read_images(os.path.join(a.src, name)), a.block)
        write_floats(os.path.join(a.dst, f"{split}-targets-idx2-float"), targets)
        print(f"regression_data: {split}: {targets.shape[0]} images, {targets.shape[1]} targets each")


if __name__ == "__main__":
    main()
