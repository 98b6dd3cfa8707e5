#!/usr/bin/env python3
"""Checks a dprun --trace file: valid Chrome trace-event JSON whose spans nest.

Usage: check_trace.py TRACE.json --ranks N [--replicas R] [--steps S] [--collectives]
                      [--prefetch] [--checkpoint]

Checks, and exits 1 on the first failure:
- the file parses as JSON with "traceEvents" and "otherData" (ranks, no dropped spans);
- every event has the fields its phase needs: X spans a name, cat, pid, tid, ts >= 0 and
  dur >= 0; b/e pairs the same id; M metadata names every process and thread that has spans;
- the pids are the ranks 0..N-1, each with a "main" thread and one "device D compute" thread
  per replica;
- on every thread the X spans nest: two spans are either disjoint or one holds the other;
- every kernel span lies inside a train or eval step span of its thread, every step inside
  its rank's epoch or evaluate span in time; allreduce start/wait spans inside train steps;
- each rank's compute threads ran S train steps each (with --steps), kernels of both steps,
  and (with --collectives) allreduce start/wait and bucket averaging; (with --prefetch) the
  input loader thread gathered batches; (with --checkpoint) a checkpoint write span.
Prints a one-line summary.
"""
import argparse
import collections
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--ranks", type=int, required=True)
parser.add_argument("--replicas", type=int, default=1)
parser.add_argument("--steps", type=int)
parser.add_argument("--collectives", action="store_true")
parser.add_argument("--prefetch", action="store_true")
parser.add_argument("--checkpoint", action="store_true")
args = parser.parse_args()


def fail(message):
    print("check_trace: " + message)
    sys.exit(1)


try:
    trace = json.load(open(args.trace))
except ValueError as e:
    fail("%s is not JSON: %s" % (args.trace, e))
events = trace.get("traceEvents")
other = trace.get("otherData")
if not isinstance(events, list) or not isinstance(other, dict):
    fail("no traceEvents list or otherData object")
if other.get("ranks") != args.ranks or other.get("replicas_per_process") != args.replicas:
    fail("otherData says %r" % other)
if other.get("dropped_spans") != 0:
    fail("spans were dropped: %r" % other)

process_names, thread_names = {}, {}
spans = collections.defaultdict(list)  # (pid, tid) -> [(ts, end, name, cat)]
async_open = {}
async_pairs = collections.Counter()
for e in events:
    ph = e.get("ph")
    if ph == "M":
        if e["name"] == "process_name":
            process_names[e["pid"]] = e["args"]["name"]
        elif e["name"] == "thread_name":
            thread_names[(e["pid"], e["tid"])] = e["args"]["name"]
        continue
    for field in ("name", "cat", "pid", "tid", "ts"):
        if field not in e:
            fail("event without %s: %r" % (field, e))
    if e["ts"] < 0:
        fail("event before the trace's start: %r" % e)
    if ph == "X":
        if e.get("dur", -1) < 0:
            fail("X event without a duration: %r" % e)
        spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"], e["cat"]))
    elif ph == "b":
        if e["id"] in async_open:
            fail("async id %s begins twice" % e["id"])
        async_open[e["id"]] = e
    elif ph == "e":
        begin = async_open.pop(e["id"], None)
        if begin is None or begin["name"] != e["name"] or e["ts"] < begin["ts"]:
            fail("async end without its begin: %r" % e)
        async_pairs[(e["pid"], e["name"])] += 1
    else:
        fail("unexpected phase %r" % ph)
if async_open:
    fail("async spans never ended: %r" % list(async_open)[:3])

pids = sorted({pid for pid, _ in spans})
if pids != list(range(args.ranks)):
    fail("spans of pids %r, expected ranks 0..%d" % (pids, args.ranks - 1))
for key in spans:
    if key not in thread_names or key[0] not in process_names:
        fail("thread %r has spans but no name" % (key,))

EPS = 0.002  # microseconds: timestamps are printed to the nanosecond


def inside(inner, outer):
    return outer[0] - EPS <= inner[0] and inner[1] <= outer[1] + EPS


for key, row in spans.items():
    row.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for span in row:
        while stack and span[0] >= stack[-1][1] - EPS:
            stack.pop()
        if stack and not inside(span, stack[-1]):
            fail("%s: %r overlaps %r without nesting" % (thread_names[key], span, stack[-1]))
        if span[3] == "kernel" and not any(s[2] in ("train step", "eval step") for s in stack):
            fail("%s: kernel %r outside a step" % (thread_names[key], span))
        if span[2].startswith("allreduce") and not any(s[2] == "train step" for s in stack):
            fail("%s: %r outside a train step" % (thread_names[key], span))
        stack.append(span)

for rank in range(args.ranks):
    names = {thread_names[k]: k for k in spans if k[0] == rank}
    if "main" not in names:
        fail("rank %d has no main thread spans" % rank)
    host = spans[names["main"]]
    phases = [s for s in host if s[2] in ("epoch", "evaluate")]
    if not any(s[2] == "epoch" for s in phases) or not any(s[2] == "evaluate" for s in phases):
        fail("rank %d: no epoch or evaluate span" % rank)
    for d in range(args.replicas):
        name = "device %d compute" % d
        if name not in names:
            fail("rank %d has no %r thread (threads: %s)" % (rank, name, sorted(names)))
        row = spans[names[name]]
        counts = collections.Counter(s[2] for s in row)
        if args.steps is not None and counts["train step"] != args.steps:
            fail("rank %d %s: %d train steps, expected %d" % (rank, name, counts["train step"], args.steps))
        if counts["eval step"] == 0 or not any(s[3] == "kernel" for s in row):
            fail("rank %d %s: no eval steps or kernels" % (rank, name))
        for step in (s for s in row if s[2] in ("train step", "eval step")):
            if not any(inside(step, p) for p in phases):
                fail("rank %d %s: %r outside every epoch and evaluation" % (rank, name, step))
        if args.collectives and not (counts["allreduce start"] and counts["allreduce wait"]):
            fail("rank %d %s: no allreduce spans" % (rank, name))
    if args.collectives and async_pairs[(rank, "average bucket")] == 0:
        fail("rank %d: no bucket averaging spans" % rank)
    if args.prefetch:
        loader = names.get("input loader")
        if loader is None or not any(s[2] == "gather batch" for s in spans[loader]):
            fail("rank %d: no input loader gathering batches" % rank)
    if args.checkpoint and not any(s[2] == "checkpoint write" for s in host):
        fail("rank %d: no checkpoint write span" % rank)

total = sum(len(r) for r in spans.values())
print("trace ok: %d rank(s), %d threads, %d spans, %d async spans" %
      (args.ranks, len(spans), total, sum(async_pairs.values())))
