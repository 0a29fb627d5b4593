#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the Debian packages (tracecorn, libtracecorn1, libtracecorn-dev)
# from a copy of this tree, so the tree itself stays clean:
#   scripts/build-debs.sh [OUTDIR]     (default: out/debs)
# The .debs, .buildinfo and .changes land in OUTDIR. Tests are not run
# inside the package build (DEB_BUILD_OPTIONS=nocheck unless set); the
# build uses at most 2 jobs. Needs debhelper and the Build-Depends of
# debian/control (scripts/setup-debian.sh installs them).
set -eu
cd "$(dirname "$0")/.."
out=${1:-out/debs}
version=$(dpkg-parsechangelog -S Version)
upstream=${version%-*}
work=$(mktemp -d "${TMPDIR:-/tmp}/tracecorn-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/tracecorn-$upstream
mkdir -p "$src"
# The files git knows (tracked, and new ones not ignored), or, outside a
# git checkout, everything but build trees.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -xf - -C "$src"
else
  tar --exclude='./build*' --exclude=./out --exclude=./.git -cf - . |
    tar -xf - -C "$src"
fi
(
  cd "$src"
  DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck parallel=2} \
    dpkg-buildpackage -us -uc -b
) >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log"
  echo "build-debs: dpkg-buildpackage failed" >&2
  exit 1
}
mkdir -p "$out"
for f in "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes; do
  [ -e "$f" ] && cp "$f" "$out"/
done
cp "$work/build.log" "$out/build.log"
ls "$out"/*.deb
# lintian's verdict on what was built (tags, or that there are none)
if command -v lintian >/dev/null; then
  if lintian --fail-on error,warning "$out"/*.changes >"$out/lintian.log" 2>&1; then
    echo "build-debs: lintian: clean, no error or warning ($out/lintian.log)"
  else
    cat "$out/lintian.log"
    echo "build-debs: lintian: errors or warnings (above)" >&2
    exit 1
  fi
else
  echo "build-debs: lintian not installed: not checked"
fi
