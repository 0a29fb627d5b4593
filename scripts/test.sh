#!/bin/sh
# Sets up, builds, and runs the whole test suite twice: a normal build and
# an ASan+UBSan build.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
jobs=$(nproc)
./scripts/build.sh build
ctest --test-dir build --output-on-failure -j"$jobs"
./scripts/build.sh build-asan -DTC_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
