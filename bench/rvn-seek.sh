#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# REVEN trace (rvn) random access: records loop64 to about 5 M
# instructions, then times `tracecorn dump --from MID` up to the first
# instruction line (process start, opening both files, seek, first event)
# with the default cache (a point every 1,000,000 events), a denser one,
# and no cache at all (replay from the start).
# Usage: bench/rvn-seek.sh [BUILD_DIR] [ITERATIONS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-625000}
T=$B/tracecorn
G=$B/examples/guests/loop64
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ms() { date +%s%N | awk '{ printf "%.0f", $1 / 1e6 }'; }
seek() { # label, trace dir, instruction
  best=999999
  for _ in 1 2 3 4 5; do
    s=$(ms)
    "$T" dump --from "$3" "$2" | head -n 3 >/dev/null
    e=$(ms)
    [ $((e - s)) -lt "$best" ] && best=$((e - s))
  done
  printf '  %-34s %6d ms\n' "$1" "$best"
}
for every in 1000000 100000; do
  s=$(ms)
  "$T" record -q -f rvn --cache-every "$every" -o "$out/t$every" -- "$G" "$N" \
    >/dev/null
  e=$(ms)
  printf 'recorded with a cache point every %d events in %d ms\n' \
    "$every" $((e - s))
done
insns=$("$T" dump "$out/t1000000.rvn" | tail -n 1 |
  sed -n 's/.*, \([0-9]*\) instructions.*/\1/p')
mid=$((insns / 2))
echo "loop64 $N iterations: $insns instructions; seek to $mid:"
seek "cache every 1000000 events" "$out/t1000000.rvn" "$mid"
seek "cache every 100000 events" "$out/t100000.rvn" "$mid"
rm "$out/t100000.rvn/trace.cache"
seek "no cache (replay from the start)" "$out/t100000.rvn" "$mid"
