#!/usr/bin/env bash
# ===- quant_accuracy.sh - int8 accuracy of the Fashion-MNIST models -------===#
#
# Usage: quant_accuracy.sh BUILD_DIR WORK_DIR [MODEL]
#
# The accuracy check of post-training int8 quantization (issue 16, item 6):
#   1. fashion-mnist-train --model MODEL (cnn, the default, or residual)
#      trains briefly, then --export writes the traced model as ONNX and
#      --export-data writes calib.npz (the first 500 training images),
#      test.npz (the 10,000 test images) and test_labels.npz;
#   2. nngraph-quantize quantizes it statically with --calibration
#      calib.npz, once per calibration method (minmax, entropy, percentile);
#   3. nngraph-run --backend cpu runs the float model and every int8 model
#      on the test images (in chunks) and saves the logits;
#   4. /usr/bin/python3 + numpy computes the accuracies.
# Prints the float accuracy, each method's int8 accuracy and drop, and
# fails (exit 1) when the first method's (minmax by default) drop exceeds
# 0.5 points, or when the exported float graph's accuracy differs from the
# eager model's (an export bug). The other methods are reported only.
#
# Environment (defaults in brackets): FMNIST_DATA
# [/usr/share/datasets/fashion-mnist], QUANT_TRAIN_IMAGES [0: all 60,000],
# QUANT_EPOCHS [1], QUANT_THREADS [2], QUANT_METHODS [minmax entropy
# percentile], QUANT_MAX_DROP [0.5], QUANT_CHUNK [2500], QUANT_PYTHON
# [/usr/bin/python3].
#
# Prints "SKIPPED: ..." (ctest's SKIP_REGULAR_EXPRESSION) and exits 0 when
# Debian's dataset-fashion-mnist or /usr/bin/python3 with numpy (Debian's
# python3-numpy) is missing; scripts/setup.sh --tests installs both.
#
# ===----------------------------------------------------------------------===#
set -uo pipefail

BUILD=${1:?usage: quant_accuracy.sh BUILD_DIR WORK_DIR [MODEL]}
WORK=${2:?usage: quant_accuracy.sh BUILD_DIR WORK_DIR [MODEL]}
MODEL=${3:-cnn}
DATA=${FMNIST_DATA:-/usr/share/datasets/fashion-mnist}
TRAIN_IMAGES=${QUANT_TRAIN_IMAGES:-0}
EPOCHS=${QUANT_EPOCHS:-1}
THREADS=${QUANT_THREADS:-2}
METHODS=${QUANT_METHODS:-minmax entropy percentile}
MAX_DROP=${QUANT_MAX_DROP:-0.5}
CHUNK=${QUANT_CHUNK:-2500}
# Plain "python3" may be a pyenv shim without numpy: Debian's, explicitly.
PY=${QUANT_PYTHON:-/usr/bin/python3}

# shellcheck source=accuracy_lib.sh
source "$(dirname "$0")/accuracy_lib.sh"
require_data_and_numpy
case "$MODEL" in
cnn | residual) ;;
*) fail "unknown MODEL '$MODEL' (cnn or residual)" ;;
esac
require_programs fashion-mnist-train nngraph-quantize nngraph-run
prepare_work

# 1. Train, export the model and the data.
step train "$BIN/fashion-mnist-train" --model "$MODEL" --data "$DATA" \
  --epochs "$EPOCHS" --limit-train "$TRAIN_IMAGES" --threads "$THREADS" \
  --seed 1 --export "$WORK/model.onnx" --export-data "$WORK/data"
grep -v '^epoch [0-9]*/[0-9]* \[\|^$' "$WORK/train.log" | sed 's/^/  /'
EAGER=$(sed -n 's/^epoch [0-9]*\/[0-9]*: .*test accuracy \([0-9.]*\)%.*/\1/p' "$WORK/train.log" | tail -n 1)
[[ -n "$EAGER" ]] || fail "no test accuracy in $WORK/train.log"

split_test_set

# 2. Quantize, once per method (the report of each, with the sensitivity
# table of the default method).
for m in $METHODS; do
  extra=()
  [[ $m == minmax ]] && extra=(--sensitivity)
  step "quantize-$m" "$BIN/nngraph-quantize" "$WORK/model.onnx" \
    -o "$WORK/model.int8.$m.onnx" --calibration "$WORK/data/calib.npz" \
    --method "$m" --report "$WORK/report.$m.json" "${extra[@]}"
  tr '\r' '\n' <"$WORK/quantize-$m.log" | grep -v 'calibration pass\|^$' | sed 's/^/  /'
done

# 3. Run every model on every chunk.
step run-float evaluate "$WORK/model.onnx" "$WORK/out.float"
for m in $METHODS; do
  step "run-$m" evaluate "$WORK/model.int8.$m.onnx" "$WORK/out.$m"
done

# 4. Accuracies.
echo "model: $MODEL, trained on ${TRAIN_IMAGES/#0/all 60000} images for $EPOCHS epoch(s); eager float test accuracy $EAGER%"
"$PY" - "$(dirname "$0")" "$WORK" "$EAGER" "$MAX_DROP" $METHODS <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from accuracy import accuracy as logits_accuracy, load_labels
work, eager, max_drop, methods = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
labels = load_labels(work)

def accuracy(name):
    return logits_accuracy(f"{work}/out.{name}", labels, name)

fl, fl_pred = accuracy("float")
print(f"float (graph, cpu backend): {fl:.2f}%  ({len(labels)} test images)")
status = 0
if abs(fl - eager) > 0.1:
    print(f"FAIL: the exported graph's accuracy {fl:.2f}% differs from the eager model's {eager:.2f}%")
    status = 1
for m in methods:
    q, q_pred = accuracy(m)
    drop = fl - q
    agree = 100.0 * float((q_pred == fl_pred).mean())
    gate = m == methods[0]
    verdict = ""
    if gate:
        verdict = "ok" if drop <= max_drop else f"FAIL (more than {max_drop} points)"
        if drop > max_drop:
            status = 1
    print(f"int8 {m:<10}: {q:.2f}%  drop {drop:+.2f} points, top-1 agrees with float on {agree:.2f}%  {verdict}")
sys.exit(status)
EOF
rc=$?
echo "total: $((SECONDS - START)) s"
[[ $rc -eq 0 ]] || fail "the int8 accuracy check failed (the lines above say why; logs and models in $WORK)"
echo "PASS"
