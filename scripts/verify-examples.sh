#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs `tracecorn verify` (every readable format the arch holds) on every
# example guest of a build and prints one line per guest; exits 1 if any
# format differs or a guest cannot be recorded. Too slow for the test suite
# on 2 cores (each guest is recorded in ~8 formats and read back); the suite
# verifies a sample, this checks them all.
# usage: scripts/verify-examples.sh [BUILD_DIR]
build=$(cd "${1:-build}" && pwd) || exit 2
tc=$build/tracecorn
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT INT TERM
fail=0
for g in "$build"/examples/guests/*; do
  [ -f "$g" ] && [ -x "$g" ] || continue
  name=$(basename "$g")
  case $name in *.*) continue ;; esac
  args= root=
  case $name in
  bigmem*) args=16 ;; # the formats matter here, not size
  dyn-arm64) root=/usr/aarch64-linux-gnu ;; # Debian's cross sysroots
  dyn-armhf) root=/usr/arm-linux-gnueabihf ;;
  dyn-mipsel) root=/usr/mipsel-linux-gnu ;;
  esac
  # shellcheck disable=SC2086 # args is a word list
  if out=$(cd "$scratch" &&
    "$tc" verify -q -o "$scratch/$name" ${root:+--root "$root"} -- "$g" \
      $args 2>&1 </dev/null); then
    printf '%-24s ok\n' "$name"
  elif printf '%s' "$out" | grep -q 'this Unicorn .* cannot execute'; then
    # the engine's own limit (docs/arches.md), not a format's
    printf '%-24s skipped: %s\n' "$name" "$(printf '%s' "$out" | head -1)"
  else
    printf '%-24s FAILED (verify status %d)\n' "$name" $?
    printf '%s\n' "$out" | grep -v '^$' | tail -12
    fail=1
  fi
  rm -rf "${scratch:?}"/*
done
exit $fail
