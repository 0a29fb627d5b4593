#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The tct writer alone, in ns per instruction (bench_tct.c, built by
# CMake as BUILD_DIR/bench_tct): replays 200k
# instructions of each bench guest (after its first million: past a glibc
# program's start-up) into the writer, ROUNDS times, and prints the
# fastest and the median round. The writer's own thread only: zstd is not
# counted. Numbers in docs/speed.md (issue 19).
#   bench/tct-writer.sh [BUILD_DIR] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
R=${2:-7}
G=$B/examples/guests
for g in "kernels64 fib 27" "kernels64 sha256 3000" "kernels64 qsort 60000" \
  "fib64 27" "strsort64 3000" "textfmt64 700"; do
  printf '%-22s ' "$g"
  # shellcheck disable=SC2086 # the guest and its arguments
  "$B/bench_tct" -n 200000 -s 1000000 -r "$R" -- $G/$g | sed 's/.*insns *//'
done
