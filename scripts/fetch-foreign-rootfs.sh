#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Small foreign-arch root filesystems of Debian's own dynamically linked
# programs (python3, perl, mawk, coreutils, bc and their libraries) for the
# differential tests (tests/test_differential.c): /var/cache/tracecorn/
# rootfs-<arch>, used as `tracecorn record --root` and as qemu-user's -L
# (the tests use a hard-linked copy, with their own files added).
# The packages are only unpacked (dpkg-deb -x), never installed, with a
# private apt state holding the extra architectures, so the machine's own
# dpkg architecture list is left alone. Idempotent: a rootfs whose stamp
# names the same package list is kept. Run as root (setup does).
set -eu
ARCHES="i386 arm64 armhf mipsel"
# The programs, then what their Depends/Pre-Depends need (apt-cache depends;
# dpkg, gcc-12-base and readline-common hold no code the programs load).
PKGS="libc6 libgcc-s1 libstdc++6 libatomic1
      perl-base mawk coreutils bc python3.11-minimal
      libpython3.11-minimal libexpat1 zlib1g libssl3 libcrypt1
      libacl1 libattr1 libgmp10 libselinux1 libpcre2-8-0
      libreadline8 libtinfo6"
# Programs whose shared libraries must all be in the rootfs.
PROGS="usr/bin/perl usr/bin/mawk usr/bin/bc usr/bin/python3.11 bin/ls
       usr/bin/sort usr/bin/sha256sum bin/date usr/bin/printf"
OUT=/var/cache/tracecorn
APTD=$OUT/apt-rootfs
# the list on one line, as the stamp holds it
# shellcheck disable=SC2086,SC2116
stamp_text=$(echo $PKGS)

missing=""
for a in $ARCHES; do
  s="$OUT/rootfs-$a/.tracecorn-rootfs"
  [ -f "$s" ] && [ "$(cat "$s")" = "$stamp_text" ] || missing="$missing $a"
done
[ -z "$missing" ] && exit 0
echo "setup: fetching a Debian rootfs (python3, perl, coreutils...) for$missing"
command -v readelf >/dev/null || {
  echo "setup: readelf (binutils) is needed to check the rootfs" >&2
  exit 1
}
mkdir -p "$APTD/lists/partial" "$APTD/archives/partial"
opts="-o APT::Architectures=amd64,$(echo "$ARCHES" | tr ' ' ,)
      -o Dir::State::Lists=$APTD/lists -o Dir::Cache=$APTD
      -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# A mirror mid-sync can fail one index (often the security suite of one
# arch); the downloads below are what must succeed.
# shellcheck disable=SC2086
apt-get $opts update -qq >/dev/null 2>&1 || true

# find_lib ROOT TRIPLE NAME: NAME is in a directory ld.so searches
find_lib() {
  for d in lib usr/lib lib/$2 usr/lib/$2; do
    [ -e "$1/$d/$3" ] && return 0
  done
  return 1
}

for a in $missing; do
  debs="$OUT/rootfs-debs/$a"
  root="$OUT/rootfs-$a"
  rm -rf "$debs" "$root.tmp"
  mkdir -p "$debs" "$root.tmp"
  list=""
  for p in $PKGS; do list="$list $p:$a"; done
  # shellcheck disable=SC2086
  (cd "$debs" && apt-get $opts download -qq $list >/dev/null) || {
    echo "setup: could not download the $a packages:$list" >&2
    exit 1
  }
  for d in "$debs"/*.deb; do
    dpkg-deb -x "$d" "$root.tmp"
  done
  # The multiarch directory of the arch, from where libc6 put libc.so.6.
  libc=$(cd "$root.tmp" && find lib usr/lib -name libc.so.6 | head -n 1)
  [ -n "$libc" ] || {
    echo "setup: libc6:$a did not unpack into $root.tmp" >&2
    exit 1
  }
  triple=$(basename "$(dirname "$libc")")
  # Every program and every library loads: their NEEDED names are present.
  bad=""
  # (glibc's gconv modules load their own tables; not the programs' concern)
  for f in $PROGS $(cd "$root.tmp" && find lib usr/lib -path '*/gconv' -prune \
    -o -name '*.so*' -type f -print); do
    [ -e "$root.tmp/$f" ] || {
      bad="$bad $f(missing)"
      continue
    }
    for n in $(readelf -d "$root.tmp/$f" 2>/dev/null |
      sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      find_lib "$root.tmp" "$triple" "$n" || bad="$bad $f:$n"
    done
  done
  [ -z "$bad" ] || {
    echo "setup: rootfs-$a lacks libraries:$bad" >&2
    exit 1
  }
  # /dev/null, as a chroot has it (perl -e reads its script from it)
  mkdir -p "$root.tmp/dev"
  mknod -m 666 "$root.tmp/dev/null" c 1 3 || {
    echo "setup: cannot make $root.tmp/dev/null (mknod needs root)" >&2
    exit 1
  }
  echo "$stamp_text" >"$root.tmp/.tracecorn-rootfs"
  rm -rf "$root"
  mv "$root.tmp" "$root"
done
