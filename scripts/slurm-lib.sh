# Shared by scripts/slurm-cluster.sh (one node) and scripts/cluster.sh (SLURM on emulated nodes):
# process checks by pid, and munged, which every SLURM daemon on this host shares. The sourcing
# script defines log, die and skip.

# Exists while a munged that one of these scripts started runs; holds its pid.
munged_mark=/run/munge/dp-slurm-cluster.munged.pid

# Whether process PID exists and is not a zombie (a killed daemon stays one until init reaps it).
alive() { # PID
  local _pid _comm st
  read -r _pid _comm st _ 2>/dev/null <"/proc/$1/stat" || return 1
  [ "$st" != Z ] && [ "$st" != X ]
}

# The pid in FILE if that process is alive and runs the program NAME, else nothing.
live_pid() { # FILE NAME
  local pid
  [ -r "$1" ] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [ -n "$pid" ] && alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
}

# Sends TERM to the process in FILE (if it runs NAME), waits up to 10 s, then KILL.
stop_pid() { # FILE NAME
  local pid i
  pid=$(live_pid "$1" "$2") || { rm -f "$1"; return 0; }
  log "stopping $2 (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    alive "$pid" || break
    sleep 0.2
  done
  if alive "$pid"; then
    log "$2 (pid $pid) ignored TERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

# Pids of every slurmctld and slurmd on this host (read from /proc: procps may be absent).
slurm_daemons() {
  local c p out=""
  for c in /proc/[0-9]*/comm; do
    p=${c#/proc/}; p=${p%/comm}
    case $(cat "$c" 2>/dev/null) in slurmctld|slurmd) alive "$p" && out+="$p " ;; esac
  done
  echo "${out% }"
}

mkdir_p() { [ -d "$1" ] || mkdir -p "$1"; }
dir_abs() { mkdir_p "$1"; (cd "$1" && pwd); }

start_munge() { # DIR
  local d=$1 i
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running"
    return 0
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    mkdir_p /etc/munge
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile=/etc/munge/munge.key
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  for p in /run/munge /var/lib/munge /var/log/munge; do
    mkdir_p "$p"
    chown munge:munge "$p"
  done
  chmod 0755 /run/munge
  chmod 0700 /var/lib/munge /var/log/munge
  log "starting munged"
  runuser -u munge -- "$(command -v munged)" || die "munged failed to start: $(tail -n 20 /var/log/munge/munged.log 2>/dev/null)"
  for i in $(seq 1 50); do
    if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
      # Remember, host-wide, that this script started munged: `stop` (of any folder's cluster)
      # stops it when no SLURM daemon is left, and always leaves a system munged alone.
      cp /run/munge/munged.pid "$munged_mark"
      return 0
    fi
    sleep 0.2
  done
  die "munged started but does not answer; $(tail -n 20 /var/log/munge/munged.log 2>/dev/null)"
}

# Stops munged when one of these scripts started it and no SLURM daemon on this host is left;
# a system munged, or one other daemons use, stays.
stop_munge_if_unused() {
  local others
  others=$(slurm_daemons)
  if ! live_pid "$munged_mark" munged >/dev/null; then
    rm -f "$munged_mark"
  elif [ -n "$others" ]; then
    log "leaving munged running: other SLURM daemons use it (pids $others)"
  else
    stop_pid "$munged_mark" munged
  fi
}

# The settings both clusters share: root daemons, munge, PMIx, no cgroups or accounting, a node
# that may advertise more CPUs than it has (config_overrides; tests oversubscribe 2 cores), and
# short timeouts (tests start, fail and clean up in seconds).
slurm_common_conf() {
  cat <<EOF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
Waittime=0
UnkillableStepTimeout=30
EOF
}
