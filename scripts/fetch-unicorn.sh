#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fetches another Debian's Unicorn (issue 37) without installing it:
#   scripts/fetch-unicorn.sh 2.1.1     Debian 13 (trixie)
#   scripts/fetch-unicorn.sh 2.1.4     Debian unstable (sid)
# downloads libunicorn-dev and its library package with a private apt
# configuration (its own sources list, package lists and cache; the
# machine's sources and dpkg state are left alone), unpacks them with
# dpkg-deb into /var/cache/tracecorn/unicorn-VERSION and prints that
# prefix. Build against it with
#   ./scripts/build.sh build-uc211 -DTC_UNICORN_PREFIX=$(scripts/fetch-unicorn.sh 2.1.1)
# (the binaries find the library through their RUNPATH). The packages need
# only libc6 >= 2.34, which Debian 12 has.
set -eu
version=${1:?usage: fetch-unicorn.sh 2.1.1|2.1.4}
case "$version" in
2.1.1) suite=trixie ;;
2.1.4) suite=sid ;;
*)
  echo "fetch-unicorn: no Debian suite known for Unicorn $version (2.1.1, 2.1.4)" >&2
  exit 2
  ;;
esac
OUT=${TC_UNICORN_CACHE:-/var/cache/tracecorn}
prefix=$OUT/unicorn-$version
if [ -f "$prefix/usr/include/unicorn/unicorn.h" ] &&
  [ -e "$prefix/usr/lib/x86_64-linux-gnu/libunicorn.so.2" ]; then
  echo "$prefix"
  exit 0
fi
aptd=$OUT/apt-unicorn-$suite
mkdir -p "$aptd/lists/partial" "$aptd/archives/partial" "$aptd/debs"
echo "deb http://deb.debian.org/debian $suite main" >"$aptd/sources.list"
opts="-o Dir::Etc::SourceList=$aptd/sources.list
      -o Dir::Etc::SourceParts=/nonexistent
      -o Dir::State::Lists=$aptd/lists -o Dir::Cache=$aptd
      -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get $opts update -qq >/dev/null
rm -f "$aptd/debs"/*.deb
# The library package is libunicorn2t64 since the 64-bit time_t rename.
# shellcheck disable=SC2086
(cd "$aptd/debs" && apt-get $opts download -qq libunicorn-dev libunicorn2t64 \
  >/dev/null)
for deb in "$aptd/debs"/*.deb; do
  case "$deb" in
  *_"$version"-*) ;;
  *)
    echo "fetch-unicorn: $suite has $(basename "$deb"), not Unicorn $version" >&2
    exit 1
    ;;
  esac
done
rm -rf "$prefix.tmp"
for deb in "$aptd/debs"/*.deb; do
  dpkg-deb -x "$deb" "$prefix.tmp"
done
# The .pc file names Debian's /usr; point it at the unpacked tree.
pc=$prefix.tmp/usr/lib/x86_64-linux-gnu/pkgconfig/unicorn.pc
sed -i "s|=/usr/|=$prefix/usr/|" "$pc"
rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
echo "$prefix"
