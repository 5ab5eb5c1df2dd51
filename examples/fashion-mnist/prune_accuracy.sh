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

fail() {
  echo "FAIL: $*"
  exit 1
}

for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
  t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  if [[ ! -f "$DATA/$f" ]]; then
    echo "SKIPPED: $DATA/$f is missing (install Debian's dataset-fashion-mnist: scripts/setup.sh --tests)"
    exit 0
  fi
done
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIPPED: $PY cannot import numpy (install Debian's python3-numpy: scripts/setup.sh --tests)"
  exit 0
fi
BIN=$BUILD/bin
for p in fashion-mnist-train nngraph-inspect nngraph-run; do
  [[ -x "$BIN/$p" ]] || fail "$BIN/$p is missing: build it first (cmake --build $BUILD)"
done

rm -rf "$WORK" && mkdir -p "$WORK/data" || fail "cannot create $WORK"
export OMP_NUM_THREADS=$THREADS
# Sleeping instead of spinning at OpenMP barriers: on a loaded 2-core
# machine a spinning thread holds the core its partner needs
# (quant_accuracy.sh).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
START=$SECONDS

# Runs a command with its output in $WORK/$1.log; shows the log's tail and
# fails on a non-zero exit status.
step() {
  local name=$1
  shift
  local t0=$SECONDS
  "$@" >"$WORK/$name.log" 2>&1
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "--- $name (exit $rc): $*"
    tr '\r' '\n' <"$WORK/$name.log" | tail -n 20
    fail "$name exited with status $rc"
  fi
  echo "$name: $((SECONDS - t0)) s"
}

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
"$PY" - "$WORK/data" "$CHUNK" <<'PYEOF' || fail "cannot split $WORK/data/test.npz"
import sys, numpy as np
d, chunk = sys.argv[1], int(sys.argv[2])
with np.load(f"{d}/test.npz") as f:
    (name, x), = f.items()
for i, s in enumerate(range(0, len(x), chunk)):
    np.savez(f"{d}/test.{i:03d}.npz", **{name: x[s:s + chunk]})
PYEOF
evaluate() {
  local c
  mkdir -p "$WORK/out"
  for c in "$WORK"/data/test.[0-9]*.npz; do
    "$BIN/nngraph-run" "$WORK/pruned.onnx" --backend cpu --threads "$THREADS" \
      --inputs "$c" --save-outputs "$WORK/out/$(basename "$c")" \
      --max-values 0 || return 1
  done
}
step run-pruned evaluate

"$PY" - "$WORK" "$BEFORE" "$TUNED" "$MAX_DROP" <<'PYEOF'
import glob, sys
import numpy as np
work, before, tuned, max_drop = sys.argv[1], *map(float, sys.argv[2:])
with np.load(f"{work}/data/test_labels.npz") as f:
    labels = f["labels"]
logits = []
for p in sorted(glob.glob(f"{work}/out/test.*.npz")):
    with np.load(p) as f:
        (arr,) = f.values()
        logits.append(arr)
logits = np.concatenate(logits)
if logits.shape != (len(labels), 10):
    sys.exit(f"FAIL: logits of shape {logits.shape}, expected ({len(labels)}, 10)")
graph = 100.0 * float((logits.argmax(1) == labels).mean())
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
