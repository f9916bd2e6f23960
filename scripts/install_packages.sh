#!/usr/bin/env bash
# Installs the given Debian packages that are not installed yet (as root); prints what it
# installs to stderr. Usage: bash scripts/install_packages.sh LABEL PACKAGE...
set -euo pipefail
label="$1"
shift
missing=()
for package in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "$label: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "$label: need root to install packages (run as root or with sudo)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
