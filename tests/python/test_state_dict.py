"""nngraph.load_state_dict / save_state_dict from Python with NumPy as the
oracle: .npz against numpy.load and numpy.savez, safetensors against the
format's specification (an 8-byte header length, a JSON header, raw
little-endian data; the `safetensors` package is not in Debian 12),
.pt read back by nngraph (torch.load's side is tests/python/test_torch.py);
every dtype the formats share, order kept, bfloat16 widened to float32, and
errors for bad files."""

import json
import os
import struct
import unittest

import support

np = support.require("numpy", "python3-numpy")
import nngraph  # noqa: E402

DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "int32",
          "int64", "bool"]
ST_NAMES = {"float32": "F32", "float64": "F64", "float16": "F16", "int8": "I8",
            "uint8": "U8", "int16": "I16", "int32": "I32", "int64": "I64",
            "bool": "BOOL"}


def sample_dict():
    rng = np.random.default_rng(0)
    d = {}
    for i, t in enumerate(DTYPES):
        shape = [(2, 3), (4,), (), (1, 2, 2)][i % 4]
        d[f"layer{i}.{t}"] = (rng.standard_normal(shape) * 50).astype(t)
    d["empty"] = np.zeros((0, 3), np.float32)
    return d


def read_safetensors(path):
    """The tensors of a safetensors file, read as its specification says."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    inverse = {v: k for k, v in ST_NAMES.items()}
    out = {}
    for key, info in header.items():
        begin, end = info["data_offsets"]
        a = np.frombuffer(blob[8 + n + begin:8 + n + end], dtype=inverse[info["dtype"]])
        out[key] = a.reshape(info["shape"])
    return header, out


def write_safetensors(path, tensors, dtypes=None):
    """A safetensors file written as its specification says."""
    header, data = {}, b""
    for key, a in tensors.items():
        raw = np.ascontiguousarray(a).tobytes()
        name = (dtypes or {}).get(key) or ST_NAMES[a.dtype.name]
        header[key] = {"dtype": name,
                       "shape": list(a.shape),
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


class StateDictTest(support.TempDirTestCase):
    def assert_same(self, got, want):
        self.assertEqual(list(got), list(want))  # Order kept.
        for k in want:
            self.assertEqual(got[k].dtype, want[k].dtype, k)
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)

    def test_npz_against_numpy(self):
        d = sample_dict()
        nngraph.save_state_dict(self.path("a.npz"), d)
        with np.load(self.path("a.npz")) as z:
            self.assert_same({k: z[k] for k in z.files}, d)
        np.savez(self.path("b.npz"), **d)
        self.assert_same(nngraph.load_state_dict(self.path("b.npz")), d)

    def test_safetensors_against_the_specification(self):
        d = sample_dict()
        nngraph.save_state_dict(self.path("a.safetensors"), d)
        header, got = read_safetensors(self.path("a.safetensors"))
        self.assert_same(got, d)
        self.assertEqual(header["layer0.float32"]["dtype"], "F32")
        write_safetensors(self.path("b.safetensors"), d)
        back = nngraph.load_state_dict(self.path("b.safetensors"))
        self.assert_same(back, d)
        # Memory-mapped copy-on-write: a write never reaches the file.
        back["layer0.float32"][...] = 7
        again = nngraph.load_state_dict(self.path("b.safetensors"))
        np.testing.assert_array_equal(again["layer0.float32"], d["layer0.float32"])

    def test_bfloat16_is_widened_to_float32(self):
        f = np.array([1.0, -2.5, 3.140625, 2.0**100], np.float32)
        bf16 = (f.view(np.uint32) >> 16).astype(np.uint16)  # Exact for these.
        write_safetensors(self.path("bf.safetensors"), {"w": bf16}, {"w": "BF16"})
        (w,) = nngraph.load_state_dict(self.path("bf.safetensors")).values()
        self.assertEqual(w.dtype, np.float32)
        np.testing.assert_array_equal(w, f)

    def test_pt_round_trip(self):
        d = sample_dict()
        nngraph.save_state_dict(self.path("a.pt"), d)
        self.assert_same(nngraph.load_state_dict(self.path("a.pt")), d)

    def test_non_contiguous_and_torch_like_values(self):
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        d = {"t": a.T, "s": a[::2, 1::2], "l": [1.0, 2.0]}
        for ext in ("pt", "safetensors", "npz"):
            with self.subTest(ext):
                nngraph.save_state_dict(self.path(f"c.{ext}"), d)
                back = nngraph.load_state_dict(self.path(f"c.{ext}"))
                for k, v in d.items():
                    np.testing.assert_array_equal(back[k], np.asarray(v))

    def test_model_state_dict_round_trip(self):
        model = nngraph.load(support.SMALL_CNN)
        sd = model.state_dict()
        nngraph.save_state_dict(self.path("cnn.safetensors"), sd)
        self.assert_same(nngraph.load_state_dict(self.path("cnn.safetensors")), sd)

    def test_errors(self):
        with self.assertRaisesRegex(nngraph.Error, r"\.safetensors.*\.npz|extension"):
            nngraph.save_state_dict(self.path("a.json"), {"w": np.zeros(2)})
        self.assertEqual(os.listdir(self.tmp.name), [])
        with self.assertRaisesRegex(nngraph.Error, "not a str"):
            nngraph.save_state_dict(self.path("a.npz"), {1: np.zeros(2)})
        with self.assertRaisesRegex(nngraph.Error, "'w'.*complex"):
            nngraph.save_state_dict(self.path("a.npz"), {"w": np.zeros(2, np.complex64)})
        with self.assertRaisesRegex(nngraph.Error, "dict of name"):
            nngraph.save_state_dict(self.path("a.npz"), [np.zeros(2)])
        self.assertEqual(os.listdir(self.tmp.name), [])
        with open(self.path("bad.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", 1000) + b"{}")
        with self.assertRaises(nngraph.Error) as e:
            nngraph.load_state_dict(self.path("bad.safetensors"))
        self.assertIn("bad.safetensors", str(e.exception))
        with self.assertRaisesRegex(nngraph.Error, "missing.pt"):
            nngraph.load_state_dict(self.path("missing.pt"))
        nngraph.save_state_dict(self.path("flat.npz"), {"w": np.zeros(2)})
        with self.assertRaisesRegex(nngraph.Error, "flat.npz"):
            nngraph.load_state_dict(self.path("flat.npz"), key_path="model")


if __name__ == "__main__":
    unittest.main(verbosity=2)
