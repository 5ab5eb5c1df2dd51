# ===- accuracy_lib.sh - shared steps of the Fashion-MNIST accuracy checks -===#
#
# Sourced by quant_accuracy.sh and prune_accuracy.sh (not run on its own):
# the checks that make them say SKIPPED, the working folder and the OpenMP
# environment, a logged step runner, splitting the test set into chunks and
# running an exported model on every chunk with nngraph-run. Their Python
# steps share accuracy.py (labels, accuracy of saved logits).
#
# The caller sets BUILD, WORK, DATA, THREADS, CHUNK and PY first.
#
# ===----------------------------------------------------------------------===#

fail() {
  echo "FAIL: $*"
  exit 1
}

# Exits 0 with "SKIPPED: ..." (ctest's SKIP_REGULAR_EXPRESSION) when the
# data set or numpy is missing.
require_data_and_numpy() {
  local f
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
}

# Fails unless every named program is built; sets BIN.
require_programs() {
  local p
  BIN=$BUILD/bin
  for p in "$@"; do
    [[ -x "$BIN/$p" ]] || fail "$BIN/$p is missing: build it first (cmake --build $BUILD)"
  done
}

# A fresh $WORK (with $WORK/data), the thread count, and START.
prepare_work() {
  rm -rf "$WORK" && mkdir -p "$WORK/data" || fail "cannot create $WORK"
  export OMP_NUM_THREADS=$THREADS
  # Sleeping instead of spinning at OpenMP barriers: on a loaded 2-core
  # machine (a parallel build, ctest -j) a spinning thread holds the core
  # its partner needs, and 2-thread training runs 10 to 20 times slower.
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
  START=$SECONDS
}

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

# Splits $WORK/data/test.npz into test.NNN.npz chunks of $CHUNK images: one
# nngraph-run per chunk keeps its memory small (the cpu backend's arena for
# a 10,000-image batch is over 2 GB).
split_test_set() {
  "$PY" - "$WORK/data" "$CHUNK" <<'PYEOF' || fail "cannot split $WORK/data/test.npz"
import sys, numpy as np
d, chunk = sys.argv[1], int(sys.argv[2])
with np.load(f"{d}/test.npz") as f:
    (name, x), = f.items()
for i, s in enumerate(range(0, len(x), chunk)):
    np.savez(f"{d}/test.{i:03d}.npz", **{name: x[s:s + chunk]})
PYEOF
}

# Runs MODEL on every test chunk on the cpu backend; the logits go to
# OUT_DIR/test.NNN.npz. Usage: evaluate MODEL OUT_DIR (run it with step).
evaluate() {
  local model=$1 out=$2 c
  mkdir -p "$out"
  for c in "$WORK"/data/test.[0-9]*.npz; do
    "$BIN/nngraph-run" "$model" --backend cpu --threads "$THREADS" \
      --inputs "$c" --save-outputs "$out/$(basename "$c")" \
      --max-values 0 || return 1
  done
}
