#!/usr/bin/env bash
# The CUDA device check on a GPU machine (tests/cuda-device): runs the
# standalone runner over the bundle of generated kernels and reports per
# kernel how the device's outputs agree with the kernel IR interpreter's.
#
#   scripts/cuda-device-check.sh [DIR]
#
# DIR (default .devcarry) holds cuda_bundle_run and bundle/ (made by
# `ninja -C build nngraph-cuda-devcarry` in build/tests/cuda-device/devcarry).
# Prints the GPUs (nvidia-smi -L, when present), then the runner's lines;
# with $OUT set, the same output also goes to $OUT/cuda-check.log. Exits
# with the runner's status: 0 when every kernel passes or when there is no
# GPU (the runner says SKIPPED), 1 on a mismatch or a driver error, 124
# when the runner takes over $CUDA_CHECK_TIMEOUT seconds (default 240).
set -uo pipefail
dir=${1:-.devcarry}

check() {
  echo "== cuda device check: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n), $(ldd --version 2>/dev/null | head -n 1)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout 30 nvidia-smi -L || true
    timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total \
      --format=csv,noheader 2>/dev/null || true
  else
    echo "nvidia-smi: not found"
  fi
  local runner=$dir/cuda_bundle_run
  if [ ! -f "$runner" ] || [ ! -d "$dir/bundle" ]; then
    echo "error: $dir lacks cuda_bundle_run or bundle/ (ninja -C build nngraph-cuda-devcarry makes both)"
    return 2
  fi
  local run=("$runner")
  if [ ! -x "$runner" ]; then # A copy that lost its mode bits.
    local copy=${TMPDIR:-/tmp}/cuda_bundle_run.$$
    if cp "$runner" "$copy" && chmod +x "$copy"; then
      run=("$copy")
    else # No writable place: the dynamic loader runs it as it is.
      run=(/lib64/ld-linux-x86-64.so.2 "$runner")
    fi
  fi
  # A kernel that never ends must not take the log with it.
  timeout "${CUDA_CHECK_TIMEOUT:-240}" "${run[@]}" "$dir/bundle" --verbose
  local rc=$?
  [ "${run[0]}" = "$runner" ] || rm -f "${TMPDIR:-/tmp}/cuda_bundle_run.$$"
  echo "== cuda_bundle_run exit status $rc"
  return $rc
}

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  check 2>&1 | tee "$OUT/cuda-check.log"
  exit "${PIPESTATUS[0]}"
fi
check 2>&1
