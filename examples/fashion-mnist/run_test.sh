#!/usr/bin/env bash
# ===- run_test.sh - ctest driver for fashion-mnist-train ------------------===#
#
# Usage: run_test.sh PROGRAM WORK_DIR MODE [DATA_DIR]
#
#   MODE train:  a short training (2000 images, 1 epoch); the last line must
#                be exactly "test accuracy: NN.N%" and beat chance clearly
#                (> 50%; chance is 10%).
#   MODE resume: 1 epoch (640 images) with --checkpoint, then --resume for
#                a second one: the second run must say it resumes after
#                epoch 1, train only epoch 2, and its loss must continue
#                (below epoch 1's).
#   MODE export: the residual model (--model residual) trains briefly with
#                --export and --export-data: the ONNX file and the three
#                .npz files must be written (calib.npz with 500 images,
#                test.npz with the test images), and a --export path of an
#                unknown format must be refused (status 2) before training.
#   MODE errors: a missing data folder, a corrupt data file and a corrupt
#                checkpoint must each fail with exit status 1 and a message
#                naming the file, never crash; a bad option and
#                --export-pruned without --prune with status 2.
#
# Prints "SKIPPED: ..." (ctest's SKIP_REGULAR_EXPRESSION) and exits 0 when
# Debian's dataset-fashion-mnist is not installed.
#
# ===----------------------------------------------------------------------===#
set -uo pipefail

PROG=${1:?usage: run_test.sh PROGRAM WORK_DIR MODE [DATA_DIR]}
WORK=${2:?missing WORK_DIR}
MODE=${3:?missing MODE (train, resume, export or errors)}
DATA=${4:-/usr/share/datasets/fashion-mnist}

for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
  t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  if [[ ! -f "$DATA/$f" ]]; then
    echo "SKIPPED: $DATA/$f is missing (install Debian's dataset-fashion-mnist)"
    exit 0
  fi
done

rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
# One kernel thread: ctest runs tests side by side, and OpenMP's spinning
# barriers make an oversubscribed 2-thread run many times slower.
COMMON=(--data "$DATA" --limit-train 2000 --limit-test 2000 --batch-size 64 --threads 1 --seed 1)

fail() {
  echo "FAIL: $*"
  exit 1
}

# Runs the program, keeping stdout in $WORK/$1.out and stderr in $1.err.
run() {
  local name=$1
  shift
  "$PROG" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  echo "--- $name (exit $rc): $PROG $*"
  cat "$WORK/$name.out"
  tail -n 5 "$WORK/$name.err" | tr '\r' '\n' | tail -n 5
  return $rc
}

# Checks the last stdout line of run $1 and prints its accuracy.
accuracy_of() {
  local last
  last=$(tail -n 1 "$WORK/$1.out")
  [[ "$last" =~ ^test\ accuracy:\ ([0-9]+\.[0-9])%$ ]] ||
    fail "$1: last line is \"$last\", expected \"test accuracy: NN.N%\""
  echo "${BASH_REMATCH[1]}"
}

# The train loss of epoch $2 in run $1 (from "epoch E/N: train loss X ...").
loss_of() {
  sed -n "s/^epoch $2\/[0-9]*: train loss \([0-9.]*\).*/\1/p" "$WORK/$1.out"
}

case "$MODE" in
train)
  run train "${COMMON[@]}" --epochs 1 || fail "training exited with $?"
  acc=$(accuracy_of train) || exit 1
  awk -v a="$acc" 'BEGIN { exit !(a > 50.0) }' ||
    fail "accuracy $acc% after one short epoch does not beat chance clearly"
  echo "PASS: accuracy $acc%"
  ;;
resume)
  # Smaller than the train mode: this checks the mechanics, not accuracy.
  COMMON=(--data "$DATA" --limit-train 640 --limit-test 500 --batch-size 64 --threads 1 --seed 1)
  CK="$WORK/model.ckpt"
  run first "${COMMON[@]}" --epochs 1 --checkpoint "$CK" ||
    fail "first run exited with $?"
  [[ -f "$CK" ]] || fail "no checkpoint written at $CK"
  accuracy_of first >/dev/null || exit 1
  loss1=$(loss_of first 1)
  [[ -n "$loss1" ]] || fail "first run printed no epoch 1 line"
  run second "${COMMON[@]}" --epochs 2 --resume "$CK" --checkpoint "$CK" ||
    fail "resumed run exited with $?"
  grep -q "^resuming from .* after epoch 1" "$WORK/second.out" ||
    fail "resumed run does not say it resumes after epoch 1"
  [[ -z "$(loss_of second 1)" ]] || fail "resumed run trained epoch 1 again"
  loss2=$(loss_of second 2)
  [[ -n "$loss2" ]] || fail "resumed run printed no epoch 2 line"
  accuracy_of second >/dev/null || exit 1
  awk -v a="$loss1" -v b="$loss2" 'BEGIN { exit !(b < a) }' ||
    fail "loss did not continue: epoch 1 $loss1, resumed epoch 2 $loss2"
  echo "PASS: epoch 1 loss $loss1, resumed epoch 2 loss $loss2"
  ;;
