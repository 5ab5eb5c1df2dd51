#!/usr/bin/env bash
# Installs every Debian package nngraph needs to build and test, skipping what
# is already present. Non-interactive and idempotent; safe to run repeatedly.
# Usage: scripts/setup.sh [--tests]   (--tests adds the oracles and test data)
set -euo pipefail

# (oneDNN's CMake package needs the OpenCL headers and loader.)
BUILD_PKGS=(cmake g++ ninja-build ccache llvm-19-dev llvm-19-tools libdnnl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev
  libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libomp-dev clang python3 ocl-icd-opencl-dev opencl-c-headers)
TEST_PKGS=(libonnx-testdata python3-torch python3-torchvision python3-onnx
  python3-numpy dataset-fashion-mnist libclang-rt-14-dev)

want=("${BUILD_PKGS[@]}")
if [[ "${1:-}" == "--tests" ]]; then want+=("${TEST_PKGS[@]}"); fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#want[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
