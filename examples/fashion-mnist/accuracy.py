# ===- accuracy.py - Top-1 accuracy of saved logits (the accuracy checks) -===#
#
# Imported by the Python steps of quant_accuracy.sh and prune_accuracy.sh
# (with /usr/bin/python3 and numpy): the test labels that
# fashion-mnist-train --export-data wrote, and the accuracy of the logits
# that nngraph-run --save-outputs wrote, one file per test chunk.
#
# ===----------------------------------------------------------------------===#

import glob
import sys

import numpy as np


def load_labels(work):
    """The test labels in WORK/data/test_labels.npz."""
    with np.load(f"{work}/data/test_labels.npz") as f:
        return f["labels"]


def accuracy(out_dir, labels, what):
    """(top-1 accuracy in %, predicted classes) of the logits in
    OUT_DIR/test.*.npz; exits with a FAIL line when they do not cover the
    labels."""
    logits = []
    for p in sorted(glob.glob(f"{out_dir}/test.*.npz")):
        with np.load(p) as f:
            (arr,) = f.values()
            logits.append(arr)
    logits = np.concatenate(logits) if logits else np.zeros((0, 10))
    if logits.shape != (len(labels), 10):
        sys.exit(f"FAIL: {what}: logits of shape {logits.shape}, "
                 f"expected ({len(labels)}, 10)")
    pred = logits.argmax(1)
    return 100.0 * float((pred == labels).mean()), pred
