#!/usr/bin/env bash
# The emulated nodes (scripts/cluster.sh) run an MPI job across them: one rank per node, each on
# its own hostname, a 4 MiB allreduce over TCP that the nodes' links carried (byte counters);
# each node's processes on CPUs of their own.
#
#   cluster-hello.sh HELLO CLUSTER_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 HELLO CLUSTER_DIR" >&2; exit 2; }
hello=$1
export DP_CLUSTER_DIR=$2
cluster="$(cd "$(dirname "$0")" && pwd)/../../scripts/cluster.sh"
[ -s "$DP_CLUSTER_DIR/nodes" ] || { echo "SKIPPED: no emulated nodes in $DP_CLUSTER_DIR" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
"$cluster" status "$DP_CLUSTER_DIR"
rx() { "$cluster" bytes "$1" | awk '{print $2}'; }
before=$(rx dpnode1)
out=$(timeout 60 "$cluster" mpirun -n 2 --map-by node "$hello" 2>&1) || fail "mpirun failed: $out"
echo "$out"
grep -q "^rank 0 of 2 on dpnode0: allreduce ok" <<<"$out" || fail "rank 0 did not run on dpnode0"
grep -q "^rank 1 of 2 on dpnode1: allreduce ok" <<<"$out" || fail "rank 1 did not run on dpnode1"
got=$(( $(rx dpnode1) - before ))
echo "dpnode1 received $got bytes"
[ "$got" -gt 4000000 ] || fail "the allreduce did not cross dpnode1's link"
# Each node computes on CPUs of its own (as separate machines would), not all on the first.
affinity=$(timeout 60 "$cluster" mpirun -n 2 --map-by node sh -c 'echo "$(hostname) $(taskset -pc $$ | sed "s/.*: //")"' 2>&1) ||
  fail "mpirun of taskset failed: $affinity"
echo "$affinity"
# Only the ranks' lines: mpirun may print warnings of its own in between (such as "setpgid ...
# failed" when a rank exits before mpirun has put it in its process group).
lists=$(grep -E '^dpnode[0-9]+ [0-9,-]+$' <<<"$affinity" || true)
[ "$(wc -l <<<"$lists")" -eq 2 ] || fail "expected one CPU list per node: $affinity"
if [ "$(cat "$DP_CLUSTER_DIR/cpus" | tr ',' '\n' | wc -l)" -ge 2 ] || grep -q -- - "$DP_CLUSTER_DIR/cpus"; then
  [ "$(awk '{print $2}' <<<"$lists" | sort -u | wc -l)" -eq 2 ] ||
    fail "the nodes' processes share CPUs: $lists"
fi
# No client may reach the subnet from the host namespace.
ip route show type unreachable | grep -q "^unreachable 10.213.47.0/24" ||
  fail "no unreachable route for the nodes' subnet in the host namespace"
! ip route get 10.213.47.11 >/dev/null 2>&1 || fail "the host namespace routes the nodes' subnet"
echo PASS
