#!/usr/bin/env python3
"""Writes a small safetensors file (what dprun --save-params writes) as a fuzz_checkpoint seed,
behind the target's mode byte: two F32 tensors and metadata, by the format's spec.

Usage: safetensors_seed.py DIR
"""
import json
import os
import struct
import sys

out = sys.argv[1]
tensors = {"dense.kernel": ([2, 3], [0.5] * 6), "dense.bias": ([3], [0.25, -1.0, 2.0])}
header, data = {"__metadata__": {"producer": "dp"}}, b""
for name, (shape, values) in tensors.items():
    raw = struct.pack(f"<{len(values)}f", *values)
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(out, "params.safetensors"), "wb") as f:
    f.write(b"\x00" + struct.pack("<Q", len(text)) + text + data)
