"""Reads a dprun parameters file: safetensors (what --save-params writes) or dp's older raw
format (per parameter: name, NUL, u64 count, f32 values). Pure Python: the format's spec, not
its library (the tests that check the library reads dp's files use it on their own).

load(path) -> [(name, array('f'))], in file order (safetensors: by data offset)
"""
import array
import json
import struct
import sys


def is_safetensors(data):
    if len(data) < 10:
        return False
    (n,) = struct.unpack_from("<Q", data, 0)
    return 2 <= n <= len(data) - 8 and data[8:9] == b"{"


def load(path):
    data = open(path, "rb").read()
    params = []
    if is_safetensors(data):
        (n,) = struct.unpack_from("<Q", data, 0)
        header = json.loads(data[8:8 + n])
        header.pop("__metadata__", None)
        base = 8 + n
        for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            if t["dtype"] != "F32":
                sys.exit(f"{path}: {name} is {t['dtype']}, not F32")
            begin, end = t["data_offsets"]
            values = array.array("f")
            values.frombytes(data[base + begin:base + end])
            params.append((name, values))
        return params
    i = 0
    while i < len(data):
        end = data.index(b"\0", i)
        name = data[i:end].decode()
        (count,) = struct.unpack_from("<Q", data, end + 1)
        start = end + 9
        values = array.array("f")
        values.frombytes(data[start:start + 4 * count])
        if len(values) != count:
            sys.exit(f"{path}: parameter {name} is truncated")
        params.append((name, values))
        i = start + 4 * count
    return params
