#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The speed table of docs/speed.md: bare Unicorn, Unicorn + empty hooks,
# the recorder into a null sink and each writer, side by side on three
# freestanding kernels and three static glibc programs (bench_speed.c).
#   bench/run.sh [BUILD_DIR] [ROUNDS] [FORMATS] [SCALE]
# FORMATS: comma-separated writers (default tct,trac,tfile,ucir,bap,rvn);
# SCALE multiplies the workload sizes (default 1: about 2-5 M
# instructions each). Then peak RSS at 1 M and 100 M instructions for
# RSS_FORMATS (default "tct trac"; RSS=0 skips it).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
R=${2:-3}
F=${3:-tct,trac,tfile,ucir,bap,rvn}
S=${4:-1}
G=$B/examples/guests
echo "tracecorn $(git describe --always --dirty 2>/dev/null || echo ?)," \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/bench_speed" -r "$R" -f "$F" \
  -- "$G/kernels64" fib $((24 + (S > 1))) \
  -- "$G/kernels64" sha256 $((1000 * S)) \
  -- "$G/kernels64" qsort $((20000 * S)) \
  -- "$G/fib64" $((24 + (S > 1))) \
  -- "$G/strsort64" $((3000 * S)) \
  -- "$G/textfmt64" $((700 * S))
if [ "${RSS:-1}" = 1 ] && command -v /usr/bin/time >/dev/null; then
  echo
  echo "peak RSS at 1 M and 100 M instructions, loop64 (8 per iteration):"
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  for f in ${RSS_FORMATS:-tct trac}; do
    for n in 125000 12500000; do
      /usr/bin/time -f "%e %M" -o "$out/time" "$B/tracecorn" record -q -f "$f" \
        -o "$out/t" -- "$G/loop64" "$n" >/dev/null
      read -r secs kb <"$out/time"
      bytes=$(find "$out" -name 't.*' -type f -exec cat {} + | wc -c)
      printf '  %-5s %4d M instructions: %7.2f s, %4d MB peak RSS, %.2f B/insn\n' \
        "$f" $((n * 8 / 1000000)) "$secs" $((kb / 1024)) \
        "$(echo "$bytes / ($n * 8)" | bc -l)"
      rm -rf "$out"/t.*
    done
  done
fi
