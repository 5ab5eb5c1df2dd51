#!/usr/bin/env python3
"""TorchOracle.py - PyTorch's side of tests/nn/TorchOracle.h.

The C++ harness writes a folder holding request.json and raw tensor files;
this script builds each case's torch module, checks its state_dict keys
against the C++ ones, loads the C++ weights (strict), runs forward and
backward on the same inputs with the same upstream gradients (and SGD steps
when asked), and writes result.json plus raw tensor files back into the
folder. Tensors are raw little-endian row-major bytes described by
{"file", "dtype", "shape"} (dtype names as nngraph prints them: f32, f64,
i64, i32, bool, ...). A failing case records its traceback and the others
still run. Exit status 77 means torch (or numpy) cannot be imported.

Usage: TorchOracle.py FOLDER
"""
import json
import math
import os
import sys
import traceback

try:
    import numpy as np
    import torch
    from torch import nn
    import torch.nn.functional as F
except Exception as e:  # pragma: no cover - depends on the machine
    print(f"cannot import torch and numpy with {sys.executable}: {e}")
    sys.exit(77)

NP_DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16,
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "i32": np.int32,
    "i64": np.int64, "bool": np.bool_,
}
TORCH_NAMES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.bool: "bool",
}


class Folder:
    """Reads and writes the tensors of one exchange folder."""

    def __init__(self, path):
        self.path = path
        self.count = 0

    def load(self, ref):
        arr = np.fromfile(os.path.join(self.path, ref["file"]),
                          dtype=NP_DTYPES[ref["dtype"]])
        return torch.from_numpy(arr.reshape(ref["shape"]).copy())

    def save(self, t, tag):
        t = t.detach().contiguous().cpu()
        name = f"py{self.count}_{tag}.bin"
        self.count += 1
        t.numpy().tofile(os.path.join(self.path, name))
        return {"file": name, "dtype": TORCH_NAMES[t.dtype],
                "shape": list(t.shape)}


def flatten(out):
    """The tensors of a module's result, in order (None entries dropped)."""
    if out is None:
        return []
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flatten(v)]
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in flatten(v)]
    return []


def describe(m):
    """What every case reports about the module it built."""
    sd = m.state_dict()
    return {
        "keys": list(sd.keys()),
        "state_dtypes": {k: TORCH_NAMES.get(v.dtype, str(v.dtype))
                         for k, v in sd.items()},
        "state_shapes": {k: list(v.shape) for k, v in sd.items()},
        "param_names": [n for n, _ in m.named_parameters()],
        "buffer_names": [n for n, _ in m.named_buffers()],
        "module_names": [n for n, _ in m.named_modules()],
        "num_params": sum(p.numel() for p in m.parameters()),
        "repr": repr(m),
    }


def init_stats(m):
    """Statistics of the default initialization, per state_dict entry."""
    stats = {}
    for k, v in m.state_dict().items():
        d = v.detach().double().flatten()
        n = d.numel()
        stats[k] = {
            "numel": n,
            "mean": d.mean().item() if n else 0.0,
            "std": d.std(unbiased=False).item() if n else 0.0,
            "min": d.min().item() if n else 0.0,
            "max": d.max().item() if n else 0.0,
        }
    return stats


def run_case(folder, case, ns):
    torch.manual_seed(case.get("seed", 0))
    m = eval(case["module"], ns)
    env = dict(ns, m=m)
    for stmt in case.get("setup", []):
        exec(stmt, env)
    m = env["m"]
    res = describe(m)
    kind = case["kind"]
    if kind == "describe":
        return res
    if kind == "init":
        res["init_stats"] = init_stats(m)
        return res
    sd = {k: folder.load(r) for k, r in case["state"]}
    if kind == "load":
        try:
            r = m.load_state_dict(sd, strict=False)
            res["missing"] = list(r.missing_keys)
            res["unexpected"] = list(r.unexpected_keys)
            res["nonstrict_error"] = ""
        except Exception as e:
            res["nonstrict_error"] = str(e)
        try:
            m.load_state_dict(sd, strict=True)
            res["strict_error"] = ""
        except Exception as e:
            res["strict_error"] = str(e)
        return res
    cpp_keys = [k for k, _ in case["state"]]
    if res["keys"] != cpp_keys:
        res["error"] = ("state_dict keys differ from PyTorch's\n  C++:   "
                        f"{cpp_keys}\n  torch: {res['keys']}")
        return res
    m.load_state_dict(sd, strict=True)
    m.train(case["train"])
    x = [folder.load(r) for r in case["inputs"]]
    for t, rg in zip(x, case["requires_grad"]):
        if rg:
            t.requires_grad_(True)
    grads = [folder.load(r) for r in case["out_grads"]]
    opt = None
    if case.get("sgd"):
        opt = torch.optim.SGD(m.parameters(), **case["sgd"])
    outs = []
    for _ in range(case.get("steps", 1)):
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        for t in x:
            t.grad = None
        outs = flatten(eval(case["call"], dict(ns, m=m, x=x)))
        if len(outs) != len(grads):
            raise RuntimeError(f"torch gave {len(outs)} output tensors, C++ "
                               f"gave {len(grads)}")
        pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs],
                                    [g.to(o.dtype) for o, g in pairs])
        if opt is not None:
            opt.step()
    res["outputs"] = [folder.save(o, "out") for o in outs]
    res["input_grads"] = [folder.save(t.grad, "gin") if t.grad is not None
                          else None for t in x]
    res["param_grads"] = {n: folder.save(p.grad, "gparam")
                          for n, p in m.named_parameters()
                          if p.grad is not None}
    res["state_after"] = {k: folder.save(v, "state")
                          for k, v in m.state_dict().items()}
    return res


def main():
    folder = Folder(sys.argv[1])
    with open(os.path.join(folder.path, "request.json")) as f:
        req = json.load(f)
    torch.set_grad_enabled(True)
    ns = {"torch": torch, "nn": nn, "F": F, "math": math}
    exec(req.get("prelude", ""), ns)
    results = []
    for case in req["cases"]:
        try:
            results.append(run_case(folder, case, ns))
        except Exception:
            results.append({"error": traceback.format_exc()})
    with open(os.path.join(folder.path, "result.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "cases": results}, f)


if __name__ == "__main__":
    main()
