#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Unicorn engines side by side (issue 37): bench_speed from one build per
# engine, each on the same guests, then one table of M insn/s per
# workload, row and engine. Build the engines first, e.g.
#   cmake -S . -B build-rel211 -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
#     -DTC_UNICORN_PREFIX=$(scripts/fetch-unicorn.sh 2.1.1)
#   cmake --build build-rel211 --target bench_speed
#   bench/engines.sh [GUEST-BUILD] LABEL=BUILD-DIR ...
# e.g. bench/engines.sh build 2.0.1=build-rel201 2.1.1=build-rel211 \
#   2.1.4=build-rel214. GUEST-BUILD (default build) holds examples/guests.
# PARALLEL=1 runs the engines at the same time (a many-core machine: each
# keeps a core); by default they run one after the other. ROUNDS (3).
set -eu
cd "$(dirname "$0")/.."
G=build/examples/guests
case "${1:-}" in
*=*) ;;
?*)
  G=$1/examples/guests
  shift
  ;;
esac
[ $# -ge 1 ] || {
  echo "usage: bench/engines.sh [GUEST-BUILD] LABEL=BUILD-DIR..." >&2
  exit 2
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
labels=
for e in "$@"; do
  label=${e%%=*}
  dir=${e#*=}
  labels="$labels $label"
  run() {
    "$dir/bench_speed" -r "${ROUNDS:-3}" -f tct \
      -- "$G/kernels64" fib 24 -- "$G/kernels64" sha256 1000 \
      -- "$G/kernels64" qsort 20000 -- "$G/fib64" 24 \
      -- "$G/strsort64" 3000 -- "$G/textfmt64" 700 >"$out/$label.txt"
  }
  if [ "${PARALLEL:-0}" = 1 ]; then run & else run; fi
done
wait
echo "tracecorn $(git describe --always --dirty 2>/dev/null || echo ?)," \
  "$(nproc) cores, M insn/s (median of ${ROUNDS:-3} rounds)"
# One line per workload and row: the engines' M insn/s side by side.
for label in $labels; do
  awk -v e="$label" '/^## /{ sub(/^## /, ""); w = $0 }
    /^\| (unicorn|unicorn\+code|unicorn\+code\+mem|recorder \(null sink\)|tct) / {
      split($0, c, "|"); gsub(/^ +| +$/, "", c[2]); gsub(/ /, "", c[4])
      print w "|" c[2] "|" e "|" c[4] }' "$out/$label.txt"
done | awk -F'|' -v labels="$labels" '
  BEGIN { n = split(labels, L, " ")
    printf "| workload | row |"; for (i = 1; i <= n; i++) printf " %s |", L[i]
    printf "\n|---|---|"; for (i = 1; i <= n; i++) printf "--:|"; print "" }
  { k = $1 "|" $2; if (!(k in seen)) { seen[k] = 1; order[++m] = k } v[k "|" $3] = $4 }
  END { for (j = 1; j <= m; j++) { split(order[j], p, "|")
      printf "| %s | %s |", p[1], p[2]
      for (i = 1; i <= n; i++) printf " %s |", v[order[j] "|" L[i]]
      print "" } }'
