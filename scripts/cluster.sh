#!/usr/bin/env bash
# Emulated nodes on one machine: N hosts, each with its own network namespace, hostname (a UTS
# namespace) and /etc/hosts, joined by a bridge, so that MPI jobs run across "nodes" over real
# TCP. Needs root, iproute2 and util-linux (nsenter, unshare).
#
#   scripts/cluster.sh up     [--nodes N] [--rate R] [--slurm] [DIR]  make the nodes (default 2)
#   scripts/cluster.sh down   [DIR]                             remove everything `up` made
#   scripts/cluster.sh status [DIR]                             the nodes, their addresses, traffic
#   scripts/cluster.sh exec   NODE CMD [ARGS...]                run CMD on NODE, as NODE
#   scripts/cluster.sh mpirun [MPIRUN ARGS...]                  mpirun from node 0 across the nodes
#   scripts/cluster.sh shape  RATE|none [DIR]                   reshape every node's link (tc tbf)
#   scripts/cluster.sh bytes  NODE                              bytes received and sent on NODE's link
#   scripts/cluster.sh slurm  CMD [ARGS...]                     a SLURM client (srun, sbatch, sinfo,
#                                                               squeue, scancel, scontrol) on node 0
#   scripts/cluster.sh fail   NODE [DIR]                        the node fails: every process on it
#                                                               (its slurmd, a job's ranks) killed
#   scripts/cluster.sh revive NODE [DIR]                        its slurmd again, until it is idle
#
# `up --slurm` also starts SLURM on the nodes: slurmctld on dpnode0, one slurmd per node (its own
# spool, pid, log and job-private tmp folder: PMIx needs them apart), munged shared by all; `slurm`
# runs clients against it with the MPI environment for the nodes (TCP on eth0). `down` stops it.
# DIR (default build/cluster; env DP_CLUSTER_DIR for exec, mpirun and bytes) holds the state:
# the node list, the pids of the processes holding each node's hostname, the hostfile and the
# rsh agent Open MPI starts its daemons with. Nodes are named dpnode0..dpnode{N-1}, at
# 10.213.47.10+i/24 on eth0; the bridge lives in a namespace of its own (dpbridge).
#
# Safety: the subnet exists only inside the namespaces. Before anything else `up` adds an
# `unreachable` route for it in the host namespace, so a client started here by mistake fails
# at once instead of following the default route out of the machine; the namespaces have no
# default route. Every client (mpirun, srun, ...) must run inside a node: `exec` and `mpirun`
# do that. `down` kills what runs in the nodes (by pid, from `ip netns pids`), removes the
# namespaces, the bridge and the hosts files, and keeps the unreachable route (harmless).
#
# `--rate RATE` shapes every node's link with a token bucket (tc tbf), e.g. 1gbit or 100mbit.
# `mpirun` passes Open MPI what it needs here: the hostfile, the rsh agent, TCP only on eth0
# (`btl tcp,self`; DP_CLUSTER_BTL=self,vader,tcp lets the ranks of one node use shared memory), no tree spawn, passive waiting (`mpi_yield_when_idle`), a session folder in
# DIR. Exit status 77: cannot run here (not root, or a tool is missing): test drivers skip.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/cluster.sh"
subnet=10.213.47.0/24
prefix=10.213.47
bridge_ns=dpbridge
export PATH=$PATH:/usr/sbin:/sbin

