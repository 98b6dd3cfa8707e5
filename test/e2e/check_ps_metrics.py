"""Checks the parameter-server figures of a dprun --metrics file (worker 0's).

Every epoch lists each server's updates, updates per second, the staleness histogram of the
gradients it applied in the epoch and the pulls the staleness bound held; the file lists the
workers the servers left out. Prints a summary line per check; exits 1 on the first failure.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("metrics")
parser.add_argument("--servers", type=int, required=True, help="server records per epoch")
parser.add_argument("--updates", type=int, help="updates summed over epochs and servers")
parser.add_argument("--max-staleness", type=int,
                    help="no gradient applied more than this many updates behind")
parser.add_argument("--held-seconds", type=float,
                    help="some epoch's pulls were held at least this long (the bound waited)")
parser.add_argument("--lost", default="", help="WORKER:RANK,... the servers left out")
parser.add_argument("--epoch-steps", type=int,
                    help="worker 0 trained at least this many steps in some epoch")
args = parser.parse_args()

with open(args.metrics) as f:
    m = json.load(f)


def fail(message):
    sys.exit(f"FAILED: {message}")


updates = 0
held = 0.0
for e in m["epochs"]:
    servers = e.get("servers", [])
    if len(servers) != args.servers:
        fail(f"epoch {e['epoch']} has {len(servers)} server records, expected {args.servers}")
    for s in servers:
        if s["updates"] < 0 or s["updates_per_sec"] < 0:
            fail(f"epoch {e['epoch']} server {s['server']}: negative figures {s}")
        if any(n < 0 for n in s["staleness"]):
            fail(f"epoch {e['epoch']} server {s['server']}: bad histogram {s['staleness']}")
        if args.max_staleness is not None and len(s["staleness"]) > args.max_staleness + 1:
            fail(f"epoch {e['epoch']} server {s['server']} applied a gradient "
                 f"{len(s['staleness']) - 1} updates behind (bound {args.max_staleness})")
        updates += s["updates"]
        held = max(held, s["held_seconds"])
print(f"updates: {updates}; longest held in an epoch: {held:.2f} s")
if args.updates is not None and updates != args.updates:
    fail(f"{updates} updates, expected {args.updates}")
if args.held_seconds is not None and held < args.held_seconds:
    fail(f"no epoch held pulls for {args.held_seconds} s (longest {held:.2f} s)")
steps = [len(e["step_losses"]) for e in m["epochs"]]
print(f"worker 0 trained {sum(steps)} steps, at most {max(steps, default=0)} in an epoch")
if args.epoch_steps is not None and max(steps, default=0) < args.epoch_steps:
    fail(f"worker 0 trained at most {max(steps, default=0)} steps in an epoch, expected "
         f"{args.epoch_steps} in some epoch")
lost = sorted(f"{w['worker']}:{w['rank']}" for w in m.get("lost_workers", []))
expected = sorted(x for x in args.lost.split(",") if x)
print("lost workers: " + (", ".join(lost) or "none"))
if lost != expected:
    fail(f"lost workers {lost}, expected {expected}")
