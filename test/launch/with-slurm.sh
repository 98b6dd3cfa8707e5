#!/usr/bin/env bash
# Runs CMD against the local SLURM cluster that scripts/slurm-cluster.sh started: points the SLURM
# clients at it (SLURM_CONF) and sets the OpenMPI/PMIx environment its MPI programs need, from the
# cluster's slurm.env. Exits 77 (ctest's SKIP_RETURN_CODE) when no cluster is up.
#
#   test/launch/with-slurm.sh CMD [ARG...]
#
# The cluster folder is $DP_SLURM_DIR, else build/slurm of this checkout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${DP_SLURM_DIR:-$root/build/slurm}
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }

if [ ! -r "$dir/slurm.env" ]; then
  echo "SKIPPED: no local SLURM cluster in $dir (start one: scripts/slurm-cluster.sh start $dir)"
  exit 77
fi
# shellcheck source=/dev/null
source "$dir/slurm.env"
if ! timeout 10 sinfo -h -o %T >/dev/null 2>&1; then
  echo "SKIPPED: the local SLURM cluster in $dir does not answer (scripts/slurm-cluster.sh status $dir)"
  exit 77
fi
exec "$@"
