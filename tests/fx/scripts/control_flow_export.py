#!/usr/bin/env python3
"""A small PyTorch model with data-dependent control flow, exported to ONNX.

Used by tests/fx/ControlFlowOrtTest.cpp. torch.jit.script keeps Python's
`while` and `if` on tensor values, so torch.onnx.export writes them as ONNX
Loop and If nodes whose bodies read outer values (the weights, the input):

  control_flow_export.py OUT_DIR [--opset N]

writes OUT_DIR/model.onnx, OUT_DIR/inputs (a tensor folder holding "x" and
"steps") and OUT_DIR/expected (PyTorch's outputs for those inputs). A tensor
folder holds tensors.json ({"tensors": [{"name", "dtype", "shape", "file"}]},
nngraph dtype names) and one raw little-endian row-major file per tensor.
Exits with status 77 and a line "SKIP: <reason>" when torch cannot be
imported.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
SKIP_STATUS = 77

try:
    import numpy as np
    import torch
except Exception as exc:  # ImportError, or a broken BLAS at import time.
    print(f"SKIP: cannot import torch/numpy with {sys.executable}: "
          f"{type(exc).__name__}: {exc}")
    sys.exit(SKIP_STATUS)

NAME_OF = {"float32": "f32", "int64": "i64", "bool": "bool"}


def write_dir(path, named):
    os.makedirs(path, exist_ok=True)
    entries = []
    for i, (name, a) in enumerate(named):
        a = np.array(a, order="C")  # ascontiguousarray makes scalars 1-D.
        fname = f"t{i}.bin"
        a.tofile(os.path.join(path, fname))
        entries.append({"name": name, "dtype": NAME_OF[a.dtype.name],
                        "shape": list(a.shape), "file": fname})
    with open(os.path.join(path, "tensors.json"), "w") as f:
        json.dump({"tensors": entries}, f)


class Halve(torch.nn.Module):
    """Halves x while its magnitude is large (a while loop: Loop with a
    condition), at most `steps` times (Loop's trip count), then takes one of
    two branches on the sign of the mean (If), and collects the norm of
    every step (a loop-carried list: concatenated)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.scale = torch.nn.Parameter(torch.tensor([0.5, 1.5, -1.0, 2.0]))

    def forward(self, x, steps):
        y = x
        norms = torch.zeros(0)
        i = 0
        while bool(y.abs().sum() > 1.0) and i < int(steps):
            y = torch.tanh(self.lin(y)) * self.scale
            norms = torch.cat([norms, y.abs().sum().reshape(1)])
            i += 1
        if bool(y.mean() > 0):
            out = self.lin(y) + x
        else:
            out = y * self.scale - x
        return out, norms


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--opset", type=int, default=16)
    a = p.parse_args()
    torch.manual_seed(0)
    m = torch.jit.script(Halve().eval())
    x = torch.randn(2, 4) * 3
    steps = torch.tensor(5, dtype=torch.int64)
    with torch.no_grad():
        out, norms = m(x, steps)
    os.makedirs(a.out, exist_ok=True)
    torch.onnx.export(m, (x, steps), os.path.join(a.out, "model.onnx"),
                      input_names=["x", "steps"], output_names=["out", "norms"],
                      opset_version=a.opset)
    write_dir(os.path.join(a.out, "inputs"),
              [("x", x.numpy()), ("steps", steps.numpy())])
    write_dir(os.path.join(a.out, "expected"),
              [("out", out.numpy()), ("norms", norms.numpy())])
    print("torch", torch.__version__)


if __name__ == "__main__":
    main()
