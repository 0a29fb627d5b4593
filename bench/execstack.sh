#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Recording speed with and without an executable stack (issue 39), side by
# side: the kernels guest built twice per arch (x86-64, armhf, mips,
# mipsel), once with -z execstack, where every push and every local variable
# is a store to an executable page the recorder must check for cached code.
# Goals: the execstack run within 10 % of the other; mips/mipsel within
# 1.5x of armhf per instruction. Each figure is the best of ROUNDS runs of
# `tracecorn record -f tct` (registers + memory), rows interleaved: wall
# seconds, and CPU seconds (user + system, every thread), which a loaded
# machine moves less; ns/insn and the ratios are from CPU time.
#   bench/execstack.sh [BUILD_DIR] [ROUNDS] [KERNEL N]
# KERNEL N: an argument pair for examples/guests/kernels.c (default fib 26).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
R=${2:-3}
K=${3:-fib}
N=${4:-26}
T=$B/tracecorn
G=$B/examples/guests
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "tracecorn $(git describe --always --dirty 2>/dev/null || echo ?)," \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); kernels $K $N," \
  "tct, best of $R"

insns() { # guest -> instruction count
  $T record -f tct -o "$out/count" -- "$G/$1" "$K" "$N" 2>&1 >/dev/null |
    sed -n 's/.*: \([0-9]*\) instructions.*/\1/p'
}
secs() { # guest -> "wall cpu" seconds of one recording
  /usr/bin/time -f "%e %U %S" -o "$out/time" \
    $T record -q -f tct -o "$out/t" -- "$G/$1" "$K" "$N" >/dev/null
  rm -rf "$out"/t.*
  awk '{ print $1, $2 + $3 }' "$out/time"
}
best() { # "wall cpu" so far, new "wall cpu" -> the smaller of each
  echo "$1 $2" | awk '{ print ($3 < $1 ? $3 : $1), ($4 < $2 ? $4 : $2) }'
}

printf '%-8s %9s %7s %7s %7s %7s %8s %8s %6s\n' arch insns "wall s" "" \
  "CPU s" "" "ns/insn" "" ratio
printf '%-8s %9s %7s %7s %7s %7s %8s %8s %6s\n' "" "" plain xstack plain \
  xstack plain xstack ""
for a in 64 -armhf -mips -mipsel; do
  plain=kernels$a xs=kernels$a-execstack
  n=$(insns "$plain")
  nx=$(insns "$xs")
  p="1e9 1e9" x="1e9 1e9"
  for _ in $(seq "$R"); do
    p=$(best "$p" "$(secs "$plain")")
    x=$(best "$x" "$(secs "$xs")")
  done
  name=$(echo "$a" | sed 's/^-//; s/^64$/x86-64/')
  echo "$name $n $nx $p $x" | awk '{
    printf "%-8s %9d %7.3f %7.3f %7.3f %7.3f %8.1f %8.1f %6.2f\n", $1, $2,
      $4, $6, $5, $7, $5 / $2 * 1e9, $7 / $3 * 1e9, ($7 / $3) / ($5 / $2) }'
done | tee "$out/table"
# mips and mipsel against armhf, per instruction of CPU time
awk '$1 == "armhf" { ap = $7; ax = $8 } $1 ~ /^mips/ { p[$1] = $7; x[$1] = $8 }
  END { for (k in p) printf "%s / armhf per instruction: %.2fx plain, %.2fx xstack\n",
    k, p[k] / ap, x[k] / ax }' "$out/table" | sort
