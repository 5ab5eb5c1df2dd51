#!/usr/bin/env bash
# ===- prune_accuracy.sh - accuracy of the pruned Fashion-MNIST CNN -------===#
#
# Usage: prune_accuracy.sh BUILD_DIR WORK_DIR
#
# The fine-tuning check of structured channel pruning (issue 17, item 4):
#   1. fashion-mnist-train --model cnn trains one epoch, --prune 0.5 removes
#      half the channels of every prunable layer (nn::utils::prune_channels),
#      one epoch of eager fine-tuning follows, --export-pruned writes the
#      smaller model as ONNX (--export the unpruned one, --export-data the
#      test images);
#   2. nngraph-inspect shows both models' parameters and MACs;
#   3. nngraph-run --backend cpu runs the pruned ONNX model on the test
#      images (in chunks) and /usr/bin/python3 + numpy computes its accuracy.
# Prints the accuracy before pruning, after pruning and after fine-tuning,
# and the parameters, MACs and file size before and after; fails (exit 1)
# when the fine-tuned accuracy is more than 1 point below the unpruned one,
# or when the exported pruned graph's accuracy differs from the eager
# model's (an export bug).
#
# Environment (defaults in brackets): FMNIST_DATA
# [/usr/share/datasets/fashion-mnist], PRUNE_TRAIN_IMAGES [0: all 60,000],
# PRUNE_RATIO [0.5], PRUNE_MAX_DROP [1.0], PRUNE_THREADS [2], PRUNE_CHUNK
# [2500], PRUNE_PYTHON [/usr/bin/python3].
#
# Prints "SKIPPED: ..." (ctest's SKIP_REGULAR_EXPRESSION) and exits 0 when
# Debian's dataset-fashion-mnist or /usr/bin/python3 with numpy (Debian's
# python3-numpy) is missing; scripts/setup.sh --tests installs both.
#
# ===----------------------------------------------------------------------===#
set -uo pipefail

BUILD=${1:?usage: prune_accuracy.sh BUILD_DIR WORK_DIR}
WORK=${2:?usage: prune_accuracy.sh BUILD_DIR WORK_DIR}
DATA=${FMNIST_DATA:-/usr/share/datasets/fashion-mnist}
TRAIN_IMAGES=${PRUNE_TRAIN_IMAGES:-0}
RATIO=${PRUNE_RATIO:-0.5}
MAX_DROP=${PRUNE_MAX_DROP:-1.0}
THREADS=${PRUNE_THREADS:-2}
CHUNK=${PRUNE_CHUNK:-2500}
# Plain "python3" may be a pyenv shim without numpy: Debian's, explicitly.
PY=${PRUNE_PYTHON:-/usr/bin/python3}

# shellcheck source=accuracy_lib.sh
source "$(dirname "$0")/accuracy_lib.sh"
require_data_and_numpy
require_programs fashion-mnist-train nngraph-inspect nngraph-run
prepare_work

# 1. Train, prune, fine-tune, export.
step train "$BIN/fashion-mnist-train" --model cnn --data "$DATA" --epochs 1 \
  --limit-train "$TRAIN_IMAGES" --threads "$THREADS" --seed 1 \
  --prune "$RATIO" --finetune-epochs 1 --export "$WORK/model.onnx" \
  --export-pruned "$WORK/pruned.onnx" --export-data "$WORK/data"
grep -v '^epoch [0-9]*/[0-9]* \[\|^fine-tune [0-9]*/[0-9]* \[\|^$' "$WORK/train.log" | sed 's/^/  /'
LINE=$(grep '^accuracy: before pruning' "$WORK/train.log")
[[ -n "$LINE" ]] || fail "no accuracy line in $WORK/train.log"
BEFORE=$(sed -n 's/^accuracy: before pruning \([0-9.]*\)%.*/\1/p' <<<"$LINE")
TUNED=$(sed -n 's/.*after fine-tuning \([0-9.]*\)%.*/\1/p' <<<"$LINE")
[[ -n "$BEFORE" && -n "$TUNED" ]] || fail "cannot read the accuracies of: $LINE"

# 2. Both models as nngraph-inspect sees them.
for m in model pruned; do
  step "inspect-$m" "$BIN/nngraph-inspect" "$WORK/$m.onnx" --dim N=1
  grep -i '^parameters\|^MACs' "$WORK/inspect-$m.log" | sed "s/^/  $m.onnx: /"
done
echo "  file size: $(stat -c %s "$WORK/model.onnx") -> $(stat -c %s "$WORK/pruned.onnx") bytes"

# 3. The exported pruned model on the test set, in chunks.
split_test_set
step run-pruned evaluate "$WORK/pruned.onnx" "$WORK/out"

"$PY" - "$(dirname "$0")" "$WORK" "$BEFORE" "$TUNED" "$MAX_DROP" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
from accuracy import accuracy, load_labels
work, before, tuned, max_drop = sys.argv[2], *map(float, sys.argv[3:])
labels = load_labels(work)
graph, _ = accuracy(f"{work}/out", labels, "pruned model")
print(f"pruned ONNX model (cpu backend): {graph:.2f}%  ({len(labels)} test images)")
status = 0
if abs(graph - tuned) > 0.1:
    print(f"FAIL: the exported pruned graph's accuracy {graph:.2f}% differs from the eager model's {tuned:.2f}%")
    status = 1
drop = before - tuned
verdict = "ok" if drop <= max_drop else f"FAIL (more than {max_drop} points)"
if drop > max_drop:
    status = 1
print(f"fine-tuned pruned model: {tuned:.2f}% vs unpruned {before:.2f}%: {-drop:+.2f} points  {verdict}")
sys.exit(status)
PYEOF
rc=$?
echo "total: $((SECONDS - START)) s"
[[ $rc -eq 0 ]] || fail "the pruning accuracy check failed (the lines above say why; logs and models in $WORK)"
echo "PASS"
