#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Recording speed and trace size on the loop guest (an ALU loop with one
# store per iteration), per mode and format. Targets (unicorn-2.0.1.md):
# >= 5 M insn/s on store-heavy code with memory and zstd; <= 2 B/insn
# compressed. Usage: bench/record-speed.sh [BUILD_DIR] [ITERATIONS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-1000000}
T=$B/tracecorn
G=$B/examples/guests/loop64
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
insns=$($T record -f tct -o "$out/count" -- "$G" "$N" 2>&1 >/dev/null |
  sed -n 's/.*: \([0-9]*\) instructions.*/\1/p')
echo "loop64 $N iterations: $insns instructions"
printf '%-28s %10s %12s %10s\n' mode seconds "M insn/s" "B/insn"
run() { # label, format, extra args
  start=$(date +%s.%N)
  $T record -q -f "$2" -o "$out/t" $3 -- "$G" "$N" >/dev/null
  end=$(date +%s.%N)
  size=$(find "$out"/t.* -type f -exec cat {} + | wc -c) # files or dirs
  rm -rf "$out"/t.*
  awk -v l="$1" -v s="$start" -v e="$end" -v n="$insns" -v b="$size" \
    'BEGIN { t = e - s; printf "%-28s %10.2f %12.2f %10.2f\n", l, t, n / t / 1e6, b / n }'
}
run "tct, registers only" tct --no-memory
run "tct, registers + memory" tct ""
run "tct, --exact" tct --exact
run "trac" trac ""
run "tfile" tfile ""
run "ucir" ucir ""
run "bap" bap ""
run "rvn" rvn ""
echo "recorder alone (events discarded):"
for mode in "" --memory; do
  printf '  %-12s ' "${mode:-registers}"
  "$B/bench_recorder" "$G" "$N" $mode
done
