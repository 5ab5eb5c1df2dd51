#!/usr/bin/env python3
"""PyTorch side of the model-zoo tests (tests/zoo/ZooTorchTest.cpp).

Two commands, both with Debian's torch 1.13 / torchvision 0.14:

  export DIR NAME...  For each model NAME: build it with torch.manual_seed(0)
      (random init, as torchvision's constructor with weights=None), give
      every BatchNorm / LayerNorm random affine parameters and BatchNorm
      running statistics measured on random images (so a wrong mapping
      cannot hide behind 1/0 defaults), save
      DIR/NAME/state.pt (torch.save(model.state_dict())), the fixed input
      and the eval-mode output as raw files, and DIR/NAME/manifest.json with
      the key order, dtypes, shapes and repr(model) (with
      NNGRAPH_ZOO_RAW=1 also every tensor as a raw file).

  check DIR NAME...   For each model NAME: DIR/NAME/cpp.json (written by the
      C++ test: key order, raw tensors, its input and eval output) and
      DIR/NAME/cpp.pt (written by nng::weights::writeStateDict). Loads cpp.pt
      with torch.load(weights_only=True), checks the keys (order included),
      dtypes and values against the raw files, loads it into the torchvision
      model with strict=True and compares the eval output with C++'s
      (atol 1e-4, rtol 1e-5). Prints one line per model; exits 1 on any mismatch.

Exit status 77: torch/torchvision cannot be imported (the test SKIPs).
Tensor files are raw little-endian with nngraph's dtype names (f32, i64, ...).
"""
import json
import os
import sys

try:
    import numpy as np
    import torch
    import torchvision
except Exception as e:  # pragma: no cover - depends on the machine
    print(f"cannot import torch, torchvision and numpy with {sys.executable}: {e}")
    sys.exit(77)

NP_DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64,
             "i32": np.int32, "u8": np.uint8, "bool": np.bool_}
NAMES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64",
         torch.int32: "i32", torch.uint8: "u8", torch.bool: "bool"}
ATOL = 1e-4
RTOL = 1e-5  # float32 rounding in resnet50 (see ZooTorchTest.cpp)
# NNGRAPH_ZOO_RAW=1: export also writes every state_dict tensor as a raw
# file (for debugging a reader; the tests need only state.pt).
RAW = os.environ.get("NNGRAPH_ZOO_RAW") == "1"


def build(name):
    """The torchvision / torch.nn model NAME with random init."""
    if name == "mlp":
        return torch.nn.Sequential(
            torch.nn.Linear(784, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, 10))
    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(
            d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=4,
                                           enable_nested_tensor=False)
    return getattr(torchvision.models, name)(weights=None)


def example_input(name):
    """The fixed input: batch 2; 64x64 images for the CNNs."""
    g = torch.Generator().manual_seed(1234)
    if name == "mlp":
        shape = (2, 784)
    elif name == "transformer_encoder":
        shape = (2, 16, 256)
    else:
        shape = (2, 3, 64, 64)
    return torch.randn(shape, generator=g)


def randomize_norms(model, name):
    """Random BatchNorm/LayerNorm affine parameters; BatchNorm running
    statistics measured on random images (as training would leave them, so
    activations stay O(1) through deep models such as resnet50)."""
    g = torch.Generator().manual_seed(99)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=g) * 0.4 - 0.2)
        if bns:
            for m in bns:
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the batches
            model.train()
            for _ in range(2):
                model(torch.randn((4,) + tuple(example_input(name).shape[1:]),
                                  generator=g))
            for m in bns:
                m.momentum = 0.1


def save_raw(t, path):
    t = t.detach().contiguous()
    t.numpy().tofile(path)
    return {"file": os.path.basename(path), "dtype": NAMES[t.dtype],
            "shape": list(t.shape)}


def load_raw(ref, folder):
    arr = np.fromfile(os.path.join(folder, ref["file"]),
                      dtype=NP_DTYPES[ref["dtype"]])
    return torch.from_numpy(arr.reshape(ref["shape"]).copy())


def export(root, name):
    torch.manual_seed(0)
    model = build(name)
    randomize_norms(model, name)
    model.eval()
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    sd = model.state_dict()
    torch.save(sd, os.path.join(folder, "state.pt"))
    x = example_input(name)
    with torch.no_grad():
        y = model(x)
    entries = []
    for i, (k, v) in enumerate(sd.items()):
        if RAW:
            ref = save_raw(v, os.path.join(folder, f"t{i}.bin"))
        else:
            ref = {"dtype": NAMES[v.dtype], "shape": list(v.shape)}
        ref["key"] = k
        entries.append(ref)
    manifest = {
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "state": entries, "repr": repr(model),
        "input": save_raw(x, os.path.join(folder, "input.bin")),
        "output": save_raw(y, os.path.join(folder, "output.bin")),
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    print(f"{name}: {len(entries)} tensors exported")


def check(root, name):
    """Returns a list of problems (empty: all good)."""
    folder = os.path.join(root, name)
    with open(os.path.join(folder, "cpp.json")) as f:
        cpp = json.load(f)
    problems = []
    sd = torch.load(os.path.join(folder, "cpp.pt"), weights_only=True)
    keys = list(sd.keys())
    want_keys = [e["key"] for e in cpp["state"]]
    if keys != want_keys:
        problems.append(f"key order differs: torch.load gives {keys[:5]}..., "
                        f"C++ wrote {want_keys[:5]}...")
    for e in cpp["state"]:
        k = e["key"]
        if k not in sd:
            problems.append(f"{k}: missing from cpp.pt")
            continue
        want = load_raw(e, folder)
        got = sd[k]
        if got.dtype != want.dtype or list(got.shape) != list(want.shape):
            problems.append(f"{k}: {got.dtype}{list(got.shape)} in cpp.pt, "
                            f"{want.dtype}{list(want.shape)} in C++")
        elif not torch.equal(got, want):
            problems.append(f"{k}: values differ")
    model = build(name)
    try:
        model.load_state_dict(sd, strict=True)
    except Exception as ex:  # a key or shape mismatch
        problems.append(f"load_state_dict(strict=True): {ex}")
        return problems
    model.eval()
    x = load_raw(cpp["input"], folder)
    with torch.no_grad():
        y = model(x)
    want = load_raw(cpp["output"], folder)
    if list(y.shape) != list(want.shape):
        problems.append(f"output shape {list(y.shape)} vs C++ {list(want.shape)}")
    else:
        err = (y - want).abs().max().item()
        if not torch.allclose(y, want, rtol=RTOL, atol=ATOL):
            problems.append(f"output differs from C++ by up to {err:.3g} "
                            f"(atol {ATOL}, rtol {RTOL})")
    return problems


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("export", "check"):
        print(__doc__)
        return 2
    torch.set_num_threads(2)
    cmd, root, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = False
    for name in names:
        if cmd == "export":
            export(root, name)
            continue
        problems = check(root, name)
        if problems:
            failed = True
            print(f"{name}: MISMATCH")
            for p in problems:
                print(f"  {p}")
        else:
            print(f"{name}: OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
