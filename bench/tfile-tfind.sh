#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# GDB on a tfile of a ~300k-instruction program. Records glibc64 (a static
# glibc program, 306,118 instructions) with each -O tfile.memory mode, then
# times inside GDB (best of RUNS, with Python around each command so GDB's
# own start-up is left out; wall time, and GDB's CPU time in brackets,
# which varies less on a busy machine):
#   open      `target tfile` (GDB creates one tracepoint per address)
#   tfind N   the last frame: GDB reads every frame header twice
#   tfind pc  an address no frame has, from frame 0: a search through
#             every frame
# GDB's cost is about 3 syscalls per frame per pass; the frame size
# matters little. Usage: bench/tfile-tfind.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${2:-3}
T=$B/tracecorn
G=$B/examples/guests/glibc64
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v gdb >/dev/null || { echo "needs gdb" >&2; exit 1; }
cat >"$out/time.py" <<'PY'
import time, gdb
def timed(cmd):
    t, c = time.monotonic(), time.process_time()
    try:
        gdb.execute(cmd, to_string=True)
    except gdb.error:
        pass  # a search that finds nothing ends with an error
    return time.monotonic() - t, time.process_time() - c
def report(o, n, p):
    print('@@ %.3f %.3f %.3f %.3f %.3f %.3f' % (o + n + p))
PY
ms() { date +%s%N | awk '{ printf "%.0f", $1 / 1e6 }'; }
for mode in touched stack all; do
  s=$(ms)
  "$T" record -q -f tfile -O tfile.memory=$mode -o "$out/g" -- "$G" \
    >/dev/null || true # glibc64 exits 7 without arguments
  e=$(ms)
  frames=$(gdb -batch -nx -ex "target tfile $out/g.tf" -ex tstatus 2>/dev/null |
    sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p')
  last=$((frames - 1))
  size=$(wc -c <"$out/g.tf")
  runs=""
  for _ in $(seq "$RUNS"); do
    runs="$runs
$(gdb -batch -nx -ex "source $out/time.py" \
      -ex "python o = timed('target tfile $out/g.tf')" \
      -ex "python n = timed('tfind $last')" \
      -ex "python gdb.execute('tfind start', to_string=True)" \
      -ex "python p = timed('tfind pc 0x1')" \
      -ex "python report(o, n, p)" 2>/dev/null | sed -n 's/^@@ //p')"
  done
  printf '%-8s %d frames, %d MB (%d B/frame), recorded in %d ms\n' "$mode" \
    "$frames" $((size / 1000000)) $((size / frames)) $((e - s))
  # best of the runs, per column
  echo "$runs" | awk -v last="$last" 'NF == 6 {
      for (i = 1; i <= 6; i++) if (!(i in b) || $i < b[i]) b[i] = $i }
    END { printf "         open %.2f s (cpu %.2f), tfind %d %.2f s (cpu %.2f), " \
      "tfind pc (miss) %.2f s (cpu %.2f)\n", b[1], b[2], last, b[3], b[4], \
      b[5], b[6] }'
done
