#!/usr/bin/env python3
"""Writes broken variants of a profile and a topology for dpc-simulate-errors.test:
variants.py PROFILE TOPOLOGY OUTDIR."""
import copy
import json
import os
import sys

profile, topology, out = sys.argv[1:4]
p = json.load(open(profile))
t = json.load(open(topology))

def write(name, value):
    with open(os.path.join(out, name), "w") as f:
        f.write(value if isinstance(value, str) else json.dumps(value))

def edit(base, change):
    v = copy.deepcopy(base)
    change(v)
    return v

write("other-model.json", edit(p, lambda v: v.update(model="mnist_cnn")))
write("other-rows.json", edit(p, lambda v: v.update(global_batch=200)))
write("other-kind.json", edit(p, lambda v: v["kernels"][3].update(kind="conv2d")))
write("fewer-kernels.json", edit(p, lambda v: v["kernels"].pop()))
write("no-steps.json", edit(p, lambda v: v.update(steps_measured=0)))
write("negative-time.json", edit(p, lambda v: v["kernels"][0].update(mean_us=-1)))
write("unsorted.json", edit(p, lambda v: v["kernels"][1].update(index=0)))
write("truncated.json", json.dumps(p)[:200])
write("array.json", "[1, 2]")
write("no-levels.json", edit(t, lambda v: v.pop("levels")))
write("no-network.json", edit(t, lambda v: v["levels"].pop("network")))
write("zero-bandwidth.json", edit(t, lambda v: v["levels"]["host"].update(bandwidth_GBps=0)))
write("bad-nodes.json", edit(t, lambda v: v.update(nodes=0)))
# Nested 100,000 deep: LLVM's JSON parser would recurse until the stack overflows.
write("deep-profile.json", '{"kernels": ' + "[" * 100000)
write("deep-topology.json", '{\n "levels": ' + '{"a": ' * 100000)
# Numbers past the bounds: each would print inf, nan or a negative global batch.
write("huge-latency.json", edit(t, lambda v: v["levels"]["network"].update(latency_us=1e308)))
write("huge-bandwidth.json", edit(t, lambda v: v["levels"]["device"].update(bandwidth_GBps=1e300)))
write("huge-counts.json", edit(t, lambda v: v.update(nodes=1 << 20, ranks_per_node=1 << 20,
                                                     devices_per_rank=1 << 20)))
write("big-nodes.json", edit(t, lambda v: v.update(nodes=1 << 20)))
write("huge-time.json", edit(p, lambda v: v["step_us"].update(mean=1e300)))
write("huge-rows.json", edit(p, lambda v: v.update(global_batch=1 << 40)))
