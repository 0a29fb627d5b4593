#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Configures and builds tracecorn into build/ (or $1) with extra cmake args.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build}
[ $# -gt 0 ] && shift
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
