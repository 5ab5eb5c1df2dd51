#!/usr/bin/env bash
# Command 1 of the README: installs what is missing (scripts/setup.sh),
# builds Release into build/ and runs nngraph-demo: the zoo's resnet18, its
# weights saved as .pt and loaded back strictly, traced with a dynamic batch,
# exported to ONNX, reloaded and run, checked against eager (prints OK, or
# MISMATCH and exits 1). Its files go to build/demo.
# Run from anywhere, as root or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across checkouts in different folders.
export CCACHE_BASEDIR="$PWD"

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target nngraph-demo nngraph-opt nngraph-run nngraph-convert
build/bin/nngraph-demo build/demo
