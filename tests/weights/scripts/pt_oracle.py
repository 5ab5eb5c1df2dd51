#!/usr/bin/env python3
# ===- pt_oracle.py - torch oracle for the .pt reader/writer tests --------===#
#
# Called by tests/weights/PtTest.cpp (through PtTestUtils.cpp) with one
# command:
#   save DIR [resnet]  torch.save files into DIR (dtypes.pt, views.pt,
#                      checkpoint.pt, scalars.pt and, with "resnet", a
#                      torchvision resnet18 state dict resnet18.pt), each
#                      with a manifest NAME.json + NAME.raw describing what
#                      it holds
#   save-other DIR     legacy.pt (torch.save with
#                      _use_new_zipfile_serialization=False) and
#                      script.pt (torch.jit.save of a small module), which
#                      the reader must refuse with advice
#   check FILE...      torch.load(FILE, weights_only=True) must equal the
#                      manifest FILE.json + FILE.raw (written by the C++
#                      side): same structure, key order, dtypes, shapes,
#                      bitwise values, and tensors with the same "storage"
#                      id must share storage
# A manifest value is {"t": "tensor", "dtype", "shape", "off", "nbytes",
# "storage"} (raw bytes of the contiguous tensor at "off" in NAME.raw;
# equal "storage" ids mean the tensors share storage), {"t": "dict",
# "items": [[key, value]...], "ordered": bool}, {"t": "list"|"tuple",
# "items": [...]}, {"t": "int"|"float"|"str"|"bool", "v": ...} or
# {"t": "none"}. Exits 77 when torch is missing.
#
# ===----------------------------------------------------------------------===#
import collections
import json
import os
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover
    print("torch is not importable:", e)
    sys.exit(77)

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
          torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
          torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
          torch.bool: "bool"}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


class Manifest:
    def __init__(self):
        self.raw = bytearray()
        self.storages = {}

    def describe(self, v):
        if isinstance(v, torch.Tensor):
            ptr = v.storage().data_ptr() if v.numel() else ("empty", id(v))
            sid = self.storages.setdefault(ptr, len(self.storages))
            b = tensor_bytes(v)
            d = {"t": "tensor", "dtype": DTYPES[v.dtype],
                 "shape": list(v.shape), "off": len(self.raw),
                 "nbytes": len(b), "storage": sid}
            self.raw += b
            return d
        if isinstance(v, dict):
            return {"t": "dict", "ordered": isinstance(v, collections.OrderedDict),
                    "items": [[k, self.describe(x)] for k, x in v.items()]}
        if isinstance(v, (list, tuple)):
            return {"t": "list" if isinstance(v, list) else "tuple",
                    "items": [self.describe(x) for x in v]}
        if v is None:
            return {"t": "none"}
        if isinstance(v, bool):
            return {"t": "bool", "v": v}
        if isinstance(v, int):
            return {"t": "int", "v": v}
        if isinstance(v, float):
            return {"t": "float", "v": v}
        if isinstance(v, str):
            return {"t": "str", "v": v}
        raise TypeError(f"unsupported value {type(v)}")


def save(path, obj):
    torch.save(obj, path)
    m = Manifest()
    d = m.describe(obj)
    with open(path + ".json", "w") as f:
        json.dump(d, f)
    with open(path + ".raw", "wb") as f:
        f.write(m.raw)


def pattern(dtype, shape):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    if dtype == torch.bool:
        v = (i % 3) == 0
    elif dtype.is_floating_point:
        v = (i.to(torch.float64) * 0.5 - 3).to(dtype)
    else:
        v = (i * 7 - 11).to(dtype)
    return v.reshape(shape)


