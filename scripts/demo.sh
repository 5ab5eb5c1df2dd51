#!/usr/bin/env bash
# Command 1 of the README: installs what is missing (scripts/setup.sh),
# builds Release into build/ and runs nngraph-demo on the bundled small CNN.
# Run from anywhere, as root or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across checkouts in different folders.
export CCACHE_BASEDIR="$PWD"

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target nngraph-demo nngraph-opt nngraph-run
build/bin/nngraph-demo