usage() {
  sed -n '6,18p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
skip() { echo "SKIPPED: $*" >&2; exit 77; }
die() { echo "cluster: error: $*" >&2; exit 1; }
log() { echo "cluster: $*"; }
# shellcheck source=slurm-lib.sh
. "$root/scripts/slurm-lib.sh"

node_name() { echo "dpnode$1"; }
node_addr() { echo "$prefix.$((10 + $1))"; }

need_tools() {
  [ "$(id -u)" -eq 0 ] || skip "emulated nodes need root (network namespaces)"
  local t
  for t in ip nsenter unshare; do
    command -v "$t" >/dev/null || skip "'$t' is missing"
  done
}

# The nodes of the cluster in DIR, one name per line.
nodes_of() { [ -r "$1/nodes" ] && cat "$1/nodes"; }

# The pid holding NODE's hostname, if it is alive.
holder_of() { # DIR NODE
  local pid
  [ -r "$1/$2.pid" ] || return 1
  pid=$(tr -dc '0-9' <"$1/$2.pid")
  [ -n "$pid" ] && alive "$pid" && echo "$pid"
}

# The CPUs NODE's processes run on, as on a machine of its own: its share of the C CPUs `up` was
# given (DIR/cpus; node i of N gets CPUs i*C/N .. (i+1)*C/N - 1), or CPU i mod C when the nodes
# outnumber the CPUs.
node_cpus() { # DIR NODE
  local dir=$1 node=$2 i n c per part lo hi cpus=() list
  i=${node#dpnode}
  n=$(nodes_of "$dir" | wc -l)
  list=$(cat "$dir/cpus" 2>/dev/null) || list=$(taskset -pc $$ | sed 's/.*: //')
  IFS=, read -ra parts <<<"$list"
  for part in "${parts[@]}"; do
    lo=${part%-*} hi=${part#*-}
    for ((c = lo; c <= hi; c++)); do cpus+=("$c"); done
  done
  c=${#cpus[@]}
  if [ "$n" -le 0 ] || [ "$c" -eq 0 ]; then echo "$list"; return; fi
  if [ "$c" -ge "$n" ]; then
    per=$((c / n))
    local mine=("${cpus[@]:$((i * per)):$per}")
    (IFS=,; echo "${mine[*]}")
  else
    echo "${cpus[$((i % c))]}"
  fi
}

cmd_exec() { # NODE CMD...
  local dir=${DP_CLUSTER_DIR:-$root/build/cluster} node=$1 pid
  shift
  [ $# -ge 1 ] || die "exec: give a command to run on $node"
  pid=$(holder_of "$dir" "$node") || die "node $node is not up (no live holder in $dir)"
  # The node's hostname (the holder's UTS namespace), then its network and its /etc/hosts
  # (ip netns exec bind-mounts /etc/netns/NODE/hosts over /etc/hosts in a mount namespace),
  # on the node's own CPUs.
  exec nsenter --target "$pid" --uts -- ip netns exec "$node" \
    taskset -c "$(node_cpus "$dir" "$node")" "$@"
}

slurm_conf() { # DIR NODES...
  local dir=$1 i=0 node list=""
  shift
  cat <<EOF
# SLURM on the emulated nodes of $dir, written by scripts/cluster.sh up --slurm.
ClusterName=dpnodes
SlurmctldHost=$1($(node_addr 0))
SlurmctldPort=16817
SlurmdPort=16818
$(slurm_common_conf)
StateSaveLocation=$dir/slurm/state
SlurmdSpoolDir=$dir/slurm/spool/%n
# The same path on every node, bind-mounted over a folder of the node's own by its slurmd.
TmpFS=$dir/slurm/tmp
SlurmctldPidFile=$dir/slurm/slurmctld.pid
SlurmdPidFile=$dir/slurm/slurmd.%n.pid
SlurmctldLogFile=$dir/slurm/slurmctld.log
SlurmdLogFile=$dir/slurm/slurmd.%n.log
EOF
  for node in "$@"; do
    echo "NodeName=$node NodeAddr=$(node_addr "$i") CPUs=8 State=UNKNOWN"
    list+="${list:+,}$node"
    i=$((i + 1))
  done
  echo "PartitionName=nodes Nodes=$list Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP"
}

# The environment of SLURM clients and the MPI ranks they start on the nodes.
slurm_env() { # DIR
  cat <<EOF
export SLURM_CONF=$1/slurm/slurm.conf
export DP_CLUSTER_DIR=$1
export OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_tcp_if_include=eth0
export OMPI_MCA_oob_tcp_if_include=eth0
export OMPI_MCA_mpi_yield_when_idle=1
export PMIX_MCA_gds=hash
export PMIX_MCA_psec=native
EOF
}

start_slurmd() { # DIR NODE
  local dir=$1 node=$2 conf=$1/slurm/slurm.conf
  mkdir -p "$dir/slurm/spool/$node" "$dir/slurm/tmp-$node"
  # slurmd cannot run under `ip netns exec` (it remounts /sys, hiding the cgroup mounts): its
  # own mount namespace gets the node's hosts file and tmp folder by hand. Its jobs inherit
  # the node's network, hostname and mounts.
  nsenter --net="/run/netns/$node" -- unshare --uts --mount --propagation private -- sh -c "
    hostname $node &&
    mount --bind /etc/netns/$node/hosts /etc/hosts &&
    mount --bind '$dir/slurm/tmp-$node' '$dir/slurm/tmp' &&
    exec slurmd -f '$conf' -N $node" ||
    die "slurmd failed to start on $node: $(tail -n 20 "$dir/slurm/slurmd.$node.log" 2>/dev/null)"
}

# A node failure: SIGKILL to every process in NODE's network namespace (its slurmd, the ranks
# and daemons of jobs on it) but the one holding its hostname. slurmctld sees the node stop
# answering and marks it down after SlurmdTimeout.
cmd_fail() { # DIR NODE
  local dir=$1 node=$2 holder pids p i
  holder=$(holder_of "$dir" "$node") || die "node $node is not up"
  for i in 1 2 3 4 5; do
    pids=""
    for p in $(ip netns pids "$node" 2>/dev/null); do
      [ "$p" = "$holder" ] || pids+="$p "
    done
    [ -n "$pids" ] || break
    kill -9 $pids 2>/dev/null || true
    sleep 0.2
  done
  rm -f "$dir/slurm/slurmd.$node.pid"
  log "fail: every process on $node killed"
}

# Starts NODE's slurmd again after `fail` and waits (up to 60 s) until SLURM has it idle
# (ReturnToService=2: a down node returns when it registers).
cmd_revive() { # DIR NODE
  local dir=$1 node=$2 state="" i
  start_slurmd "$dir" "$node"
  for ((i = 0; i < 300; i++)); do
    state=$(slurm_client "$dir" sinfo -h -n "$node" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  [ "$state" = idle ] || die "$node is '${state:-unreachable}' after 60 s, not idle"
  log "revive: $node idle"
}

slurm_start() { # DIR
  local dir=$1 conf node nodes state i b
  for b in slurmctld slurmd munged sinfo srun scontrol munge unmunge runuser; do
    command -v "$b" >/dev/null || skip "$b is missing (install slurm-wlm and munge: scripts/setup.sh)"
  done
  mapfile -t nodes < <(nodes_of "$dir")
  conf=$dir/slurm/slurm.conf
  mkdir -p "$dir/slurm/state" "$dir/slurm/tmp"
  slurm_conf "$dir" "${nodes[@]}" >"$conf"
  slurm_env "$dir" >"$dir/slurm/slurm.env.new"
  start_munge "$dir"
  log "starting slurmctld on ${nodes[0]}"
  DP_CLUSTER_DIR=$dir "$self" exec "${nodes[0]}" slurmctld -c -f "$conf" ||
    die "slurmctld failed to start: $(tail -n 20 "$dir/slurm/slurmctld.log" 2>/dev/null)"
  for node in "${nodes[@]}"; do
    start_slurmd "$dir" "$node"
  done
  mv "$dir/slurm/slurm.env.new" "$dir/slurm/slurm.env"
  for ((i = 0; i < 150; i++)); do
    state=$(slurm_client "$dir" sinfo -h -o %T 2>/dev/null | sort -u | tr '\n' ' ' || true)
    [ "$state" = "idle " ] && break
    sleep 0.2
  done
  [ "$state" = "idle " ] || {
    slurm_client "$dir" sinfo -N -l >&2 || true
    tail -n 15 "$dir/slurm/slurmctld.log" >&2 || true
    die "the nodes are '${state:-unreachable}' after 30 s, not idle"
  }
  log "SLURM up on ${nodes[*]}: run clients with '$self slurm CMD ...'"
}

# Runs a SLURM client on node 0 with the cluster's SLURM and MPI environment.
slurm_client() { # DIR CMD...
  local dir=$1 first
  shift
  [ -r "$dir/slurm/slurm.env" ] || die "SLURM is not up on the nodes of $dir (cluster.sh up --slurm)"
  first=$(nodes_of "$dir" | head -n 1)
  DP_CLUSTER_DIR=$dir "$self" exec "$first" sh -c ". '$dir/slurm/slurm.env' && exec \"\$@\"" sh "$@"
}

slurm_stop() { # DIR
  local dir=$1 node
  [ -r "$dir/slurm/slurm.conf" ] || return 0
  if [ -r "$dir/slurm/slurm.env" ] && live_pid "$dir/slurm/slurmctld.pid" slurmctld >/dev/null; then
    slurm_client "$dir" timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
  fi
  for node in $(nodes_of "$dir"); do
    stop_pid "$dir/slurm/slurmd.$node.pid" slurmd
  done
  stop_pid "$dir/slurm/slurmctld.pid" slurmctld
  stop_munge_if_unused
  rm -f "$dir/slurm/slurm.env"
}

cmd_down() { # DIR
  local dir=$1 node pid pids i
  slurm_stop "$dir"
  for node in $(nodes_of "$dir") $(ip netns list 2>/dev/null | awk '/^dpnode[0-9]+/ {print $1}'); do
    # Everything still running in the node (ranks of a job that was cut off included).
    for i in 1 2 3 4 5; do
      pids=$(ip netns pids "$node" 2>/dev/null || true)
      [ -n "$pids" ] || break
      kill -9 $pids 2>/dev/null || true
      sleep 0.2
    done
    if pid=$(holder_of "$dir" "$node"); then kill -9 "$pid" 2>/dev/null || true; fi
    rm -f "$dir/$node.pid"
    ip netns del "$node" 2>/dev/null || true
    rm -rf "/etc/netns/$node"
  done
  ip netns del "$bridge_ns" 2>/dev/null || true
  rm -f "$dir/nodes" "$dir/hostfile" "$dir/rsh-agent" "$dir/cpus"
  rm -rf "$dir/mpi-sessions"
  log "down"
}

cmd_up() { # DIR NODES RATE SLURM
  local dir=$1 n=$2 rate=$3 slurm=$4 i node pid tries hosts
  need_tools
  [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "--nodes must be 1 to 64"
  if [ -s "$dir/nodes" ] || ip netns list 2>/dev/null | grep -q '^dpnode'; then
    log "removing the nodes of an earlier run first"
    cmd_down "$dir" >/dev/null
  fi
  mkdir -p "$dir"
  taskset -pc $$ | sed 's/.*: //' >"$dir/cpus"
  # First of all: nothing for the subnet may leave this machine from the host namespace.
  ip route replace unreachable "$subnet"

  ip netns add "$bridge_ns"
  ip -n "$bridge_ns" link set lo up
  ip -n "$bridge_ns" link add br0 type bridge
  ip -n "$bridge_ns" link set br0 up
  hosts="127.0.0.1 localhost"
  for ((i = 0; i < n; i++)); do
    hosts+=$'\n'"$(node_addr "$i") $(node_name "$i")"
  done
  : >"$dir/nodes"
  : >"$dir/hostfile"
  for ((i = 0; i < n; i++)); do
    node=$(node_name "$i")
    ip netns add "$node"
    mkdir -p "/etc/netns/$node"
    printf '%s\n' "$hosts" >"/etc/netns/$node/hosts"
    ip link add "dpv$i" netns "$bridge_ns" type veth peer name eth0 netns "$node"
    ip -n "$bridge_ns" link set "dpv$i" master br0 up
    ip -n "$node" link set lo up
    ip -n "$node" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$node" link set eth0 up
    if [ -n "$rate" ]; then
      tc -n "$node" qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 100ms ||
        die "cannot shape $node's link to $rate (tc tbf)"
    fi
    # A process in the node's network namespace holds a UTS namespace whose hostname is the
    # node's: `exec` enters both. setsid: it outlives this script and its terminal.
    setsid nsenter --net="/run/netns/$node" -- unshare --uts -- \
      sh -c "hostname $node && exec sleep infinity" </dev/null >/dev/null 2>&1 &
    pid=$!
    echo "$pid" >"$dir/$node.pid"
    echo "$node" >>"$dir/nodes"
    echo "$node slots=64" >>"$dir/hostfile"
    tries=0
    until [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ]; do
      tries=$((tries + 1))
      [ $tries -le 100 ] || die "the hostname holder of $node did not start"
      alive "$pid" || die "the hostname holder of $node died"
      sleep 0.05
    done
  done
  # Open MPI starts its daemon on a node as `AGENT NODE COMMAND...`, like ssh: run the command
  # line in the node.
  cat >"$dir/rsh-agent" <<EOF
#!/bin/sh
# Open MPI's rsh agent for the emulated nodes of $dir (written by scripts/cluster.sh up).
node=\$1
shift
DP_CLUSTER_DIR='$dir' exec '$self' exec "\$node" sh -c "\$*"
EOF
  chmod +x "$dir/rsh-agent"
  # Every node's link is up, and no node has a route out of the subnet.
  for ((i = 0; i < n; i++)); do
    node=$(node_name "$i")
    ip -n "$node" link show eth0 | grep -q 'state UP\|state UNKNOWN' ||
      [ "$(ip -n "$node" -o link show eth0 | grep -c LOWER_UP)" -eq 1 ] ||
      die "$node's link did not come up"
    [ -z "$(ip -n "$node" route show default)" ] || die "$node has a default route"
  done
  log "up: $n node(s) $(tr '\n' ' ' <"$dir/nodes")on $subnet${rate:+, links shaped to $rate} (state in $dir)"
  [ -z "$slurm" ] || slurm_start "$dir"
}

cmd_status() { # DIR
  local dir=$1 node pid up=0
  for node in $(nodes_of "$dir"); do
    if pid=$(holder_of "$dir" "$node") && ip netns list | grep -q "^$node\b"; then
      echo "$node up: $(ip -n "$node" -4 -o addr show dev eth0 | awk '{print $4}'), $(cmd_bytes "$node")"
      up=$((up + 1))
    else
      echo "$node down"
    fi
  done
  [ $up -gt 0 ] || { echo "no nodes up in $dir"; exit 3; }
}

cmd_shape() { # DIR RATE|none: replaces every node's token bucket (or removes it)
  local dir=$1 rate=$2 node
  [ -s "$dir/nodes" ] || die "no cluster in $dir: run '$self up' first"
  while read -r node; do
    if [ "$rate" = none ]; then
      tc -n "$node" qdisc del dev eth0 root 2>/dev/null || true
    else
      tc -n "$node" qdisc replace dev eth0 root tbf rate "$rate" burst 256kb latency 100ms ||
        die "cannot shape $node's link to $rate (tc tbf)"
    fi
  done <"$dir/nodes"
  log "shape: every node's link ${rate/none/unshaped}"
}

cmd_bytes() { # NODE
  local rx tx
  rx=$(ip netns exec "$1" cat /sys/class/net/eth0/statistics/rx_bytes)
  tx=$(ip netns exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes)
  echo "rx_bytes $rx tx_bytes $tx"
}

cmd_mpirun() { # MPIRUN ARGS...
  local dir=${DP_CLUSTER_DIR:-$root/build/cluster} first
  first=$(nodes_of "$dir" | head -n 1) || true
  [ -n "$first" ] || die "no cluster in $dir: run '$self up' first"
  mkdir -p "$dir/mpi-sessions"
  local asroot=()
  [ "$(id -u)" -ne 0 ] || asroot=(--allow-run-as-root)
  DP_CLUSTER_DIR=$dir exec "$self" exec "$first" mpirun "${asroot[@]}" \
    --hostfile "$dir/hostfile" \
    --mca plm_rsh_agent "$dir/rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl "${DP_CLUSTER_BTL:-tcp,self}" --mca btl_tcp_if_include eth0 \
    --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 --bind-to none \
    --mca orte_tmpdir_base "$dir/mpi-sessions" "$@"
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
  up)
    nodes=2 rate="" dir="" slurm=""
    while [ $# -gt 0 ]; do
      case $1 in
        --slurm) slurm=1; shift ;;
        --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
        --rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
        -*) usage ;;
        *) [ -z "$dir" ] || usage; dir=$1; shift ;;
      esac
    done
    [[ $nodes =~ ^[0-9]+$ ]] || die "--nodes expects a number"
    cmd_up "$(realpath -m "${dir:-$root/build/cluster}")" "$nodes" "$rate" "$slurm"
    ;;
  down)
    [ $# -le 1 ] || usage
    need_tools
    cmd_down "$(realpath -m "${1:-$root/build/cluster}")"
    ;;
  status)
    [ $# -le 1 ] || usage
    need_tools
    cmd_status "$(realpath -m "${1:-$root/build/cluster}")"
    ;;
  exec)
    [ $# -ge 2 ] || usage
    cmd_exec "$@"
    ;;
  shape)
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    need_tools
    cmd_shape "$(realpath -m "${2:-$root/build/cluster}")" "$1"
    ;;
  bytes)
    [ $# -eq 1 ] || usage
    cmd_bytes "$1"
    ;;
  mpirun)
    cmd_mpirun "$@"
    ;;
  slurm)
    [ $# -ge 1 ] || usage
    slurm_client "$(realpath -m "${DP_CLUSTER_DIR:-$root/build/cluster}")" "$@"
    ;;
  fail|revive)
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    need_tools
    "cmd_$cmd" "$(realpath -m "${2:-${DP_CLUSTER_DIR:-$root/build/cluster}}")" "$1"
    ;;
  *) usage ;;
esac
