#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# record -j N (issue 34): on each guest, side by side in one run
# (bench_speed's rows, medians of ROUNDS): Unicorn with no per-instruction
# hook, record -j's run phase alone (TRACECORN_PAR_RUN_ONLY: no segment is
# recorded), tct (-j 1) and tct -j JOBS, with the same chunk size (-O
# tct.chunk=CHUNK; -j N cuts its segments at the chunks). The lines after
# each table give the ratios: the run phase against the engine (goal
# >= 50 %) and tct -j JOBS against -j 1 (goal >= 1.7x on 2 cores). Then it
# checks the two tct files are the same bytes (one recording each).
# Usage: bench/parallel.sh [BUILD_DIR] [JOBS] [ROUNDS] [CHUNK]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
J=${2:-2}
R=${3:-3}
C=${4:-1048576}
G=$B/examples/guests
"$B/bench_speed" -r "$R" -f tct -j "$J" -O "tct.chunk=$C" \
  -- "$G/loop64" 2000000 \
  -- "$G/kernels64" sha256 1000 \
  -- "$G/strsort64" 3000 \
  -- "$G/textfmt64" 700
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for g in "loop64 2000000" "kernels64 sha256 1000"; do
  set -- $g
  p=$1
  shift
  "$B/tracecorn" record -q -O "tct.chunk=$C" -o "$out/a" -- "$G/$p" "$@" \
    >/dev/null
  "$B/tracecorn" record -q -j "$J" -O "tct.chunk=$C" -o "$out/b" -- \
    "$G/$p" "$@" >/dev/null
  if cmp -s "$out/a.tct" "$out/b.tct"; then
    echo "$p: -j $J and -j 1 wrote the same bytes"
  else
    echo "$p: -j $J and -j 1 DIFFER" >&2
    exit 1
  fi
done