export)
  COMMON=(--data "$DATA" --limit-train 640 --limit-test 300 --batch-size 64 --threads 1 --seed 1)
  run export "${COMMON[@]}" --model residual --epochs 1 \
    --export "$WORK/model.onnx" --export-data "$WORK/data" ||
    fail "training with --export exited with $?"
  accuracy_of export >/dev/null || exit 1
  grep -q "^exported: $WORK/model.onnx (FashionResNet, .*input x: f32\[N,1,28,28\])" "$WORK/export.out" ||
    fail "no \"exported: ...\" line naming the model and its input x: f32[N,1,28,28]"
  [[ -s "$WORK/model.onnx" ]] || fail "no $WORK/model.onnx"
  # .npz files hold the raw f32 images (no compression): at least 4 bytes
  # per pixel of 500 calibration and 300 test images.
  size() { stat -c %s "$1" 2>/dev/null || echo 0; }
  (($(size "$WORK/data/calib.npz") >= 500 * 784 * 4)) || fail "calib.npz missing or too small"
  (($(size "$WORK/data/test.npz") >= 300 * 784 * 4)) || fail "test.npz missing or too small"
  (($(size "$WORK/data/test_labels.npz") >= 300 * 8)) || fail "test_labels.npz missing or too small"
  run badexport "${COMMON[@]}" --epochs 1 --export "$WORK/model.txt"
  rc=$?
  [[ $rc -eq 2 ]] || fail "--export model.txt: exit $rc, expected 2 (usage error)"
  grep -q "model.txt.*\.onnx" "$WORK/badexport.err" ||
    fail "--export model.txt: the error does not name the file and the formats"
  echo "PASS: model and data exported"
  ;;
errors)
  # A missing data folder.
  run nodata --data "$WORK/no-such-dir" --epochs 1
  rc=$?
  [[ $rc -eq 1 ]] || fail "missing data: exit $rc, expected 1"
  grep -q "no-such-dir/train-images-idx3-ubyte.gz: no such file" "$WORK/nodata.err" ||
    fail "missing data: the error does not name the missing file"
  # A corrupt (truncated) image file.
  mkdir -p "$WORK/bad"
  cp "$DATA"/*-labels-idx1-ubyte.gz "$DATA"/t10k-images-idx3-ubyte.gz "$WORK/bad/"
  head -c 100000 "$DATA/train-images-idx3-ubyte.gz" >"$WORK/bad/train-images-idx3-ubyte.gz"
  run baddata --data "$WORK/bad" --epochs 1
  rc=$?
  [[ $rc -eq 1 ]] || fail "truncated data: exit $rc, expected 1"
  grep -q "bad/train-images-idx3-ubyte.gz: .*truncated\|bad/train-images-idx3-ubyte.gz: corrupt" "$WORK/baddata.err" ||
    fail "truncated data: the error does not say which file is broken"
  # A corrupt checkpoint.
  printf 'nngraph-fashion-mnist-checkpoint 1\nmeta 5\nepoch 1\n' >"$WORK/bad.ckpt"
  run badckpt "${COMMON[@]}" --epochs 2 --resume "$WORK/bad.ckpt"
  rc=$?
  [[ $rc -eq 1 ]] || fail "corrupt checkpoint: exit $rc, expected 1"
  grep -q "bad.ckpt: " "$WORK/badckpt.err" ||
    fail "corrupt checkpoint: the error does not name the file"
  # A bad option value.
  run badopt --epochs 0
  rc=$?
  [[ $rc -eq 2 ]] || fail "--epochs 0: exit $rc, expected 2 (usage error)"
  # --export-pruned without --prune, before any training.
  run nopruning "${COMMON[@]}" --epochs 1 --export-pruned "$WORK/p.onnx"
  rc=$?
  [[ $rc -eq 2 ]] || fail "--export-pruned without --prune: exit $rc, expected 2"
  grep -q "needs --prune" "$WORK/nopruning.err" ||
    fail "--export-pruned without --prune: the error does not say so"
  echo "PASS: errors reported cleanly"
  ;;
*)
  fail "unknown MODE $MODE (train, resume, export or errors)"
  ;;
esac
