"""PyTorch as the oracle of nng's tensor ops and nng::F functions.

Usage: torch_functional_oracle.py REQUEST RESULT

REQUEST is a text file of lines:
  tensor NAME DTYPE NDIM DIMS... VALUES...   (DTYPE f32, f64, i64 or bool)
  case NAME INDEX NGRAD GRADNAMES...
  expr PYTHON-EXPRESSION
A case's tensors are the ones named "CASE.VAR"; the expression sees them
as VAR, with torch, F (torch.nn.functional) and math in scope. Tensors
listed in GRADNAMES require grad. The expression returns a tensor or a
tuple of tensors; sum(outputs[0] * G) is differentiated, where G holds
sin(0.7 k + 1.3 INDEX + 0.1) at flat position k (as in the C++ harness).

RESULT gets lines "out CASE INDEX DTYPE NDIM DIMS... VALUES..." and
"grad CASE VAR DTYPE NDIM DIMS... VALUES...", or "error CASE MESSAGE".
Exits with 77 when torch cannot be imported.
"""
import math
import sys

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    print("SKIPPED: cannot import torch with %s: %s" % (sys.executable, e))
    sys.exit(77)

DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64,
          "bool": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}


def parse_tensor(parts):
    name, dt, ndim = parts[0], parts[1], int(parts[2])
    dims = [int(d) for d in parts[3:3 + ndim]]
    vals = parts[3 + ndim:]
    if dt in ("f32", "f64"):
        data = [float(v) for v in vals]
    else:
        data = [int(v) for v in vals]
    t = torch.tensor(data, dtype=DTYPES[dt]).reshape(dims)
    return name, t


def fmt(t):
    t = t.detach()
    dt = NAMES.get(t.dtype)
    if dt is None:
        t = t.double()
        dt = "f64"
    flat = t.reshape(-1).tolist()
    if dt in ("f32", "f64"):
        vals = [repr(float(v)) for v in flat]
    else:
        vals = [str(int(v)) for v in flat]
    return " ".join([dt, str(t.dim())] + [str(d) for d in t.shape] + vals)


def main():
    torch.set_num_threads(2)
    tensors, cases = {}, []
    with open(sys.argv[1]) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if parts[0] == "tensor":
                name, t = parse_tensor(parts[1:])
                tensors[name] = t
            elif parts[0] == "case":
                n = int(parts[3])
                cases.append({"name": parts[1], "index": int(parts[2]),
                              "grads": parts[4:4 + n]})
            elif parts[0] == "expr":
                cases[-1]["expr"] = line.rstrip("\n")[5:]
    out = []
    for c in cases:
        name = c["name"]
        env = {"torch": torch, "F": F, "math": math}
        prefix = name + "."
        for k, t in tensors.items():
            if k.startswith(prefix):
                var = k[len(prefix):]
                t = t.clone()
                if var in c["grads"]:
                    t.requires_grad_(True)
                env[var] = t
        try:
            r = eval(c["expr"], env)  # noqa: S307 - test-authored expressions
            outs = list(r) if isinstance(r, (tuple, list)) else [r]
            for i, o in enumerate(outs):
                out.append("out %s %d %s" % (name, i, fmt(o)))
            if c["grads"] and outs[0].requires_grad:
                k = torch.arange(outs[0].numel(), dtype=torch.float64)
                g = torch.sin(0.7 * k + 1.3 * c["index"] + 0.1)
                g = g.reshape(outs[0].shape).to(outs[0].dtype)
                (outs[0] * g).sum().backward()
                for var in c["grads"]:
                    gr = env[var].grad
                    if gr is None:
                        gr = torch.zeros_like(env[var])
                    out.append("grad %s %s %s" % (name, var, fmt(gr)))
        except Exception as e:  # noqa: BLE001
            out.append("error %s %s" % (name, str(e).replace("\n", " ")))
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


main()
