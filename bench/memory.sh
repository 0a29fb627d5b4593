#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Peak host memory (RSS) of a recording whose guest maps or reads a lot:
# a 1 GiB bss (bigmem64 bss) and one 256 MiB read(2) (bigmem64 read), per
# output format. The guest's own touched memory (Unicorn's pages) is part
# of every figure: 256 MiB for the read. Needs GNU time (Debian: time).
#   bench/memory.sh [BUILD_DIR] [READ_MIB]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MIB=${2:-256}
T=$B/tracecorn
G=$B/examples/guests/bigmem64
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
head -c $((MIB << 20)) /dev/urandom >"$out/in.bin"
printf '%-24s %-6s %9s %12s\n' case format seconds "peak RSS MB"
run() { # label format args...
  label=$1 fmt=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" "$T" record -q -f "$fmt" \
    -o "$out/t" -- "$G" "$@" >/dev/null
  rm -rf "$out"/t.*
  read -r secs kb <"$out/time"
  printf '%-24s %-6s %9s %12d\n' "$label" "$fmt" "$secs" $((kb / 1024))
}
for f in tct trac tfile ucir bap rvn json; do
  run "1 GiB bss" "$f" bss
done
for f in tct trac tfile ucir bap rvn json; do
  run "read of $MIB MiB" "$f" read "$out/in.bin"
done
# 4 MiB of distinct code (4 M one-byte nops, then exit(0)): the decode
# cache is bounded, so memory does not follow the code size.
head -c 4194304 /dev/zero | tr '\000' '\220' >"$out/code.bin"
printf '\270\074\000\000\000\061\377\017\005' >>"$out/code.bin"
/usr/bin/time -f "%e %M" -o "$out/time" "$T" record -q -f tct --no-memory \
  -o "$out/t" --raw "$out/code.bin" --arch x86_64 --base 0x400000 >/dev/null
read -r secs kb <"$out/time"
printf '%-24s %-6s %9s %12d\n' "4 MiB distinct code" tct "$secs" $((kb / 1024))
