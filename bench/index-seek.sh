#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The seek index of formats that cannot seek (issue 32: TRACE.tcidx, made by
# `tracecorn index`): records textfmt64 (about 5 M instructions) as trac,
# ucir, tenet and bap, then, for each file, times `info` and `dump --from N
# --count 50` (N the last instruction but 100) reading the file itself
# (--no-index; info without an index) against through its index, and the
# time `tracecorn index` takes. The bap file is about 650 MB and the trac
# 180 MB: the script checks the free space and deletes its files at the end.
# Usage: bench/index-seek.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
T=$B/tracecorn
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
avail=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
if [ "$avail" -lt 1500 ]; then
  echo "index-seek: $avail MB free in $out, 1500 MB needed" >&2
  exit 1
fi
ms() { date +%s%N | awk '{ printf "%.0f", $1 / 1e6 }'; }
timed() { # command...: wall time in ms
  s=$(ms)
  "$@" >/dev/null 2>&1 || true
  e=$(ms)
  echo $((e - s))
}
"$T" record -q -f trac,ucir,tenet,bap -o "$out/t" -- \
  "$B/examples/guests/textfmt64" >/dev/null
"$T" record -q -f tct -o "$out/c" -- "$B/examples/guests/textfmt64" >/dev/null
n=$("$T" info "$out/c.tct" | awk '/^instructions:/ { print $2 }')
from=$((n - 100))
echo "textfmt64: $n instructions; dump --from $from --count 50; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-8s %10s %12s %12s %12s %12s %12s\n' format size "info plain" \
  "dump plain" "index build" "info idx" "dump idx"
for f in t.trace64 t.ucir t.tenet t.frames; do
  p=$out/$f
  size=$(du -m "$p" | cut -f1)
  ip=$(timed "$T" info --no-index "$p")
  dp=$(timed "$T" dump --no-index --json --from "$from" --count 50 "$p")
  ib=$(timed "$T" index "$p")
  ii=$(timed "$T" info "$p")
  di=$(timed "$T" dump --json --from "$from" --count 50 "$p")
  printf '%-8s %8s MB %9s ms %9s ms %9s ms %9s ms %9s ms\n' "${f#t.}" "$size" \
    "$ip" "$dp" "$ib" "$ii" "$di"
done
