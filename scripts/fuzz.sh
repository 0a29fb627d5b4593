#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the libFuzzer harnesses with clang in build-fuzz/ (ASan+UBSan,
# seed corpus recorded from the example guests) and runs every harness for
# SECONDS each (default 600), one after the other. The corpus grows in
# build-fuzz/fuzz/corpus/<harness>; crashes are written to
# build-fuzz/fuzz/artifacts/. Exits 1 if any harness found a crash, leak,
# timeout or out-of-memory. HARNESSES="tct rvn" picks some.
#   scripts/fuzz.sh [SECONDS] [BUILD-DIR]
set -u
cd "$(dirname "$0")/.."
secs=${1:-600}
dir=${2:-build-fuzz}
harnesses=${HARNESSES:-"elf tct tctraw trac tfile ucir bap rvn drcov tenet gdbrsp"}
command -v clang >/dev/null || { echo "fuzz.sh: clang is not installed"; exit 1; }
./scripts/build.sh "$dir" -DCMAKE_C_COMPILER=clang -DTC_FUZZ=ON \
  -DTC_WERROR=ON -DBUILD_TESTING=OFF || exit 1
f=$dir/fuzz
mkdir -p "$f/artifacts"
fail=0
for h in $harnesses; do
  mkdir -p "$f/corpus/$h"
  # The committed regression inputs first, then fuzz from corpus + seeds.
  if [ -d "tests/fuzz/regress/$h" ] &&
    ! "$f/fuzz_$h" tests/fuzz/regress/"$h"/* >"$f/$h.regress.log" 2>&1; then
    echo "=== fuzz $h: a regression input fails (log: $f/$h.regress.log)"
    fail=1
  fi
  # FUZZ_RUNS (with FUZZ_SEED, default 1) makes a run reproducible: CI
  # uses it, so its gate never depends on the machine's speed or luck.
  if [ -n "${FUZZ_RUNS:-}" ]; then
    limit="-runs=$FUZZ_RUNS -seed=${FUZZ_SEED:-1}"
  else
    limit="-max_total_time=$secs"
  fi
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$f/fuzz_$h" $limit -timeout=10 -rss_limit_mb=2048 \
    -max_len=262144 -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$f/artifacts/$h-" "$f/corpus/$h" "$f/seeds/$h" \
    >"$f/$h.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$f/$h.log")
  if [ "$rc" -ne 0 ]; then
    grep -E "ERROR|SUMMARY|runtime error" "$f/$h.log" | head -5
    echo "=== fuzz $h: FAILED after ${runs:-?} runs (log: $f/$h.log)"
    fail=1
  else
    echo "=== fuzz $h: ${runs:-?} runs, no crash"
  fi
done
exit $fail
