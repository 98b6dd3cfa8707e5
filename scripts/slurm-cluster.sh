#!/usr/bin/env bash
# Starts, stops or shows a one-machine SLURM cluster (munged, slurmctld, slurmd on this host) whose
# configuration, state, logs and pid files all live in one folder, so `srun --mpi=pmix -n 2 ...`
# and `salloc ... mpirun ...` can be tested on a single machine. Needs root and Debian's
# `slurm-wlm` and `munge` packages (scripts/setup.sh installs them).
#
#   scripts/slurm-cluster.sh start  [DIR]   start (or find running) and wait until the node is idle
#   scripts/slurm-cluster.sh stop   [DIR]   cancel its jobs, stop the daemons this script started
#   scripts/slurm-cluster.sh status [DIR]   print the daemons and sinfo; exit 3 when it is down
#
# DIR defaults to build/slurm. After `start`, `source DIR/slurm.env` points the SLURM clients at
# this cluster (SLURM_CONF) and sets the OpenMPI/PMIx environment that MPI programs need here.
# Exit status 77 means "cannot run here" (not root, or SLURM/munge missing): test drivers skip.
#
# Settings (environment):
#   DP_SLURMCTLD_PORT  controller port (default 16817; SLURM's usual 6817 is left to a real cluster)
#   DP_SLURMD_PORT     node daemon port (default 16818)
#   DP_SLURM_CPUS      CPUs the node advertises (default max(nproc, 8)): more than the cores, so
#                      2-8 rank tests run on a 2-core machine (the node is oversubscribed on purpose)
#   DP_SLURM_WAIT      seconds to wait for the node to become idle (default 30)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: $0 start|stop|status [DIR]   (DIR defaults to $root/build/slurm)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
cmd=$1
dir=${2:-$root/build/slurm}
case $cmd in start|stop|status) ;; *) usage ;; esac

ctld_port=${DP_SLURMCTLD_PORT:-16817}
slurmd_port=${DP_SLURMD_PORT:-16818}
wait_s=${DP_SLURM_WAIT:-30}
nproc_=$(nproc)
cpus=${DP_SLURM_CPUS:-$(( nproc_ > 8 ? nproc_ : 8 ))}
host=$(hostname -s)
# The daemons live in sbin, which a non-login root shell may lack in PATH.
export PATH=$PATH:/usr/sbin:/sbin

skip() { echo "SKIPPED: $*" >&2; exit 77; }
die() { echo "slurm-cluster: error: $*" >&2; exit 1; }
log() { echo "slurm-cluster: $*"; }
# shellcheck source=slurm-lib.sh
. "$root/scripts/slurm-lib.sh"

conf_of() { echo "$1/slurm.conf"; }

# Fails when something already listens on PORT: another cluster would answer in our place.
port_free() { # PORT WHAT ENVVAR
  if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
    die "port $1 ($2) is already in use, perhaps by a cluster started in another folder; stop it, or choose another port with $3=..."
  fi
}

write_conf() { # DIR -> prints the slurm.conf text
  local d=$1
  cat <<EOF
# One-machine SLURM cluster for dp's tests, written by scripts/slurm-cluster.sh. Do not edit: the
# script rewrites it on every start.
ClusterName=dplocal
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
$(slurm_common_conf)
# The node advertises CPUs=$cpus on $nproc_ cores: config_overrides (in the common settings)
# makes slurmd trust slurm.conf instead of draining the node for having fewer cores.
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
# Job-private temporary files (the PMIx plugin's per-step folders among them) stay in here too.
TmpFS=$d/tmp
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
EOF
}

# The environment MPI programs get on this cluster, as `export` lines. None of it is needed where
# this script was written; each setting avoids a failure known from stricter containers, and only
# keeps MPI on what one machine has. OpenMPI's shared-memory transport copies large messages with
# CMA (process_vm_readv), which a container without CAP_SYS_PTRACE refuses: single-copy off. TCP
# stays on loopback. PMIx's shared-memory data store (gds/ds21) fails to attach in some sandboxes:
# the hash store always works. psec=native authenticates PMIx clients by uid, not through munge.
write_env() { # DIR
  cat <<EOF
# Written by scripts/slurm-cluster.sh: source it to use the local SLURM cluster in $1.
export SLURM_CONF=$1/slurm.conf
export OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo
export PMIX_MCA_gds=hash
export PMIX_MCA_psec=native
EOF
}

show_logs() { # DIR
  local f
  for f in "$1"/log/slurmctld.log "$1"/log/slurmd.log; do
    [ -r "$f" ] || continue
    echo "---- last lines of $f" >&2
    tail -n 25 "$f" >&2
  done
}

node_state() { SLURM_CONF=$1/slurm.conf timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1 || true; }

