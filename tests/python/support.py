"""What the Python tests share: where the checkout and the build are, a
test case with a scratch directory, running a model in ONNX Runtime through
tests/ort/run_onnx.mjs, and how a test says SKIPPED (a missing optional package) so that ctest reports it
as skipped, never as passed.

The tests run under ctest with the build's package on PYTHONPATH
(tests/CMakeLists.txt); NNGRAPH_SOURCE_DIR and NNGRAPH_BUILD_DIR name the
checkout and the build tree.
"""

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get(
    "NNGRAPH_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DIR = os.environ.get("NNGRAPH_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
SMALL_CNN = os.path.join(SOURCE_DIR, "examples", "models", "small_cnn.nng")


def skip(reason):
    """Ends the test as skipped (ctest matches "SKIPPED:")."""
    print(f"SKIPPED: {reason}")
    sys.exit(0)


def require(module, package):
    """Imports module, or skips the test naming the Debian package."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip(f"Python module '{module}' not found: install {package} "
             "(bash scripts/setup.sh --tests)")


class TempDirTestCase(unittest.TestCase):
    """A test case with a fresh scratch directory per test (self.tmp.name),
    removed afterwards; self.path(name) is a file in it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)


# nngraph's dtype names of the tensor folders run_onnx.mjs reads and writes.
_DTYPES = {"float32": "f32", "float16": "f16", "float64": "f64",
           "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
           "uint8": "u8", "uint16": "u16", "bool": "bool"}


def write_tensor_dir(folder, feeds):
    """Writes NumPy arrays as a tensor folder (tests/ort/tensor_dir.mjs):
    tensors.json and one raw file per array."""
    os.makedirs(folder, exist_ok=True)
    entries = []
    for i, (name, a) in enumerate(feeds.items()):
        file = f"t{i}.bin"
        a.tofile(os.path.join(folder, file))
        entries.append({"name": name, "dtype": _DTYPES[a.dtype.name],
                        "shape": list(a.shape), "file": file})
    with open(os.path.join(folder, "tensors.json"), "w") as f:
        json.dump({"tensors": entries}, f)


def read_tensor_dir(folder):
    """The arrays of a tensor folder, by name."""
    import numpy as np
    names = {v: k for k, v in _DTYPES.items()}
    with open(os.path.join(folder, "tensors.json")) as f:
        entries = json.load(f)["tensors"]
    return {e["name"]: np.fromfile(os.path.join(folder, e["file"]),
                                   dtype=names[e["dtype"]]).reshape(e["shape"])
            for e in entries}


def run_ort(case, model_path, feeds):
    """Runs model_path in ONNX Runtime (onnxruntime-node) on feeds, in
    case's scratch directory; returns its outputs by name. Skips the test
    when node or onnxruntime-node is missing."""
    node = os.environ.get("NNGRAPH_NODE") or shutil.which("node")
    if not node:
        skip("node is not installed (bash scripts/setup.sh --tests)")
    write_tensor_dir(case.path("in"), feeds)
    r = subprocess.run([node, os.path.join(SOURCE_DIR, "tests", "ort",
                                           "run_onnx.mjs"),
                        model_path, case.path("in"), case.path("out")],
                       capture_output=True, text=True)
    if r.returncode == 77:
        skip(r.stdout.strip() or r.stderr.strip())
    case.assertEqual(r.returncode, 0, r.stderr)
    return read_tensor_dir(case.path("out"))
