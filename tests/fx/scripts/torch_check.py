#!/usr/bin/env python3
"""PyTorch's ONNX-free check of nngraph's exports: same architecture, same weights.

Used by tests/fx/OrtTestUtils.cpp. Builds the PyTorch twin of a model nngraph
traces (torchvision resnet18, or torch.nn.TransformerEncoder with 4 layers,
d_model 256, nhead 4, dim_feedforward 1024, batch_first), loads the SAME
weights by state-dict key, runs it in eval mode and writes its outputs, so
that the outputs of nngraph's ONNX export (run in ONNX Runtime) can be
compared with PyTorch without going through ONNX.

  torch_check.py run --arch A --weights W --inputs IN_DIR --out OUT_DIR
      W: a .pt/.pth file (torch.save format, e.g. written by nngraph's
      writer; loaded with weights_only=True), a .npz, or a tensor folder.
      Loading is strict, except that missing BatchNorm num_batches_tracked
      counters are allowed.
  torch_check.py make --arch A --weights-out DIR [--onnx-out M.onnx]
                      [--size N] [--seq N] [--seed S] [--opset N]
      Builds A with seeded random weights (batch norms get non-trivial
      statistics) and writes its state dict as a tensor folder; with
      --onnx-out also torch.onnx.export's it (dynamic batch dim "N",
      no constant folding or Conv+BatchNorm fusion, so initializers keep
      their state-dict names).

A tensor folder holds tensors.json ({"tensors": [{"name", "dtype", "shape",
"file"}]}, nngraph dtype names) and one raw little-endian row-major file per
tensor. Exits with status 77 and a line "SKIP: <reason>" when torch (or
torchvision, for resnet18) cannot be imported.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
SKIP_STATUS = 77
ARCHS = ("resnet18", "transformer_encoder")

try:
    import numpy as np
    import torch
except Exception as exc:  # ImportError, or a broken BLAS at import time.
    print(f"SKIP: cannot import torch/numpy with {sys.executable}: "
          f"{type(exc).__name__}: {exc}")
    sys.exit(SKIP_STATUS)

# nngraph dtype name <-> numpy dtype.
NP_OF = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
         "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "u8": np.uint8, "u16": np.uint16, "bool": np.bool_}
NAME_OF = {np.dtype(v).name: k for k, v in NP_OF.items()}


def read_dir(path):
    """A tensor folder as a list of (name, numpy array)."""
    with open(os.path.join(path, "tensors.json")) as f:
        manifest = json.load(f)
    out = []
    for t in manifest["tensors"]:
        if t["dtype"] not in NP_OF:
            raise ValueError(f"{path}: tensor {t['name']!r} has dtype "
                             f"{t['dtype']!r}, which torch_check.py cannot read")
        a = np.fromfile(os.path.join(path, t["file"]), dtype=NP_OF[t["dtype"]])
        out.append((t["name"], a.reshape(t["shape"])))
    return out


def write_dir(path, named, extra=None):
    """Writes (name, numpy array) pairs as a tensor folder."""
    os.makedirs(path, exist_ok=True)
    entries = []
    for i, (name, a) in enumerate(named):
        a = np.array(a, order="C")  # (ascontiguousarray makes 0-d 1-d)
        file = f"{i}.bin"
        a.tofile(os.path.join(path, file))
        entries.append({"name": name, "dtype": NAME_OF[a.dtype.name],
                        "shape": list(a.shape), "file": file})
    manifest = {"tensors": entries}
    manifest.update(extra or {})
    with open(os.path.join(path, "tensors.json"), "w") as f:
        json.dump(manifest, f)


def build(arch):
    """The PyTorch twin of nngraph's model ARCH (weights not yet loaded)."""
    if arch == "resnet18":
        try:
            import torchvision
        except Exception as exc:
            print(f"SKIP: cannot import torchvision with {sys.executable}: "
                  f"{type(exc).__name__}: {exc}")
            sys.exit(SKIP_STATUS)
        return torchvision.models.resnet18(weights=None)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=4,
                                       enable_nested_tensor=False)


def load_weights(path):
    """A state dict (key -> tensor) from a .pt/.pth, .npz or tensor folder."""
    if os.path.isdir(path):
        return {k: torch.from_numpy(np.array(a)) for k, a in read_dir(path)}
    if path.endswith(".npz"):
        with np.load(path) as z:
            return {k: torch.from_numpy(np.array(z[k])) for k in z.files}
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch < 1.13 has no weights_only.
        sd = torch.load(path, map_location="cpu")
    if not isinstance(sd, dict):
        raise ValueError(f"{path}: expected a state dict, got {type(sd).__name__}")
    return sd


