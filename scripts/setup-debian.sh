#!/bin/sh
# Installs everything tracecorn needs to build and test, from Debian's
# package repositories only (Debian 12; run as root).
set -eu
PKGS="build-essential cmake pkg-config gcc-multilib
      libunicorn-dev libcapstone-dev libzstd-dev libcunit1-dev
      gdb zstd"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
