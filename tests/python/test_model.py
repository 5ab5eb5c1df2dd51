"""nngraph.Model from Python: load and save (.onnx, .nng), the text
format, inputs and outputs, copies, the initializers as NumPy arrays, and
the passes (optimize, prune, quantize) and inspect, on the bundled small
CNN; errors raise nngraph.Error with the library's message and leave the
model unchanged."""

import os
import pathlib
import unittest

import support

np = support.require("numpy", "python3-numpy")
import nngraph  # noqa: E402


def run(model, x, backend="cpu"):
    return model.compile(backend).run(None, {"x": x})[0]


def images(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 1, 28, 28)).astype(np.float32)


class ModelTest(support.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.model = nngraph.load(support.SMALL_CNN)

    def test_inputs_and_outputs(self):
        (x,) = self.model.inputs
        self.assertEqual((x.name, x.dtype, x.shape), ("x", "float32", ["N", 1, 28, 28]))
        (y,) = self.model.outputs
        self.assertEqual((y.name, y.shape, y.type), ("y", ["N", 10], "f32[N,10]"))
        self.assertEqual(self.model.name, "small_cnn")
        self.assertEqual(self.model.num_nodes, 10)
        self.assertIn("small_cnn", repr(self.model))

    def test_save_and_load_round_trip(self):
        x = images(3)
        want = run(self.model, x)
        for name in ("m.onnx", "m.nng"):
            self.model.save(self.path(name))
            again = nngraph.load(self.path(name))
            self.assertEqual(again.num_nodes, self.model.num_nodes)
            np.testing.assert_array_equal(run(again, x), want)
        # pathlib paths work wherever a path does.
        p = pathlib.Path(self.path("p.onnx"))
        self.model.save(p)
        self.assertEqual(nngraph.load(p).num_nodes, self.model.num_nodes)
        self.assertEqual(nngraph.InferenceSession(p).get_inputs()[0].name, "x")
        with self.assertRaisesRegex(nngraph.Error, "file path.*int"):
            nngraph.load(3)
        # The text format round-trips exactly, weights included.
        self.assertEqual(nngraph.load(self.path("m.nng")).text(-1), self.model.text(-1))
        self.assertEqual(nngraph.loads(self.model.text(-1)).text(-1), self.model.text(-1))
        self.assertEqual(str(self.model), self.model.text())

    def test_state_dict_views_the_weights(self):
        sd = self.model.state_dict()
        self.assertEqual(list(sd)[:2], ["features.0.weight", "features.0.bias"])
        self.assertEqual(sd["fc.weight"].shape, (10, 8))
        self.assertFalse(sd["fc.weight"].flags.writeable)
        with self.assertRaises(ValueError):
            sd["fc.weight"][0, 0] = 1.0

    def test_load_state_dict(self):
        x = images(2)
        before = run(self.model, x)
        sd = {k: np.array(v) for k, v in self.model.state_dict().items()}
        sd["fc.bias"] = sd["fc.bias"] + 1.0
        self.assertEqual(self.model.load_state_dict(sd),
                         {"missing_keys": [], "unexpected_keys": []})
        np.testing.assert_allclose(run(self.model, x), before + 1.0, atol=1e-5)
        # Strict: an unknown key is an error naming it; non-strict reports it.
        with self.assertRaisesRegex(nngraph.Error, "no_such.weight"):
            self.model.load_state_dict({"no_such.weight": np.zeros(3, np.float32)})
        r = self.model.load_state_dict({"no_such.weight": np.zeros(3, np.float32)},
                                       strict=False)
        self.assertEqual(r["unexpected_keys"], ["no_such.weight"])
        self.assertIn("fc.bias", r["missing_keys"])
        with self.assertRaisesRegex(nngraph.Error, "fc.bias"):
            self.model.load_state_dict({"fc.bias": np.zeros(3, np.float32)}, strict=False)

    def test_copy_is_independent(self):
        c = self.model.copy()
        c.optimize("O2")
        self.assertLess(c.num_nodes, self.model.num_nodes)
        self.assertEqual(self.model.num_nodes, 10)

    def test_optimize(self):
        x = images(4)
        want = run(self.model, x)
        stats = self.model.optimize("O2")
        self.assertEqual(stats["fold-conv-bn"]["fold-bn"], 2)
        self.assertNotIn("BatchNormalization", self.model.text())
        np.testing.assert_allclose(run(self.model, x), want, rtol=1e-4, atol=1e-5)
        stats = self.model.optimize("canonicalize,dce")
        self.assertEqual(list(stats), ["canonicalize", "dce"])

    def test_optimize_errors_leave_the_model(self):
        text = self.model.text(-1)
        with self.assertRaises(nngraph.Error) as e:
            self.model.optimize("canonicalize,no-such-pass")
        self.assertEqual(e.exception.kind, "invalid argument")
        self.assertIn("no-such-pass", str(e.exception))
        self.assertIn("fold-conv-bn", str(e.exception))  # The valid names.
        with self.assertRaisesRegex(nngraph.Error, "level"):
            self.model.optimize("O7")
        self.assertEqual(self.model.text(-1), text)

    def test_prune(self):
        params = self.model.inspect()["parameters"]["count"]
        stats = self.model.prune(ratio=0.5, round=1)
        self.assertGreater(stats["groups-pruned"], 0)
        self.assertLess(self.model.inspect()["parameters"]["count"], params)
        self.assertEqual(run(self.model, images(2)).shape, (2, 10))
        with self.assertRaisesRegex(nngraph.Error, "criterion"):
            self.model.prune(criterion="size")

    def test_quantize_static(self):
        x = images(16, seed=1)
        want = run(self.model, x)
        rep = self.model.quantize({"x": x}, batch_size=8)
        self.assertGreater(rep["quantized_nodes"], 0)
        self.assertLess(rep["weight_bytes_after"], rep["weight_bytes_before"])
        self.assertIn("QuantizeLinear", self.model.text())
        got = run(self.model, x)
        # int8 logits stay close to float ones on the calibration data.
        self.assertLess(np.abs(got - want).max(), 0.1 * np.abs(want).max())
        self.model.save(self.path("q.onnx"))
        self.assertIn("DequantizeLinear", nngraph.load(self.path("q.onnx")).text())

    def test_quantize_batches_and_dynamic(self):
        batches = [{"x": images(4, seed=s)} for s in range(3)]
        rep = self.model.copy().quantize(batches, method="entropy")
        self.assertGreater(rep["quantized_nodes"], 0)
        mlp = nngraph.from_zoo("mlp")
        x = np.random.default_rng(0).random((2, 784), dtype=np.float32)
        want = run(mlp, x)
        rep = mlp.quantize(mode="dynamic")
        self.assertEqual(rep["quantized_nodes"], 3)
        self.assertIn("MatMulInteger", mlp.text())
        np.testing.assert_allclose(run(mlp, x), want, atol=0.05 * np.abs(want).max())
        with self.assertRaisesRegex(nngraph.Error, "takes no calibration"):
            mlp.quantize({"x": x}, mode="dynamic")

    def test_quantize_errors(self):
        with self.assertRaisesRegex(nngraph.Error, "calibration data"):
            self.model.quantize()
        with self.assertRaisesRegex(nngraph.Error, "'y'.*'x'|'x'.*'y'"):
            self.model.quantize({"y": images(2)})
        with self.assertRaisesRegex(nngraph.Error, "minmax"):
            self.model.quantize({"x": images(2)}, method="median")
        self.assertNotIn("QuantizeLinear", self.model.text())

    def test_inspect(self):
        info = self.model.inspect({"N": 8})
        self.assertEqual(info["dims"], {"N": 8})
        params = sum(v.size for v in self.model.state_dict().values())
        self.assertEqual(info["parameters"]["count"], params)
        self.assertEqual(info["ops"]["Conv"], 2)
        self.assertEqual(info["macs"], 8 * self.model.inspect()["macs"])
        self.assertEqual(info["layers"][0]["name"], "features.0")
        with self.assertRaisesRegex(nngraph.Error, "'M'"):
            self.model.inspect({"M": 2})

    def test_load_errors(self):
        with self.assertRaises(nngraph.Error) as e:
            nngraph.load(self.path("missing.onnx"))
        self.assertEqual(e.exception.kind, "I/O error")
        self.assertIn("missing.onnx", str(e.exception))
        with self.assertRaisesRegex(nngraph.Error, r"\.nng.*\.onnx|extension"):
            nngraph.load(self.path("model.txt"))
        with self.assertRaisesRegex(nngraph.Error, "<mine>:3:1: error: bad type"):
            nngraph.loads('graph "g" {\n  input %x: f32[2\n}\n', "<mine>")
        self.assertTrue(issubclass(nngraph.Error, RuntimeError))
        self.assertEqual(nngraph.Error.__module__, "nngraph")

    def test_save_error_writes_nothing(self):
        with self.assertRaisesRegex(nngraph.Error, "extension"):
            self.model.save(self.path("model.txt"))
        with self.assertRaises(nngraph.Error):
            self.model.save(os.path.join(self.path("no-dir"), "m.onnx"))
        self.assertEqual(os.listdir(self.tmp.name), [])

    def test_module_lists(self):
        self.assertIn("cpu", nngraph.backends())
        self.assertIn("reference", nngraph.backends())
        self.assertIn("fold-conv-bn", nngraph.passes())
        self.assertIn("resnet18", nngraph.zoo_names())
        self.assertRegex(nngraph.__version__, r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main(verbosity=2)
