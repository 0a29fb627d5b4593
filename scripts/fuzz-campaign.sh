#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A long (nightly) fuzzing campaign: every harness in turn for its share
# of HOURS (fractions allowed: 0.1 = 6 minutes), each with JOBS libFuzzer
# processes (-fork=JOBS, default: the machine's cores), which keep going
# after a crash (saved to build-fuzz/fuzz/artifacts/<harness>-*). Each
# harness has one corpus, build-fuzz/fuzz/corpus/<harness> (the one
# scripts/fuzz.sh grows), fed by the seeds and the regression inputs; it is
# merged (minimized) after the run.
#
# The goal is at least 1 M executions per harness. tct and tctraw run about
# a hundred times slower than the others (docs/fuzzing.md), so they get 4
# shares of the time each and every other harness one (WEIGHTS="tct=4
# tctraw=4", the default; "h=N ..." sets others): 8 hours on 2 free cores
# give them 2 hours each and the others 30 minutes, enough for all.
#
# Writes build-fuzz/fuzz/campaign-DATE/summary.md (also printed): per
# harness its time, executions, exec/s, the coverage of its merged corpus
# (cov: and ft:, libFuzzer's counts of edges and features when it replays
# corpus + seeds + regression inputs), corpus size, crashes, timeouts and
# out-of-memory runs. Logs, the pre-merge corpus listing and the list of
# artifacts written (artifacts.txt) are there too. Exits 1 if a regression
# input failed or the run found a crash, timeout or out-of-memory.
#   scripts/fuzz-campaign.sh HOURS [JOBS] [BUILD-DIR]
# HARNESSES="tct tctraw" picks some (HOURS is then shared among them).
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -ge 1 ] || {
  echo "usage: scripts/fuzz-campaign.sh HOURS [JOBS] [BUILD-DIR]" >&2
  exit 2
}
hours=$1
jobs=${2:-$(nproc)}
dir=${3:-build-fuzz}
harnesses=${HARNESSES:-"elf tct tctraw trac tfile ucir bap rvn drcov tenet gdbrsp"}
command -v clang >/dev/null || {
  echo "fuzz-campaign.sh: clang is not installed"
  exit 1
}
weights=${WEIGHTS:-"tct=4 tctraw=4"}
# weight H: the harness's shares of the time (1 unless WEIGHTS names it).
weight() {
  for hw in $weights; do
    [ "${hw%%=*}" = "$1" ] && { echo "${hw#*=}"; return; }
  done
  echo 1
}
total=0
for h in $harnesses; do total=$((total + $(weight "$h"))); done
# secs H: its seconds, at least 1.
secs() {
  awk -v h="$hours" -v w="$(weight "$1")" -v t="$total" \
    'BEGIN { s = int(h * 3600 * w / t); print (s < 1 ? 1 : s) }'
}
./scripts/build.sh "$dir" -DCMAKE_C_COMPILER=clang -DTC_FUZZ=ON \
  -DTC_WERROR=ON -DBUILD_TESTING=OFF || exit 1
f=$dir/fuzz
out=$f/campaign-$(date +%Y%m%d-%H%M%S)
mkdir -p "$f/artifacts" "$out"
sum=$out/summary.md
touch "$out/.start"
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)
{
  echo "Campaign of $(date -u '+%Y-%m-%d %H:%M UTC'), commit" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (modified tree)'):" \
    "$hours h in all (weights: $weights), -fork=$jobs on $(nproc) cores" \
    "(${cpu:-unknown CPU}), load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| harness | seconds | runs | exec/s | cov | ft | corpus | crashes | timeouts | ooms |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
} >"$sum"
fail=0
below=
for h in $harnesses; do
  bin=$f/fuzz_$h
  corpus=$f/corpus/$h
  reg=tests/fuzz/regress/$h
  mkdir -p "$corpus"
  note=
  secs=$(secs "$h")
  if [ -d "$reg" ] && ! "$bin" "$reg"/* >"$out/$h.regress.log" 2>&1; then
    echo "=== fuzz $h: a regression input fails (log: $out/$h.regress.log)"
    note=" (a regression input fails)"
    fail=1
  fi
  dirs="$corpus $f/seeds/$h"
  [ -d "$reg" ] && dirs="$dirs $reg"
  echo "=== fuzz $h: ${secs} s, -fork=$jobs"
  start=$(date +%s)
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" -fork="$jobs" -ignore_crashes=1 -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2048 -max_len=262144 -close_fd_mask=3 \
    -artifact_prefix="$f/artifacts/$h-" $dirs >"$out/$h.log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  # The fork parent's last status line: "#RUNS: cov: C ft: F corp: N
  # exec/s E oom/timeout/crash: O/T/C time: Ss job: J dft_time: D".
  last=$(grep '^#[0-9]*: cov: ' "$out/$h.log" | tail -1)
  runs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  otc=$(echo "$last" | sed -n 's/.*oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
  ooms=$(echo "${otc:-?/?/?}" | cut -d/ -f1)
  touts=$(echo "${otc:-?/?/?}" | cut -d/ -f2)
  crashes=$(echo "${otc:-?/?/?}" | cut -d/ -f3)
  # Merge: keep the corpus files that add coverage, then replay it with
  # the seeds and regression inputs for its coverage.
  ls "$corpus" >"$out/$h.corpus-before"
  rm -rf "$corpus.merge"
  mkdir -p "$corpus.merge"
  if ASAN_OPTIONS=detect_leaks=0 "$bin" -merge=1 -timeout=10 \
    -rss_limit_mb=2048 -close_fd_mask=3 "$corpus.merge" "$corpus" \
    >"$out/$h.merge.log" 2>&1; then
    rm -rf "$corpus"
    mv "$corpus.merge" "$corpus"
  else
    rm -rf "$corpus.merge"
    note="$note (merge failed: $out/$h.merge.log)"
  fi
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=0 "$bin" -runs=0 -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=3 $dirs >"$out/$h.cov.log" 2>&1
  done_line=$(grep 'DONE *cov:' "$out/$h.cov.log" | tail -1)
  cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  files=$(find "$corpus" -type f | wc -l)
  eps=$(awk -v r="${runs:-0}" -v t="$took" 'BEGIN { print (t > 0 ? int(r / t) : 0) }')
  if [ "$rc" -ne 0 ] || [ "${crashes:-?}" != 0 ] || [ "${touts:-?}" != 0 ] ||
    [ "${ooms:-?}" != 0 ]; then
    grep -E "ERROR|SUMMARY|runtime error" "$out/$h.log" | head -5
    echo "=== fuzz $h: FAILED (rc $rc; log: $out/$h.log)"
    fail=1
  fi
  [ "${runs:-0}" -ge 1000000 ] || below="$below $h"
  echo "=== fuzz $h: ${runs:-?} runs, $eps exec/s, cov ${cov:-?} ft ${ft:-?}"
  echo "| $h$note | $took | ${runs:-?} | $eps | ${cov:-?} | ${ft:-?} | $files | ${crashes:-?} | ${touts:-?} | ${ooms:-?} |" >>"$sum"
done
{
  echo
  if [ -n "$below" ]; then
    echo "Below the goal of 1 M executions per harness:$below."
  else
    echo "Every harness reached the goal of 1 M executions."
  fi
} >>"$sum"
find "$f/artifacts" -type f -newer "$out/.start" >"$out/artifacts.txt"
[ -s "$out/artifacts.txt" ] && sed 's/^/artifact: /' "$out/artifacts.txt"
echo
cat "$sum"
exit $fail
