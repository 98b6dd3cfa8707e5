#!/usr/bin/env python3
"""safetensors' own library against dprun's files.

Usage:
  safetensors_peer.py read FILE            prints each tensor's name, dtype and shape (sorted),
                                           read with safetensors.numpy.load_file
  safetensors_peer.py resave IN OUT        writes IN's tensors with the library (its own header
                                           order and padding), values unchanged
  safetensors_peer.py break IN OUT         writes IN's tensors with the first one's shape
                                           transposed, the second left out, an extra tensor, and
                                           the third in BF16-sized F16: four mismatches to name
"""
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

mode = sys.argv[1]
tensors = load_file(sys.argv[2])
if mode == "read":
    for name in sorted(tensors):
        t = tensors[name]
        print(f"{name} {t.dtype} {list(t.shape)}")
elif mode == "resave":
    save_file(tensors, sys.argv[3], metadata={"written_by": "safetensors"})
elif mode == "break":
    names = list(tensors)
    broken = dict(tensors)
    broken[names[0]] = np.ascontiguousarray(tensors[names[0]].T) if tensors[names[0]].ndim == 2 \
        else tensors[names[0]].reshape(1, -1)
    del broken[names[1]]
    broken["extra.weight"] = np.zeros((2, 2), np.float32)
    save_file(broken, sys.argv[3])
else:
    sys.exit(__doc__)
