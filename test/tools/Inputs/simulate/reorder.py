#!/usr/bin/env python3
"""Edits a plan dump by hand, as a test of `dpc simulate` needs: reorder.py IN OUT MODE.

MODE swap: the start of bucket 0 moves after the start of bucket 1 (so this rank posts bucket 1
first). MODE wait-first: the wait of bucket 1 moves before the first start of the step.
"""
import re
import sys

src, dst, mode = sys.argv[1:4]
lines = open(src).read().split("\n")
def find(kind, bucket):
    pattern = re.compile(r'plan\.kernel "%s" .*\{bucket = %d : i64\}' % (kind, bucket))
    hits = [i for i, line in enumerate(lines) if pattern.search(line)]
    if len(hits) != 1:
        sys.exit("reorder.py: expected one %s of bucket %d in %s, found %d" % (kind, bucket, src, len(hits)))
    return hits[0]
if mode == "swap":
    line = lines.pop(find("allreduce_start", 0))
    lines.insert(find("allreduce_start", 1) + 1, line)
elif mode == "wait-first":
    line = lines.pop(find("allreduce_wait", 1))
    lines.insert(find("allreduce_start", 0), line)
else:
    sys.exit("reorder.py: unknown mode " + mode)
open(dst, "w").write("\n".join(lines))
