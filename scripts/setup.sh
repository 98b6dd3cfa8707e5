#!/usr/bin/env bash
# Installs every build, test and demo dependency of dp from Debian's packages.
# Idempotent: packages already present are left alone. Must run as root (or via sudo).
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libdnnl-dev
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev
  zlib1g-dev
  dataset-fashion-mnist
  openmpi-bin libopenmpi-dev libpmix-dev slurm-wlm munge
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: needs root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
