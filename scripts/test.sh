#!/bin/sh
# Sets up, builds, and runs the whole test suite twice: a normal build and
# an ASan+UBSan build. Both halves always run, so one report shows both;
# the script fails if either did.
set -u
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh || exit 1
jobs=$(nproc)
fail=0

run_suite() { # name build-dir cmake-args...
  name=$1 dir=$2
  shift 2
  echo "=== $name build ($dir)"
  if ! ./scripts/build.sh "$dir" -DTC_WERROR=ON "$@"; then
    echo "=== $name: BUILD FAILED"
    fail=1
    return
  fi
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$dir" --output-on-failure -j"$jobs"; then
    echo "=== $name: TESTS FAILED"
    fail=1
  fi
}

run_suite normal build
run_suite "ASan+UBSan" build-asan -DTC_SANITIZE=ON

# Every build type, and clang when present, must build warning-free (a
# newer optimiser's warning must not reach users as a broken build).
matrix="Debug Release MinSizeRel"
for bt in $matrix clang; do
  dir=build-matrix/$bt
  if [ "$bt" = clang ]; then
    command -v clang >/dev/null || { echo "=== clang not installed: skipped"; continue; }
    set -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang
  else
    set -- -DCMAKE_BUILD_TYPE="$bt"
  fi
  if cmake -S . -B "$dir" -DTC_WERROR=ON "$@" >/dev/null &&
    cmake --build "$dir" -j"$jobs" >"$dir.log" 2>&1; then
    echo "=== $bt build: ok"
  else
    cat "$dir.log" 2>/dev/null | grep -E "error|warning" | head -20
    echo "=== $bt build: FAILED (full log: $dir.log)"
    fail=1
  fi
done
# A short libFuzzer run of every harness (clang, ASan+UBSan, build-fuzz/):
# the committed regression inputs, then 30000 runs each with a fixed seed,
# so the gate is reproducible; scripts/fuzz.sh SECONDS explores for longer.
if command -v clang >/dev/null; then
  echo "=== fuzz (build-fuzz, 30000 runs per harness, seed 1)"
  if ! FUZZ_RUNS=30000 FUZZ_SEED=1 ./scripts/fuzz.sh 60 build-fuzz; then
    echo "=== fuzz: FAILED"
    fail=1
  fi
else
  echo "=== clang not installed: fuzz stage skipped"
fi
if [ "$fail" -ne 0 ]; then
  echo "test.sh: FAILED (see the reports above)"
  exit 1
fi
echo "test.sh: both builds passed"
