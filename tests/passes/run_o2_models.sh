#!/usr/bin/env bash
# Exports the -O2 benchmark models (scripts/export_models.py: torchvision
# resnet18/34/50, mobilenet_v2, vgg11_bn, a 4-layer TransformerEncoder and
# the benchmarks' 784-1024-1024-10 MLP,
# random weights) to ONNX, then runs
#   nngraph-opt -O2 --check-numerics --stats MODEL.onnx -o MODEL.opt.onnx
# on each. Fails when an export, a pass or a numeric check fails; prints
# "SKIPPED: reason" and exits 0 when torch/torchvision cannot be imported.
# Usage: run_o2_models.sh NNGRAPH_OPT WORK_DIR [SIZE]
#   SIZE: image height and width of the vision models (default 224).
# Environment: NNG_PYTHON, the Python with torch (default: the first of
#   /usr/bin/python3 and python3 that imports torch).
set -uo pipefail
OPT=$1 WORK=$2 SIZE=${3:-224}
HERE=$(cd "$(dirname "$0")" && pwd)
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
PY=${NNG_PYTHON:-}
if [[ -z $PY ]]; then
  for P in /usr/bin/python3 python3; do
    if command -v "$P" >/dev/null &&
       "$P" -c 'import torch, torchvision' >/dev/null 2>&1; then
      PY=$P; break
    fi
  done
fi
if [[ -z $PY ]]; then
  echo "SKIPPED: torch/torchvision cannot be imported (scripts/setup.sh --tests)"
  exit 0
fi
mkdir -p "$WORK"
"$PY" "$HERE/scripts/export_models.py" "$WORK" --size "$SIZE" >"$WORK/export.log" 2>&1
RC=$?
if [[ $RC -eq 3 ]]; then
  grep SKIPPED "$WORK/export.log" || echo "SKIPPED: export_models.py skipped"
  exit 0
elif [[ $RC -ne 0 ]]; then
  tail -20 "$WORK/export.log"; echo "FAIL: export_models.py exited $RC"; exit 1
fi
FAILED=0
for M in resnet18 resnet34 resnet50 mobilenet_v2 vgg11_bn transformer_encoder mlp; do
  START=$(date +%s)
  if "$OPT" -O2 --check-numerics --stats "$WORK/$M.onnx" -o "$WORK/$M.opt.onnx" \
       2>"$WORK/$M.log"; then
    echo "PASS $M ($(( $(date +%s) - START )) s)"
  else
    echo "FAIL $M (log: $WORK/$M.log)"; tail -5 "$WORK/$M.log"; FAILED=1
  fi
done
exit $FAILED
