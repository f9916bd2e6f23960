#!/usr/bin/env bash
# Installs the Debian 12 packages qcheck needs (only those missing), then configures and builds
# a Release tree in ./build. Idempotent: a second run installs nothing and rebuilds incrementally.
# Usage: bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build python3 nlohmann-json3-dev libsimdjson-dev libcli11-dev
          libspdlog-dev libfmt-dev libgtest-dev libcurl4-openssl-dev)
bash scripts/install_packages.sh setup "${packages[@]}"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build build >&2
