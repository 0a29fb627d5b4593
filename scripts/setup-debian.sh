#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs everything tracecorn needs to build and test, from Debian's
# package repositories only (Debian 12; run as root).
#
# Guests of other arches are built with Debian's cross compilers, never with
# gcc-multilib (the two conflict: installing one removes the other), and
# their reference runs use qemu-user-static when the host cannot run them.
# debhelper and lintian build and check the .debs, zsh, man-db, groff-base
# and bsdextrautils (col) check the completion and man page
# (tests/test_packaging.c). python3-minimal and bc (with perl-base, mawk and
# coreutils, always there) are the distribution's dynamically linked
# programs that tests/test_differential.c records; the g++ cross compilers
# build its C++ guest for each arch. python3-pytest runs the Python
# package's tests (tests/test_python.c); dh-python builds python3-tracecorn.
set -eu
PKGS="build-essential cmake pkg-config
      libunicorn-dev libcapstone-dev libzstd-dev libcunit1-dev
      libsnappy-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
      gdb gdb-multiarch zstd time qemu-user-static clang busybox-static strace
      libclang-rt-14-dev
      gcc-i686-linux-gnu libc6-dev-i386-cross
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
      gcc-arm-linux-gnueabi libc6-dev-armel-cross
      gcc-mips-linux-gnu libc6-dev-mips-cross
      gcc-mipsel-linux-gnu libc6-dev-mipsel-cross
      gcc-mips64el-linux-gnuabi64 libc6-dev-mips64el-cross
      gcc-sparc64-linux-gnu libc6-dev-sparc64-cross
      debhelper lintian zsh man-db groff-base bsdextrautils
      python3-minimal bc python3-pytest dh-python
      g++-i686-linux-gnu g++-aarch64-linux-gnu g++-arm-linux-gnueabihf
      g++-mipsel-linux-gnu"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing="$missing $p"
done
export DEBIAN_FRONTEND=noninteractive
# Older set-ups of this project installed gcc-multilib; it blocks the cross
# compilers, so it goes first (explicitly, never as a side effect).
if dpkg-query -W -f='${Status}' gcc-multilib 2>/dev/null | grep -q "ok installed"; then
  echo "setup: removing gcc-multilib (conflicts with Debian's cross compilers)"
  apt-get remove -y -qq gcc-multilib >/dev/null
fi
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  apt-get update -qq
  # --no-remove: fail loudly rather than remove anything to make room.
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-remove --no-install-recommends $missing >/dev/null
fi
# Real static programs of the other arches for the tests.
"$(dirname "$0")/fetch-foreign-busybox.sh"
# Debian's dynamic python3, perl, coreutils... of the other arches.
"$(dirname "$0")/fetch-foreign-rootfs.sh"