def save_all(d, resnet):
    g = torch.Generator().manual_seed(0)
    dt = collections.OrderedDict()
    for t in DTYPES:
        dt["w_" + DTYPES[t]] = pattern(t, (2, 3, 4))
    dt["scalar"] = torch.tensor(2.5)
    dt["empty"] = torch.zeros(0, 3)
    dt["big"] = torch.randn(70, 33, generator=g)  # > 4 KiB
    save(os.path.join(d, "dtypes.pt"), dt)

    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    views = collections.OrderedDict()
    views["base"] = base
    views["t"] = base.t()
    views["slice"] = base[1:3, ::2]
    views["offset"] = base.view(-1)[5:9]
    views["expand"] = torch.tensor([1.0, 2.0]).unsqueeze(1).expand(2, 3)
    views["half_t"] = pattern(torch.float16, (3, 5)).t()
    save(os.path.join(d, "views.pt"), views)

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
                                torch.nn.Linear(3, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(5, 4, generator=g)).sum().backward()
    opt.step()
    ckpt = {"model_state_dict": model.state_dict(),
            "optimizer_state_dict": opt.state_dict(), "epoch": 3,
            "loss": 0.25, "name": "run-1", "flags": [True, None, (1, -2)],
            "big_int": 1 << 40, "neg": -70000}
    save(os.path.join(d, "checkpoint.pt"), ckpt)

    if resnet:
        import torchvision
        torch.manual_seed(0)
        save(os.path.join(d, "resnet18.pt"),
             torchvision.models.resnet18().state_dict())


def save_other(d):
    torch.save({"w": torch.ones(2)}, os.path.join(d, "legacy.pt"),
               _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)),
                   os.path.join(d, "script.pt"))


def compare(got, want, raw, path, storages):
    t = want["t"]
    if t == "tensor":
        assert isinstance(got, torch.Tensor), f"{path}: not a tensor"
        assert DTYPES[got.dtype] == want["dtype"], \
            f"{path}: dtype {got.dtype} != {want['dtype']}"
        assert list(got.shape) == want["shape"], \
            f"{path}: shape {list(got.shape)} != {want['shape']}"
        b = raw[want["off"]:want["off"] + want["nbytes"]]
        assert tensor_bytes(got) == b, f"{path}: values differ"
        if got.numel():
            storages.setdefault(want["storage"], set()).add(
                got.storage().data_ptr())
        return
    if t == "dict":
        assert isinstance(got, dict), f"{path}: not a dict"
        keys = [k for k, _ in want["items"]]
        assert list(got.keys()) == keys, \
            f"{path}: keys {list(got.keys())} != {keys}"
        if want.get("ordered"):
            assert isinstance(got, collections.OrderedDict), \
                f"{path}: not an OrderedDict"
        for k, v in want["items"]:
            compare(got[k], v, raw, f"{path}/{k}", storages)
        return
    if t in ("list", "tuple"):
        assert isinstance(got, list if t == "list" else tuple), \
            f"{path}: not a {t} but {type(got)}"
        assert len(got) == len(want["items"]), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want["items"])):
            compare(g, w, raw, f"{path}/{i}", storages)
        return
    if t == "none":
        assert got is None, f"{path}: not None"
        return
    assert type(got).__name__ == t, f"{path}: {type(got).__name__} != {t}"
    assert got == want["v"], f"{path}: {got!r} != {want['v']!r}"


def check(path):
    with open(path + ".json") as f:
        want = json.load(f)
    with open(path + ".raw", "rb") as f:
        raw = f.read()
    got = torch.load(path, weights_only=True)
    storages = {}
    compare(got, want, raw, os.path.basename(path), storages)
    ptrs = [p for s in storages.values() for p in s]
    for sid, s in storages.items():
        assert len(s) == 1, f"storage {sid}: tensors do not share storage"
    assert len(set(ptrs)) == len(ptrs), "distinct storages alias"
    print("ok", path)


if __name__ == "__main__":
    if sys.argv[1] == "save":
        save_all(sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "resnet")
    elif sys.argv[1] == "save-other":
        save_other(sys.argv[2])
    elif sys.argv[1] == "check":
        for path in sys.argv[2:]:
            check(path)
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
