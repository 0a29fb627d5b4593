#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Byte-identity check for speed work on the tct writer (bench/tct_diff.c):
# random event streams written by writers/tct/tct.c of REV (default: HEAD) and
# by BUILD_DIR's library must give identical files, read back alike.
# Also under ASan: give a build-asan directory and CFLAGS=-fsanitize=...
#   bench/tct-diff.sh [REV] [BUILD_DIR] [STREAMS]
set -eu
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
B=${2:-build}
n=${3:-140}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git show "$rev:writers/tct/tct.c" >"$tmp/tct_base.c"
# shellcheck disable=SC2086 # CFLAGS may hold several flags
cc -O1 -g ${CFLAGS:-} -D_GNU_SOURCE -Dtc_format_tct=tc_format_tct_base \
  -Iinclude -I. -I"$B/gen" -std=c11 -c "$tmp/tct_base.c" -o "$tmp/tct_base.o"
# shellcheck disable=SC2046,SC2086
cc -O1 -g ${CFLAGS:-} -D_GNU_SOURCE -Iinclude -std=c11 -Wall -Wextra \
  -o "$tmp/tct_diff" bench/tct_diff.c "$tmp/tct_base.o" "$B/libtracecorn.a" \
  $(pkg-config --libs unicorn capstone libzstd snappy libprotobuf-c) \
  -lpthread -lm
"$tmp/tct_diff" "$n" "$tmp"
