#!/usr/bin/env python3
"""Makes a data set of yes/no targets from an IDX classification data set (Fashion-MNIST):
each image gets two targets, 1.0 or 0.0: "is it footwear" (sandal, sneaker, ankle boot:
classes 5, 7, 9) and "is it worn on the upper body" (T-shirt, pullover, coat, shirt: classes
0, 2, 4, 6). A model with binary cross-entropy on two outputs learns both.

    binary_targets.py SRC DST

DST gets the images of SRC (linked) and train-targets-idx2-float and t10k-targets-idx2-float,
IDX arrays of big-endian floats [samples, 2] (magic 0x00000d02), as dp reads float targets.
"""
import gzip
import os
import struct
import sys

FOOTWEAR = {5, 7, 9}
UPPER_BODY = {0, 2, 4, 6}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    for split in ("train", "t10k"):
        images = next(n for n in (f"{split}-images-idx3-ubyte.gz", f"{split}-images-idx3-ubyte")
                      if os.path.exists(os.path.join(src, n)))
        link = os.path.join(dst, images)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(os.path.join(src, images)), link)
        labels_name = images.replace("images-idx3", "labels-idx1")
        raw = (gzip.open if labels_name.endswith(".gz") else open)(
            os.path.join(src, labels_name), "rb").read()
        labels = raw[8:]
        values = []
        for label in labels:
            values += [1.0 if label in FOOTWEAR else 0.0, 1.0 if label in UPPER_BODY else 0.0]
        with open(os.path.join(dst, f"{split}-targets-idx2-float"), "wb") as f:
            f.write(struct.pack(">III", 0x0D02, len(labels), 2))
            f.write(struct.pack(f">{len(values)}f", *values))
        print(f"binary_targets: {split}: {len(labels)} images, 2 yes/no targets each")


if __name__ == "__main__":
    main()
