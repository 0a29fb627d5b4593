#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on the bundled example: set up, build, record the hello
# program, print what was recorded and the start of its trace.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
./scripts/build.sh build >/dev/null
mkdir -p out
set +e
./build/tracecorn record -f tct,text -o out/hello -- \
  build/examples/guests/hello64 tracecorn example
status=$?
set -e
echo "guest exit status: $status"
echo "--- first lines of: tracecorn dump out/hello.tct"
./build/tracecorn dump out/hello.tct | head -n 25
