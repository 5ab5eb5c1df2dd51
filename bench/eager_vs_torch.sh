#!/usr/bin/env bash
# ===- eager_vs_torch.sh - nngraph eager vs PyTorch eager ------------------===#
#
# Sets up the environment both libraries read when they load (the thread
# count, OpenBLAS for Debian's torch, per docs/design.md "Performance
# method"), then runs eager_vs_torch.py with Debian's python3 (the one with
# python3-torch). Usage:
#
#   bench/eager_vs_torch.sh BUILD_DIR [--threads N] [--repetitions R] ...
#
# BUILD_DIR must hold bin/nngraph-bench-eager (a Release build).
#
# ===----------------------------------------------------------------------===#
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 BUILD_DIR [--threads N] [--repetitions R] [--min-time S]" >&2
  exit 2
fi
BUILD_DIR=$1
shift
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH="$BUILD_DIR/bin/nngraph-bench-eager"
if [[ ! -x "$BENCH" ]]; then
  echo "eager_vs_torch: $BENCH not found; build it first:" >&2
  echo "  cmake --build $BUILD_DIR --target nngraph-bench-eager" >&2
  exit 1
fi

# --threads is ours (it sets OMP_NUM_THREADS); the rest go to the script.
THREADS=2
rest=()
while [[ $# -gt 0 ]]; do
  case "$1" in
  --threads) THREADS=${2:?--threads needs a value}; shift 2 ;;
  --threads=*) THREADS=${1#--threads=}; shift ;;
  *) rest+=("$1"); shift ;;
  esac
done
export OMP_NUM_THREADS=$THREADS
# OpenBLAS 0.3.21 does not recognise these CPUs; without a core type it falls
# back to slow generic kernels. SkylakeX (docs/design.md) needs AVX-512 and
# dies with SIGILL without it (AMD Zen 3 machines have AVX2 only): pick by
# the CPU's flags unless the caller set one.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  if grep -qw avx512f /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi
# Debian's torch links libblas.so.3, which is the slow reference BLAS unless
# an OpenBLAS package provides it. Prefer the OpenMP OpenBLAS when installed
# (libopenblas0-openmp), whatever the system-wide alternative says.
# NNGRAPH_OPENBLAS_DIR may name another folder holding its libblas.so.3 (e.g.
# the package unpacked with dpkg -x, without installing it).
for dir in ${NNGRAPH_OPENBLAS_DIR:-} /usr/lib/x86_64-linux-gnu/openblas-openmp \
  /usr/lib/x86_64-linux-gnu/openblas-pthread; do
  if [[ -e "$dir/libblas.so.3" ]]; then
    export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    break
  fi
done
if [[ -z "${LD_LIBRARY_PATH:-}" || "$LD_LIBRARY_PATH" != *openblas* ]]; then
  echo "eager_vs_torch: warning: no OpenBLAS found; PyTorch's linear layers" \
    "will use the reference BLAS (install libopenblas0-openmp)" >&2
fi

exec /usr/bin/python3 "$HERE/eager_vs_torch.py" --nngraph-bench "$BENCH" \
  --threads "$THREADS" "${rest[@]}"
