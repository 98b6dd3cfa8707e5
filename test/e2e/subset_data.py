#!/usr/bin/env python3
"""Writes a copy of an IDX data set with fewer training samples: subset_data.py SRC DST DROP.
The training images and labels lose their last DROP samples (headers corrected); the test
files are copied as they are. Gzipped files stay gzipped."""
import gzip
import os
import struct
import sys

src, dst, drop = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src)):
    if not name.startswith(("train-", "t10k-")):
        continue
    opener = gzip.open if name.endswith(".gz") else open
    with opener(os.path.join(src, name), "rb") as f:
        data = f.read()
    if name.startswith("train-"):
        dims = struct.unpack(">I", data[:4])[0] & 0xff
        shape = list(struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims]))
        per = 1
        for d in shape[1:]:
            per *= d
        shape[0] -= drop
        start = 4 + 4 * dims
        data = data[:4] + struct.pack(">" + "I" * dims, *shape) + data[start:start + shape[0] * per]
    with opener(os.path.join(dst, name), "wb") as f:
        f.write(data)
