#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tct random access (issue 32): records loop64 to about 100 M instructions
# (12,500,000 iterations) with each tracecorn given, then times `info` and
# `dump --from N --count 10` (N the middle and the last instruction but 10)
# on its file and counts the bytes each command read (read(2) and pread(2)
# under strace, a run of its own). Give a build of main from before version
# 4 as OLD to compare: it writes and reads version 3 (no footer: a scan).
# Each file is about 230 MB; the script checks the free space first and
# deletes its files at the end.
# Usage: bench/tct-seek.sh [BUILD_DIR] [ITERATIONS] [OLD_TRACECORN]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-12500000}
OLD=${3:-}
G=$B/examples/guests/loop64
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
need=$((N / 40000 + 100)) # MB: about 18.5 bytes an iteration, and margin
avail=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
if [ "$avail" -lt $((need * 2)) ]; then
  echo "tct-seek: $avail MB free in $out, $((need * 2)) MB needed" >&2
  exit 1
fi
ms() { date +%s%N | awk '{ printf "%.0f", $1 / 1e6 }'; }
best() { # command...: the best wall time of 3 runs, in ms
  b=999999999
  for _ in 1 2 3; do
    s=$(ms)
    "$@" >/dev/null 2>&1 || true
    e=$(ms)
    [ $((e - s)) -lt "$b" ] && b=$((e - s))
  done
  echo "$b"
}
readbytes() { # command...: bytes read by read/pread
  strace -f -qq -e trace=read,pread64 -e signal=none -o "$out/st" "$@" \
    >/dev/null 2>&1 || true
  awk '/= [0-9]+$/ { n += $NF } END { printf "%d", n }' "$out/st"
  rm -f "$out/st"
}
run() { # label, tracecorn
  T=$2
  f=$out/t.tct
  s=$(ms)
  "$T" record -q -o "$f" -- "$G" "$N" >/dev/null
  e=$(ms)
  insns=$("$T" info "$f" | sed -n 's/^instructions: *//p')
  size=$(stat -c %s "$f")
  echo "$1: loop64 $N: $insns instructions, $size bytes, recorded in $((e - s)) ms"
  mid=$((insns / 2))
  end=$((insns - 10))
  printf '  %-32s %8s ms %14s bytes read\n' "info" "$(best "$T" info "$f")" \
    "$(readbytes "$T" info "$f")"
  for at in $mid $end; do
    printf '  %-32s %8s ms %14s bytes read\n' "dump --from $at --count 10" \
      "$(best "$T" dump --from "$at" --count 10 "$f")" \
      "$(readbytes "$T" dump --from "$at" --count 10 "$f")"
  done
  rm -f "$f"
}
[ -n "$OLD" ] && run "before ($OLD)" "$OLD"
run "after ($B/tracecorn)" "$B/tracecorn"
