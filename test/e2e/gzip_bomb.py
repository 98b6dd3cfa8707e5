#!/usr/bin/env python3
"""Writes a gzipped IDX labels file that declares DECLARED labels and holds HELD zero labels:
gzip_bomb.py OUT DECLARED HELD. A gzip file may be several members one after another (zlib
reads them as one stream), so one compressed member of 1 MiB of zeros (about 1 KiB) is written
as often as needed: 4e9 labels take 4 MB of file and no time to write, and 4 GB to inflate."""
import gzip
import struct
import sys

out, declared, held = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chunk = 1 << 20
member = gzip.compress(bytes(chunk), 9)
with open(out, "wb") as f:
    f.write(gzip.compress(struct.pack(">II", 0x801, declared)))
    whole, rest = divmod(held, chunk)
    for _ in range(whole):
        f.write(member)
    if rest:
        f.write(gzip.compress(bytes(rest), 9))
