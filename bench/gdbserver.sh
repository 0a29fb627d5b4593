#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tracecorn gdbserver on a long recording (issue 33): records loop64 to
# about 100 M instructions (12,500,000 iterations; or give a trace), then
# times, with gdb-multiarch in batch mode over a pipe, each step of a
# session twice: without an index file (the first start: the trace is
# indexed as far as each command needs, the rest while gdb is idle) and
# again with the TRACE.gdbidx that `--stats` writes in between (engine
# only: it builds the whole index, times seeks, reverse steps and full
# scans). In the first session a seek past the part indexed is a far seek
# (the tct's chunk memory summaries: one chunk decoded, no index) and a
# run goes through the chunks' filters (only the chunks that can hold a
# stop are decoded, no index). About 1.4 GB of disk for the default
# recording and its index file; deleted at the end.
# Usage: bench/gdbserver.sh [BUILD_DIR] [ITERATIONS | TRACE.tct]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-12500000}
T=$(realpath "$B/tracecorn")
G=$(realpath "$B/examples/guests/loop64")
GDB=$(command -v gdb-multiarch || command -v gdb)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
case $N in
*.tct) cp "$N" "$out/t.tct" ;;
*)
  avail=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
  need=$((N / 8000 + 200)) # MB: trace and index file, with margin
  if [ "$avail" -lt "$need" ]; then
    echo "gdbserver.sh: $avail MB free in $out, $need MB needed" >&2
    exit 1
  fi
  "$T" record -q -o "$out/t" -- "$G" "$N" >/dev/null
  ;;
esac
f=$out/t.tct
insns=$("$T" info "$f" | sed -n 's/^instructions: *//p')
mid=$((insns / 2))
echo "loop64: $insns instructions, $(stat -c %s "$f") bytes of tct"
session() { # label
  echo "$1:"
  "$GDB" -nx -batch "$G" \
    -ex 'python
import time
def T(label, cmd):
    t = time.time()
    gdb.execute(cmd, to_string=True)
    d = time.time() - t
    info = gdb.execute("monitor info", to_string=True)
    at = [l for l in info.splitlines() if l.startswith("position")][0]
    at = at.split(" of ")[0]
    print("  %-46s %7.3f s  (%s)" % (label, d, at))' \
    -ex "python T('target remote (start, position 0)', 'target remote | $T gdbserver -q --stdio $f')" \
    -ex "python T('monitor seek $mid + registers', 'monitor seek $mid')" \
    -ex 'maintenance flush register-cache' -ex 'python gdb.execute("info registers rip", to_string=True)' \
    -ex "python T('  then x/64xg \$sp, x/8xg &sink, bt (memory)', 'x/64xg \$sp - 256')" \
    -ex 'python gdb.execute("x/8xg &sink", to_string=True); gdb.execute("bt", to_string=True)' \
    -ex "python T('monitor seek $insns (the end)', 'monitor seek $insns')" \
    -ex 'maintenance flush register-cache' \
    -ex 'break *cmain' \
    -ex "python T('reverse-continue to cmain (whole trace)', 'reverse-continue')" \
    -ex 'delete' \
    -ex "python T('monitor seek $insns (the end)', 'monitor seek $insns')" \
    -ex 'maintenance flush register-cache' \
    -ex 'watch *(long *)((char *)&sink + 40)' \
    -ex "python T('watch sink[5] + reverse-continue', 'reverse-continue')" \
    -ex 'delete' \
    -ex "python T('monitor seek $insns (the end)', 'monitor seek $insns')" \
    -ex 'maintenance flush register-cache' \
    -ex 'watch *(long *)((char *)&sink - 64)' \
    -ex "python T('watch a word never written + reverse-continue', 'reverse-continue')" \
    -ex 'delete' \
    -ex "python T('monitor seek 100', 'monitor seek 100')" \
    -ex 'maintenance flush register-cache' \
    -ex 'break *_start' \
    -ex "python T('continue to the end (break never hit)', 'continue')" \
    -ex 'delete' \
    -ex "python T('monitor seek $mid', 'monitor seek $mid')" \
    -ex 'maintenance flush register-cache' \
    -ex 'watch *(long *)((char *)&sink + 40)' \
    -ex "python T('  then stepi x100 with a watch', 'stepi 100')" \
    -ex "python T('  then reverse-stepi x100', 'reverse-stepi 100')" \
    -ex 'kill' 2>&1 | grep -E '^  |rror' || true
}
rm -f "$f.gdbidx"
s=$(date +%s)
session "first start (no index file)"
echo "  (session $(($(date +%s) - s)) s; index file $(stat -c %s "$f.gdbidx" 2>/dev/null || echo none) bytes)"
echo "--stats (engine; builds the index and writes its file unless there):"
"$T" gdbserver --stats "$f" 2>/dev/null | sed 's/^/  /'
echo "  (index file $(stat -c %s "$f.gdbidx" 2>/dev/null || echo none) bytes)"
session "next start (index file read)"