def load_into(model, sd, path):
    """Loads SD strictly, allowing only missing num_batches_tracked."""
    own = model.state_dict()
    sd = dict(sd)
    for k, v in own.items():
        if k.endswith("num_batches_tracked") and k not in sd:
            sd[k] = v
    missing = sorted(set(own) - set(sd))
    unexpected = sorted(set(sd) - set(own))
    if missing or unexpected:
        raise ValueError(f"{path}: state dict does not match the model: "
                         f"missing {missing[:8]}, unexpected {unexpected[:8]}")
    for k, v in own.items():
        if tuple(sd[k].shape) != tuple(v.shape):
            raise ValueError(f"{path}: {k} has shape {tuple(sd[k].shape)}, "
                             f"the model wants {tuple(v.shape)}")
        sd[k] = sd[k].to(v.dtype)
    model.load_state_dict(sd, strict=True)


def cmd_run(a):
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    model = build(a.arch)
    load_into(model, load_weights(a.weights), a.weights)
    model.eval()
    inputs = [torch.from_numpy(np.array(x)) for _, x in read_dir(a.inputs)]
    with torch.no_grad():
        y = model(*inputs)
    outs = y if isinstance(y, (tuple, list)) else [y]
    write_dir(a.out, [(f"output{i}", o.detach().numpy())
                      for i, o in enumerate(outs)],
              {"torch_version": torch.__version__})
    return 0


def cmd_make(a):
    torch.manual_seed(a.seed)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    model = build(a.arch)
    gen = torch.Generator().manual_seed(a.seed + 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(c, generator=gen))
                m.weight.copy_(0.5 + torch.rand(c, generator=gen))
                m.bias.copy_(0.1 * torch.randn(c, generator=gen))
        if a.arch == "transformer_encoder":
            # TransformerEncoder deep-copies one layer: make the layers
            # differ, so that loading by key is really checked.
            for p in model.parameters():
                p.add_(0.02 * torch.randn(p.shape, generator=gen))
    model.eval()
    write_dir(a.weights_out, [(k, v.detach().numpy())
                              for k, v in model.state_dict().items()],
              {"torch_version": torch.__version__})
    if a.onnx_out:
        if a.arch == "resnet18":
            x = torch.randn(2, 3, a.size, a.size, generator=gen)
        else:
            x = torch.randn(2, a.seq, 256, generator=gen)
        torch.onnx.export(model, x, a.onnx_out, opset_version=a.opset,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                          do_constant_folding=False,
                          # PRESERVE (the model is in eval mode) skips the
                          # eval-mode Conv+BatchNorm fusion, so batch norms
                          # keep their state-dict keys.
                          training=torch.onnx.TrainingMode.PRESERVE)
    return 0


def cmd_qdq(a):
    """A small CNN quantized by PyTorch's eager static quantization
    (qnnpack: per-tensor s8 weights, u8 activations; Conv+ReLU fused),
    exported to ONNX as QDQ, with an input and torch's quantized output."""
    torch.manual_seed(a.seed)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    q = torch.ao.quantization

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = q.QuantStub(), q.DeQuantStub()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.relu = torch.nn.ReLU()
            self.conv2 = torch.nn.Conv2d(8, 4, 3, stride=2, padding=1)

        def forward(self, x):
            x = self.relu(self.conv1(self.quant(x)))
            return self.dequant(self.conv2(x))

    torch.backends.quantized.engine = "qnnpack"
    model = Net().eval()
    model.qconfig = q.get_default_qconfig("qnnpack")
    q.fuse_modules(model, [["conv1", "relu"]], inplace=True)
    prepared = q.prepare(model)
    with torch.no_grad():
        for _ in range(4):
            prepared(torch.randn(2, 3, 8, 8))
    quantized = q.convert(prepared)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        y = quantized(x)
    torch.onnx.export(quantized, x, a.onnx_out, opset_version=13,
                      input_names=["x"], output_names=["y"])
    write_dir(a.out, [("x", x.numpy()), ("y", y.numpy())],
              {"torch_version": torch.__version__})
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run ARCH with weights on inputs")
    r.add_argument("--arch", choices=ARCHS, required=True)
    r.add_argument("--weights", required=True)
    r.add_argument("--inputs", required=True)
    r.add_argument("--out", required=True)
    m = sub.add_parser("make", help="seeded weights (and an ONNX export)")
    m.add_argument("--arch", choices=ARCHS, required=True)
    m.add_argument("--weights-out", required=True)
    m.add_argument("--onnx-out", default="")
    m.add_argument("--size", type=int, default=224)
    m.add_argument("--seq", type=int, default=128)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--opset", type=int, default=17)
    qd = sub.add_parser("qdq", help="a torch-quantized CNN exported as QDQ")
    qd.add_argument("--onnx-out", required=True)
    qd.add_argument("--out", required=True)
    qd.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    return {"run": cmd_run, "make": cmd_make, "qdq": cmd_qdq}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
