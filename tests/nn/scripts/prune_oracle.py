#!/usr/bin/env python3
# ===- prune_oracle.py - torch.nn.utils.prune as the oracle ---------------===#
#
# Called by tests/nn/PruneTorchTest.cpp with one argument, a folder holding
# request.json: {"cases": [case...]}, each case
#   {"name": N, "module": PYTHON_EXPR, "calls": [[fn, path, name, args...]]}
# and the files the C++ side wrote for it:
#   N.init.pt   the module's state_dict before pruning
#   N.in.pt     {"x": input, and any extra tensors named in calls ("@key")}
#   N.cpp.pt    the C++ module's state_dict after the same calls
# For each case this script builds the module (torch, nn in scope), loads
# N.init.pt, seeds torch with 0, applies the calls (torch.nn.utils.prune
# functions; a call's path selects the submodule, "" the module itself;
# "global_unstructured" takes [[path, name]...], a method name and the
# amount), and writes
#   N.torch.pt      torch.save(m.state_dict())
#   N.torch_out.pt  {"y": m(x), "y_cpp": the same module rebuilt with the
#                   same calls, N.cpp.pt loaded (strict), run on x}
# Exits 77 when torch is missing.
#
# ===----------------------------------------------------------------------===#
import json
import os
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.utils.prune as prune
except ImportError as e:  # pragma: no cover
    print("torch is not importable:", e)
    sys.exit(77)


def arg(v, extra):
    if isinstance(v, str) and v.startswith("@"):
        return extra[v[1:]]
    return v


def apply_calls(m, calls, extra):
    for call in calls:
        fn = call[0]
        if fn == "global_unstructured":
            params = [(m.get_submodule(p), n) for p, n in call[1]]
            method = getattr(prune, call[2])
            prune.global_unstructured(params, pruning_method=method,
                                      amount=call[3])
            continue
        sub = m.get_submodule(call[1])
        args = [arg(a, extra) for a in call[3:]]
        if fn == "ln_structured":
            prune.ln_structured(sub, call[2], amount=args[0], n=args[1],
                                dim=args[2])
        elif fn == "random_structured":
            prune.random_structured(sub, call[2], amount=args[0], dim=args[1])
        elif fn == "custom_from_mask":
            prune.custom_from_mask(sub, call[2], mask=args[0])
        else:
            getattr(prune, fn)(sub, call[2], *args)


def build(case, folder, extra):
    m = eval(case["module"], {"torch": torch, "nn": nn})
    init = torch.load(os.path.join(folder, case["name"] + ".init.pt"),
                      weights_only=True)
    m.load_state_dict(init)
    torch.manual_seed(0)
    apply_calls(m, case["calls"], extra)
    m.eval()
    return m


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "request.json")) as f:
        request = json.load(f)
    for case in request["cases"]:
        name = case["name"]
        base = os.path.join(folder, name)
        extra = torch.load(base + ".in.pt", weights_only=True)
        m = build(case, folder, extra)
        torch.save(m.state_dict(), base + ".torch.pt")
        with torch.no_grad():
            y = m(extra["x"])
        # The C++ state dict, loaded into a module pruned the same way.
        m2 = build(case, folder, extra)
        m2.load_state_dict(torch.load(base + ".cpp.pt", weights_only=True),
                           strict=True)
        with torch.no_grad():
            y_cpp = m2(extra["x"])
        torch.save({"y": y, "y_cpp": y_cpp}, base + ".torch_out.pt")
    print("torch", torch.__version__, "ok:", len(request["cases"]), "cases")


if __name__ == "__main__":
    main()
