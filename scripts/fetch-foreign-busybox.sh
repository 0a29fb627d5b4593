#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fetches Debian's busybox-static for the guest arches tracecorn records
# (real, large static programs for the tests) into /var/cache/tracecorn.
# Uses a private apt state with the extra architectures, so the machine's
# own dpkg architecture list is left alone. Run as root (setup does).
set -eu
ARCHES="arm64 armhf armel mipsel"
OUT=/var/cache/tracecorn
APTD=$OUT/apt
missing=""
for a in $ARCHES; do
  [ -x "$OUT/busybox-$a/bin/busybox" ] || missing="$missing $a"
done
[ -z "$missing" ] && exit 0
echo "setup: fetching busybox-static for$missing"
mkdir -p "$APTD/lists/partial" "$APTD/archives/partial" "$OUT/debs"
opts="-o APT::Architectures=amd64,$(echo $ARCHES | tr ' ' ,)
      -o Dir::State::Lists=$APTD/lists -o Dir::Cache=$APTD
      -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# A mirror mid-sync can fail one index (often the security suite of one
# arch); the download below is what must succeed.
# shellcheck disable=SC2086
apt-get $opts update -qq >/dev/null 2>&1 || true
for a in $missing; do
  (cd "$OUT/debs" && apt-get $opts download -qq "busybox-static:$a" >/dev/null)
  rm -rf "$OUT/busybox-$a"
  dpkg-deb -x "$OUT/debs"/busybox-static_*_"$a".deb "$OUT/busybox-$a"
  [ -x "$OUT/busybox-$a/bin/busybox" ] || {
    echo "setup: busybox-static:$a did not unpack" >&2
    exit 1
  }
done
