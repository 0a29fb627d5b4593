#!/bin/sh
# The speed table of docs/speed.md: bare Unicorn, Unicorn + empty hooks,
# the recorder into a null sink and each writer, side by side on three
# freestanding kernels and three static glibc programs (bench_speed.c).
#   bench/run.sh [BUILD_DIR] [ROUNDS] [FORMATS] [SCALE]
# FORMATS: comma-separated writers (default tct,trac,tfile,ucir,bap,rvn);
# SCALE multiplies the workload sizes (default 1: about 2-5 M
# instructions each). Then peak RSS at 1 M and 100 M instructions (tct).
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
  echo "peak RSS, tct with memory, loop64 (8 instructions per iteration):"
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  for n in 125000 12500000; do
    /usr/bin/time -f "%e %M" -o "$out/time" "$B/tracecorn" record -q -f tct \
      -o "$out/t.tct" -- "$G/loop64" "$n" >/dev/null
    read -r secs kb <"$out/time"
    printf '  %4d M instructions: %6.2f s, %4d MB peak RSS, %.2f B/insn\n' \
      $((n * 8 / 1000000)) "$secs" $((kb / 1024)) \
      "$(echo "$(stat -c %s "$out/t.tct") / ($n * 8)" | bc -l)"
    rm -f "$out/t.tct"
  done
fi
