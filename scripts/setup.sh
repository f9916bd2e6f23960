#!/usr/bin/env bash
# Installs the Debian 12 packages qcheck needs (only those missing), then configures and builds
# a Release tree in ./build. Idempotent: a second run installs nothing and rebuilds incrementally.
# Usage: bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build python3 nlohmann-json3-dev libsimdjson-dev libcli11-dev
          libspdlog-dev libfmt-dev libgtest-dev libcurl4-openssl-dev)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install packages (run as root or with sudo)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build build >&2