cmd_start() {
  [ "$(id -u)" -eq 0 ] || skip "the local SLURM cluster needs root (slurmd runs jobs as any user)"
  local b
  for b in slurmctld slurmd munged sinfo srun scontrol munge unmunge runuser; do
    command -v "$b" >/dev/null || skip "$b is missing (install slurm-wlm and munge: scripts/setup.sh)"
  done
  local d conf new state="" i
  d=$(dir_abs "$dir")
  conf=$(conf_of "$d")
  mkdir_p "$d/state"; mkdir_p "$d/spool"; mkdir_p "$d/log"; mkdir_p "$d/run"; mkdir_p "$d/tmp"
  new=$(write_conf "$d")
  if [ -f "$conf" ] && [ "$new" != "$(cat "$conf")" ] &&
     { live_pid "$d/run/slurmctld.pid" slurmctld >/dev/null || live_pid "$d/run/slurmd.pid" slurmd >/dev/null; }; then
    log "configuration changed: restarting the SLURM daemons"
    stop_pid "$d/run/slurmd.pid" slurmd
    stop_pid "$d/run/slurmctld.pid" slurmctld
  fi
  printf '%s\n' "$new" >"$conf"
  # slurm.env appears only once the cluster is up: with-slurm.sh takes it as the sign.
  rm -f "$d/slurm.env"

  start_munge "$d"
  if live_pid "$d/run/slurmctld.pid" slurmctld >/dev/null; then
    log "slurmctld already running"
  else
    port_free "$ctld_port" slurmctld DP_SLURMCTLD_PORT
    log "starting slurmctld (port $ctld_port)"
    # -c: a fresh cluster every start, no jobs left over from an earlier run.
    slurmctld -c -f "$conf" || { show_logs "$d"; die "slurmctld failed to start"; }
  fi
  if live_pid "$d/run/slurmd.pid" slurmd >/dev/null; then
    log "slurmd already running"
  else
    port_free "$slurmd_port" slurmd DP_SLURMD_PORT
    log "starting slurmd (port $slurmd_port, CPUs=$cpus)"
    slurmd -f "$conf" || { show_logs "$d"; die "slurmd failed to start"; }
  fi

  for ((i = 0; i < wait_s * 5; i++)); do
    state=$(node_state "$d")
    live_pid "$d/run/slurmctld.pid" slurmctld >/dev/null && live_pid "$d/run/slurmd.pid" slurmd >/dev/null ||
      { show_logs "$d"; die "a SLURM daemon exited during start (see the logs in $d/log)"; }
    case $state in
      idle|mixed|allocated) break ;;
      down*|drain*|fail*)
        # ReturnToService=2 brings a registered node back; a leftover reason may need a nudge.
        SLURM_CONF=$conf scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.2
  done
  case $state in
    idle|mixed|allocated) ;;
    *)
      echo "slurm-cluster: node $host is '${state:-unreachable}' after ${wait_s}s, not idle" >&2
      SLURM_CONF=$conf sinfo -N -l >&2 || true
      SLURM_CONF=$conf scontrol show node "$host" 2>/dev/null | grep -i reason >&2 || true
      show_logs "$d"
      die "the local SLURM cluster did not come up (see the logs in $d/log)" ;;
  esac
  write_env "$d" >"$d/slurm.env"
  SLURM_CONF=$conf sinfo
  log "up; to use it:"
  echo "export SLURM_CONF=$conf    # or: source $d/slurm.env (also sets the OpenMPI/PMIx environment)"
}

cmd_stop() {
  local d conf
  [ -d "$dir" ] || { log "nothing to stop in $dir"; return 0; }
  d=$(dir_abs "$dir")
  conf=$(conf_of "$d")
  if [ "$(id -u)" -ne 0 ]; then
    live_pid "$d/run/slurmctld.pid" slurmctld >/dev/null || live_pid "$d/run/slurmd.pid" slurmd >/dev/null ||
      { log "nothing to stop in $d"; return 0; }
    die "stopping the SLURM daemons in $d needs root"
  fi
  if live_pid "$d/run/slurmctld.pid" slurmctld >/dev/null; then
    # Cancel what still runs, so slurmd leaves no job steps behind.
    SLURM_CONF=$conf timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
  fi
  stop_pid "$d/run/slurmd.pid" slurmd
  stop_pid "$d/run/slurmctld.pid" slurmctld
  stop_munge_if_unused
  rm -f "$d/slurm.env"
  log "stopped"
}

cmd_status() {
  local d conf up=1 pid n
  [ -d "$dir" ] || { echo "no cluster in $dir"; exit 3; }
  d=$(dir_abs "$dir")
  conf=$(conf_of "$d")
  for n in slurmctld slurmd; do
    if pid=$(live_pid "$d/run/$n.pid" "$n"); then echo "$n: running (pid $pid)"
    else echo "$n: not running"; up=0
    fi
  done
  if pid=$(live_pid "$munged_mark" munged); then echo "munged: running (pid $pid, started by this script)"
  elif munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then echo "munged: running (not started by this script)"
  else echo "munged: not running"; up=0
  fi
  [ "$up" -eq 1 ] || { echo "cluster in $d is down"; exit 3; }
  SLURM_CONF=$conf sinfo
  echo "export SLURM_CONF=$conf"
}

"cmd_$cmd"
