#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every harness at once, for machines with many cores (the campaign of
# issue 38 ran this way on a 16-core machine): harness H gets N_H
# independent libFuzzer processes (seeds 1..N_H, one shared corpus that
# each reloads), all harnesses run side by side for SECONDS, then each
# corpus is replayed with the seeds and regression inputs for its
# coverage. No build step and no -fork: the binaries may be a copy
# carried to a machine without a compiler, started through LOADER when
# the host's libc is older than the build's.
#   scripts/fuzz-parallel.sh SECONDS [FUZZ-DIR] [OUT-DIR]
# FUZZ-DIR holds fuzz_<harness> and seeds/<harness> (default
# build-fuzz/fuzz); corpora go to FUZZ-DIR/corpus/<harness>, crashes to
# OUT-DIR/artifacts. PROCS="tct=2 ..." sets processes per harness (1
# unless named; default below: the slower readers get 2); HARNESSES picks
# some; LOADER="ld.so --library-path DIR" prefixes every run.
# Writes OUT-DIR/summary.md (also printed): per harness its processes,
# seconds, executions (the processes' stat::number_of_executed_units
# summed), exec/s, cov and ft of the final corpus replayed, corpus files,
# crashes, timeouts, out-of-memory runs and leaks. Exits 1 on any finding
# or a failing regression input.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -ge 1 ] || {
  echo "usage: scripts/fuzz-parallel.sh SECONDS [FUZZ-DIR] [OUT-DIR]" >&2
  exit 2
}
secs=$1
f=${2:-build-fuzz/fuzz}
out=${3:-$f/parallel-$(date +%Y%m%d-%H%M%S)}
harnesses=${HARNESSES:-"elf tct tctraw trac tfile ucir bap rvn drcov tenet gdbrsp"}
procs=${PROCS:-"tct=2 tctraw=2 tfile=2 ucir=2 bap=2 rvn=2"}
loader=${LOADER:-}
nprocs() {
  for hp in $procs; do
    [ "${hp%%=*}" = "$1" ] && { echo "${hp#*=}"; return; }
  done
  echo 1
}
mkdir -p "$out/artifacts"
opts="-timeout=10 -rss_limit_mb=2048 -max_len=262144 -close_fd_mask=3"
fail=0
total=0
for h in $harnesses; do
  reg=tests/fuzz/regress/$h
  if [ -d "$reg" ] &&
    ! $loader "$f/fuzz_$h" "$reg"/* >"$out/$h.regress.log" 2>&1; then
    echo "=== fuzz $h: a regression input fails (log: $out/$h.regress.log)"
    fail=1
  fi
  mkdir -p "$f/corpus/$h"
  total=$((total + $(nprocs "$h")))
done
echo "=== $total processes for $secs s on $(nproc) cores"
start=$(date +%s)
for h in $harnesses; do
  dirs="$f/corpus/$h $f/seeds/$h"
  [ -d "tests/fuzz/regress/$h" ] && dirs="$dirs tests/fuzz/regress/$h"
  i=1
  while [ "$i" -le "$(nprocs "$h")" ]; do
    # shellcheck disable=SC2086
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      $loader "$f/fuzz_$h" $opts -seed="$i" -max_total_time="$secs" \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$h-$i-" \
      $dirs >"$out/$h.$i.log" 2>&1 &
    i=$((i + 1))
  done
done
wait
took=$(($(date +%s) - start))
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)
sum=$out/summary.md
{
  echo "Parallel campaign of $(date -u '+%Y-%m-%d %H:%M UTC'), $secs s," \
    "$total processes on $(nproc) cores (${cpu:-unknown CPU})."
  echo
  echo "| harness | procs | seconds | runs | exec/s | cov | ft | corpus | crashes | timeouts | ooms | leaks |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
} >"$sum"
below=
for h in $harnesses; do
  runs=$(cat "$out/$h".[0-9]*.log |
    sed -n 's/^stat::number_of_executed_units: *//p' | awk '{ s += $1 } END { print s + 0 }')
  # libFuzzer's one-line verdicts: "==N== ERROR: libFuzzer: timeout",
  # "... out-of-memory", AddressSanitizer/UBSan errors, "detected memory leaks".
  touts=$(cat "$out/$h".[0-9]*.log | grep -c 'ERROR: libFuzzer: timeout')
  ooms=$(cat "$out/$h".[0-9]*.log | grep -c 'ERROR: libFuzzer: out-of-memory')
  leaks=$(cat "$out/$h".[0-9]*.log | grep -c 'ERROR: LeakSanitizer')
  crashes=$(cat "$out/$h".[0-9]*.log | grep -E -c 'ERROR: AddressSanitizer|runtime error|deadly signal')
  dirs="$f/corpus/$h $f/seeds/$h"
  [ -d "tests/fuzz/regress/$h" ] && dirs="$dirs tests/fuzz/regress/$h"
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=0 $loader "$f/fuzz_$h" -runs=0 $opts $dirs \
    >"$out/$h.cov.log" 2>&1
  done_line=$(grep 'DONE *cov:' "$out/$h.cov.log" | tail -1)
  cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  files=$(find "$f/corpus/$h" -type f | wc -l)
  eps=$(awk -v r="$runs" -v t="$took" 'BEGIN { print (t > 0 ? int(r / t) : 0) }')
  if [ $((touts + ooms + leaks + crashes)) -ne 0 ]; then
    echo "=== fuzz $h: FAILED (logs: $out/$h.*.log)"
    fail=1
  fi
  [ "$runs" -ge 1000000 ] || below="$below $h"
  echo "| $h | $(nprocs "$h") | $took | $runs | $eps | ${cov:-?} | ${ft:-?} | $files | $crashes | $touts | $ooms | $leaks |" >>"$sum"
done
{
  echo
  if [ -n "$below" ]; then
    echo "Below the goal of 1 M executions per harness:$below."
  else
    echo "Every harness reached the goal of 1 M executions."
  fi
} >>"$sum"
ls "$out/artifacts" | sed 's/^/artifact: /'
echo
cat "$sum"
exit $fail
