#!/usr/bin/env python3
# ===- flat_oracle.py - numpy oracle for the safetensors/.npz tests -------===#
#
# Called by tests/weights/Safetensors*Test.cpp and Npz*Test.cpp (through
# FlatTestUtils.cpp) with one command:
#   write-npz DIR            np.savez / np.savez_compressed files (stored,
#                            compressed, fortran-order, big-endian)
#   check-npz FILE           np.load(FILE) must hold exactly the standard
#                            arrays, in order, with the expected values
#   write-safetensors FILE   a file built by hand following the
#                            safetensors spec the way the reference writer
#                            lays it out (sorted by dtype, then name)
#   check-safetensors FILE   parses FILE by the spec (no safetensors
#                            package needed) and checks the standard arrays
# The arrays are the same deterministic patterns FlatTestUtils.cpp makes:
# element i is i*0.5-3 (floats), the int64 i*7-11 wrapped to the type
# (integers) or i%3==0 (bool). Exits 77 when numpy is missing.
#
# ===----------------------------------------------------------------------===#
import json
import struct
import sys

try:
    import numpy as np
except ImportError as e:  # pragma: no cover
    print("numpy is not importable:", e)
    sys.exit(77)

NPY_DTYPES = [("f64", "<f8"), ("f32", "<f4"), ("f16", "<f2"), ("i64", "<i8"),
              ("i32", "<i4"), ("i16", "<i2"), ("i8", "|i1"), ("u8", "|u1"),
              ("bool", "|b1"), ("u16", "<u2"), ("u32", "<u4"), ("u64", "<u8")]
ST_NAMES = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16",
            "i64": "I64", "i32": "I32", "i16": "I16", "i8": "I8", "u8": "U8",
            "bool": "BOOL", "u16": "U16", "u32": "U32", "u64": "U64"}


def pattern(kind, shape):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    if kind == "bf16":
        f = (i * 0.5 - 3).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16).reshape(shape)
    descr = dict(NPY_DTYPES)[kind]
    if kind in ("f64", "f32", "f16"):
        v = (i * 0.5 - 3).astype(descr)
    elif kind == "bool":
        v = (i % 3) == 0
    else:
        v = (i * 7 - 11).astype(descr)
    return v.reshape(shape)


def standard(with_bf16):
    """(key, kind, shape) in the order the tests write them."""
    out = [(k, k, (2, 3)) for k, _ in NPY_DTYPES]
    if with_bf16:
        out.append(("bf16", "bf16", (2, 3)))
    out += [("scalar", "f32", ()), ("empty", "f32", (0, 3)),
            ("nested/key.w", "f32", (4,)), ("big", "f32", (3, 5, 7))]
    return out


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def check_array(key, got, kind, shape):
    want = pattern(kind, shape)
    if kind != "bf16" and got.dtype != want.dtype:
        fail(f"{key}: dtype {got.dtype}, expected {want.dtype}")
    if tuple(got.shape) != tuple(shape):
        fail(f"{key}: shape {got.shape}, expected {shape}")
    if not np.array_equal(got.view(want.dtype) if kind == "bf16" else got,
                          want):
        fail(f"{key}: values differ:\n{got}\nexpected\n{want}")


def write_npz(d):
    arrays = {k: pattern(kind, s) for k, kind, s in standard(False)}
    np.savez(f"{d}/stored.npz", **arrays)
    np.savez_compressed(f"{d}/compressed.npz", **arrays)
    np.savez(f"{d}/fortran.npz",
             f=np.asfortranarray(pattern("f32", (3, 4))),
             g=np.asfortranarray(pattern("i64", (2, 3, 4))))
    np.savez(f"{d}/bigendian.npz", f=pattern("f32", (2, 3)).astype(">f4"),
             i=pattern("i64", (5,)).astype(">i8"),
             h=pattern("f16", (3,)).astype(">f2"))
    # MLX's save_weights writes a plain np.savez-style archive of
    # "<name>.npy" entries; positional arrays get numpy's arr_N keys.
    np.savez(f"{d}/positional.npz", pattern("f32", (2,)), pattern("i32", (3,)))
    print("OK")


def check_npz(path):
    with np.load(path, allow_pickle=False) as z:
        want = standard(False)
        if z.files != [k for k, _, _ in want]:
            fail(f"keys {z.files}, expected {[k for k, _, _ in want]}")
        for k, kind, s in want:
            check_array(k, z[k], kind, s)
    print("OK")


def st_bytes(header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def write_safetensors(path):
    arrays = {k: (kind, pattern(kind, s)) for k, kind, s in standard(True)}
    # The reference writer orders by dtype size (largest first), then name.
    def size(item):
        return item[1][1].dtype.itemsize
    order = sorted(arrays.items(), key=lambda it: (-size(it), it[0]))
    header = {"__metadata__": {"format": "np", "note": "hand \"built\" ü"}}
    data = b""
    for k, (kind, a) in order:
        b = np.ascontiguousarray(a).tobytes()
        header[k] = {"dtype": ST_NAMES[kind], "shape": list(a.shape),
                     "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    with open(path, "wb") as f:
        f.write(st_bytes(header, data))
    print("OK")


def check_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    if (8 + n) % 8:
        fail(f"header length {n}: data does not start at a multiple of 8")
    text = raw[8:8 + n].decode("utf-8")
    if text.rstrip(" ") != text.rstrip():
        fail("header padding is not spaces")
    header = json.loads(text)
    meta = header.pop("__metadata__", {})
    if meta != {"format": "nngraph", "quote": "a \"b\" \\ ü"}:
        fail(f"metadata {meta}")
    data = raw[8 + n:]
    want = standard(True)
    if list(header) != [k for k, _, _ in want]:
        fail(f"keys {list(header)}, expected {[k for k, _, _ in want]}")
    spans = sorted(tuple(v["data_offsets"]) for v in header.values())
    pos = 0
    for b, e in spans:
        if b != pos:
            fail(f"offsets do not tile the buffer at {b} (expected {pos})")
        pos = e
    if pos != len(data):
        fail(f"buffer is {len(data)} bytes, tensors cover {pos}")
    inv = {v: k for k, v in ST_NAMES.items()}
    for k, kind, s in want:
        v = header[k]
        if inv[v["dtype"]] != kind:
            fail(f"{k}: dtype {v['dtype']}")
        b, e = v["data_offsets"]
        descr = "<u2" if kind == "bf16" else dict(NPY_DTYPES)[kind]
        a = np.frombuffer(data[b:e], dtype=descr).reshape(v["shape"])
        check_array(k, a, kind, s)
    print("OK")


def main():
    cmd, arg = sys.argv[1], sys.argv[2]
    {"write-npz": write_npz, "check-npz": check_npz,
     "write-safetensors": write_safetensors,
     "check-safetensors": check_safetensors}[cmd](arg)


if __name__ == "__main__":
    main()
