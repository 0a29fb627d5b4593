#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records every example guest in every format it can hold and lists the
# outputs' SHA-256, so a refactoring can prove it changed no byte:
#   scripts/golden.sh build /tmp/before     (on the old tree)
#   scripts/golden.sh build /tmp/after      (on the new one)
#   diff /tmp/before/SHA256SUMS /tmp/after/SHA256SUMS
# Also the readers: each trace's `dump --json` hash, so a reader change
# shows too. Guests that wait for input or run long are bounded by
# --max-insns; stdin is /dev/null. Each guest's traces are hashed and
# deleted as it goes (all of them take ~10 GB); GOLDEN_KEEP=1 keeps them.
set -u
build=${1:?usage: golden.sh BUILD_DIR OUT_DIR}
out=${2:?usage: golden.sh BUILD_DIR OUT_DIR}
tc=$(cd "$build" && pwd)/tracecorn
guests=$(cd "$build/examples/guests" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/traces"
mkdir -p "$out/traces"
: >"$out/log"
: >"$out/files"
: >"$out/dumps"
# One working directory per build directory name, the same before and after
# (the traces hold the cwd and arguments: sysmix opens files in it); two
# runs at once for builds of the same name would share it, so they take
# turns (set TMPDIR to run apart).
run=${TMPDIR:-/tmp}/tracecorn-golden-$(basename "$(cd "$build" && pwd)")
exec 9>"$run.lock"
flock 9
for g in "$guests"/*; do
  [ -f "$g" ] && [ -x "$g" ] || continue
  head -c 4 "$g" | grep -q ELF || continue
  name=$(basename "$g")
  d="$out/traces/$name"
  rm -rf "$run"
  mkdir -p "$run"
  (cd "$run" && "$tc" record -q -f all --max-insns 300000 -o "$name" \
    -- "$g" </dev/null >stdout 2>stderr
  echo "$name exit $?" >>"$out/log")
  mv "$run" "$d"
  for t in "$d"/*; do
    case "$t" in
    */stdout | */stderr) continue ;;
    esac
    "$tc" dump --json "$t" 2>/dev/null | sha256sum |
      sed "s|-\$|$name/$(basename "$t").dump|" >>"$out/dumps"
  done
  (cd "$out/traces" && find "./$name" -type f | LC_ALL=C sort |
    xargs sha256sum) >>"$out/files"
  [ "${GOLDEN_KEEP:-0}" = 1 ] || rm -rf "$d"
done
LC_ALL=C sort -k2 -o "$out/SHA256SUMS" "$out/files"
rm -f "$out/files"
LC_ALL=C sort -o "$out/dumps" "$out/dumps"
cat "$out/dumps" >>"$out/SHA256SUMS"
rm -f "$out/dumps"
echo "$(wc -l <"$out/SHA256SUMS") hashes in $out/SHA256SUMS"
