"""nngraph.InferenceSession from Python: outputs equal a NumPy reference
(the bundled small CNN computed with NumPy from its own weights, and small
graphs written in the text format), on the cpu and reference backends;
strided, Fortran-order and big-endian inputs; outputs returned without a
copy yet never aliasing an input; and the errors of a bad feed."""

import os
import subprocess
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor

import support

np = support.require("numpy", "python3-numpy")
import nngraph  # noqa: E402


def conv3x3(x, w, b):
    """A 3x3 convolution with padding 1, stride 1."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", win, w) + b[None, :, None, None]


def batch_norm(x, sd, prefix, eps=1e-5):
    def p(name):
        return sd[f"{prefix}.{name}"][None, :, None, None]
    return (x - p("running_mean")) / np.sqrt(p("running_var") + eps) * p("weight") + p("bias")


def small_cnn_reference(sd, x):
    """examples/models/small_cnn.nng in NumPy, in float64."""
    sd = {k: v.astype(np.float64) for k, v in sd.items()}
    h = x.astype(np.float64)
    h = np.maximum(batch_norm(conv3x3(h, sd["features.0.weight"], sd["features.0.bias"]),
                              sd, "features.1"), 0)
    n, c, hh, ww = h.shape
    h = h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
    h = np.maximum(batch_norm(conv3x3(h, sd["features.4.weight"], sd["features.4.bias"]),
                              sd, "features.5"), 0)
    h = h.mean(axis=(2, 3))
    return h @ sd["fc.weight"].T + sd["fc.bias"]


MLP = """graph "mlp" {
  input %x: f32[N,4]
  input %k: i64[N,3]
  init %w: f32[4,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
  init %b: f32[3] = [0.5, -0.5, 1.0]
  %m = MatMul(%x, %w)
  %a = Add(%m, %b)
  %y = Relu(%a)
  %k2 = Mul(%k, %k)
  output %y
  output %k2
}
"""

STRINGS = """graph "strings" {
  input %s: str[N]
  input %t: str[N]
  %e = Equal(%s, %t)
  %c = Identity(%s)
  output %e
  output %c
}
"""

IDENTITY = """graph "identity" {
  input %x: f32[2,3]
  %y = Identity(%x)
  output %y
  output %x
}
"""


class RunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cnn = nngraph.load(support.SMALL_CNN)
        cls.sessions = {b: cls.cnn.compile(b) for b in ("cpu", "reference")}
        cls.mlp = nngraph.loads(MLP, "mlp.nng")

    def test_small_cnn_equals_numpy(self):
        x = np.random.default_rng(0).standard_normal((3, 1, 28, 28)).astype(np.float32)
        want = small_cnn_reference(self.cnn.state_dict(), x)
        for backend, session in self.sessions.items():
            with self.subTest(backend=backend):
                (y,) = session.run(None, {"x": x})
                self.assertEqual((y.dtype, y.shape), (np.float32, (3, 10)))
                np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)

    def test_thread_count_default_set_and_said(self):
        n = nngraph.get_num_threads()
        self.assertGreaterEqual(n, 1)
        self.assertIsInstance(nngraph.num_threads_origin(), str)
        x = np.random.default_rng(3).standard_normal((2, 1, 28, 28)).astype(np.float32)
        (want,) = self.sessions["cpu"].run(None, {"x": x})
        try:
            nngraph.set_num_threads(1)
            self.assertEqual(nngraph.get_num_threads(), 1)
            self.assertIn("set_num_threads", nngraph.num_threads_origin())
            (y,) = self.sessions["cpu"].run(None, {"x": x})
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
            with self.assertRaises(nngraph.Error) as e:
                nngraph.set_num_threads(0)
            self.assertIn("at least 1", str(e.exception))
        finally:
            nngraph.set_num_threads(n)

    def test_openmp_spin_set_before_libgomp(self):
        # import nngraph, in a process that has not loaded libgomp, gives it
        # a short spin (runtime/include/nngraph/runtime/OpenMPStart.h); a
        # value the user set stays.
        env = {k: v for k, v in os.environ.items()
               if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
        code = ("import os, nngraph; "
                "print(os.environ.get('GOMP_SPINCOUNT'))")

        def spin(extra):
            out = subprocess.run([sys.executable, "-c", code],
                                 env={**env, **extra}, check=True,
                                 capture_output=True, text=True)
            return out.stdout.strip()

        # The value __init__.py sets is the C++ library's.
        self.assertEqual(spin({}), nngraph._nngraph._openmp_spin_default)
        self.assertEqual(spin({"GOMP_SPINCOUNT": "7"}), "7")
        self.assertEqual(spin({"OMP_WAIT_POLICY": "active"}), "None")

    def test_stats_count_shapes_and_shared_weights(self):
        session = self.cnn.compile("cpu")
        self.assertIsNone(self.cnn.compile("reference").stats())
        rng = np.random.default_rng(2)
        for n in (1, 4, 2, 4):
            session.run(None, {"x": rng.standard_normal((n, 1, 28, 28)).astype(np.float32)})
        shapes = session.stats()["shapes"]
        # Three batch sizes, each compiled once; weights packed for the first.
        self.assertEqual(shapes["compiled"], 3)
        packs = shapes["weight_packs"]
        session.run(None, {"x": rng.standard_normal((7, 1, 28, 28)).astype(np.float32)})
        self.assertEqual(session.stats()["shapes"]["weight_packs"], packs)
        self.assertEqual(session.stats()["shapes"]["compiled"], 4)
        self.assertGreater(session.stats()["shapes"]["shared_arena_bytes"], 0)

    def test_mlp_equals_numpy(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((5, 4)).astype(np.float32)
        k = rng.integers(-1000, 1000, (5, 3))
        sd = self.mlp.state_dict()
        for backend in ("cpu", "reference"):
            y, k2 = self.mlp.compile(backend).run(None, {"x": x, "k": k})
            np.testing.assert_allclose(y, np.maximum(x @ sd["w"] + sd["b"], 0), rtol=1e-5)
            self.assertEqual(k2.dtype, np.int64)
            np.testing.assert_array_equal(k2, k * k)

    def test_str_tensors(self):
        model = nngraph.loads(STRINGS)
        self.assertEqual(model.inputs[0].dtype, "str")
        s, t = np.array(["a", "bc", "d"]), np.array(["a", "b", "d"])
        for backend in ("cpu", "reference"):
            e, c = model.compile(backend).run(None, {"s": s, "t": t})
            np.testing.assert_array_equal(e, [True, False, True])
            self.assertEqual(c.tolist(), ["a", "bc", "d"])

    def test_feed_forms_and_output_names(self):
        s = self.mlp.compile()
        x, k = np.ones((2, 4), np.float32), np.ones((2, 3), np.int64)
        by_name = s.run(None, {"x": x, "k": k})
        by_list = s.run(None, [x, k])
        (k2,) = s.run(["k2"], {"k": k, "x": x})
        np.testing.assert_array_equal(by_name[0], by_list[0])
        np.testing.assert_array_equal(k2, by_name[1])
        self.assertEqual([i.name for i in s.get_inputs()], ["x", "k"])
        self.assertEqual([o.shape for o in s.get_outputs()], [["N", 3], ["N", 3]])
        self.assertEqual(s.backend, "cpu")

    def test_strided_and_foreign_inputs(self):
        x = np.random.default_rng(2).standard_normal((2, 1, 28, 28)).astype(np.float32)
        (want,) = self.sessions["cpu"].run(None, {"x": x})
        strided = np.ascontiguousarray(np.swapaxes(x, 2, 3)).swapaxes(2, 3)
        fortran = np.asfortranarray(x)
        big_endian = x.astype(">f4")
        every_other = np.repeat(x, 2, axis=0)[::2]
        for name, a in [("strided", strided), ("fortran", fortran),
                        ("big-endian", big_endian), ("every-other", every_other)]:
            for backend, session in self.sessions.items():
                with self.subTest(name, backend=backend):
                    (y,) = session.run(None, {"x": a})
                    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)

    def test_inputs_are_read_where_they_lie(self):
        def address(a):
            return a.__array_interface__["data"][0]
        x = np.zeros((4, 1, 28, 28), np.float32)
        for name, a in [("C order", x), ("Fortran order", np.asfortranarray(x)),
                        ("a slice", x[1:3]), ("every other", x[::2]),
                        ("a transpose", x.transpose(0, 1, 3, 2))]:
            with self.subTest(name):
                self.assertEqual(nngraph._nngraph._tensor_address(a), address(a))
        for name, a in [("big-endian", x.astype(">f4")), ("reversed", x[::-1])]:
            with self.subTest(name):  # Copied once, into a native dense tensor.
                self.assertNotEqual(nngraph._nngraph._tensor_address(a), address(a))

    def test_outputs_own_their_memory(self):
        s = self.sessions["cpu"]
        x = np.ones((1, 1, 28, 28), np.float32)
        (y1,) = s.run(None, {"x": x})
        first = y1.copy()
        self.assertTrue(y1.flags.writeable)
        self.assertNotIsInstance(y1.base, np.ndarray)  # Not a copy of a copy.
        (y2,) = s.run(None, {"x": 2 * x})
        np.testing.assert_array_equal(y1, first)  # The next run did not reuse it.
        self.assertFalse(np.shares_memory(y1, y2))

    def test_outputs_never_alias_inputs(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        for backend in ("cpu", "reference"):
            y, x_out = nngraph.loads(IDENTITY).compile(backend).run(None, {"x": x})
            np.testing.assert_array_equal(y, x)
            np.testing.assert_array_equal(x_out, x)
            self.assertFalse(np.shares_memory(y, x))
            self.assertFalse(np.shares_memory(x_out, x))

    def test_run_into_writes_the_callers_arrays(self):
        s = self.sessions["cpu"]
        x = np.ones((2, 1, 28, 28), np.float32)
        (want,) = s.run(None, {"x": x})
        name = s.get_outputs()[0].name
        out = np.full_like(want, np.nan)
        self.assertIsNone(s.run_into({"x": x}, {name: out}))
        np.testing.assert_array_equal(out, want)
        for bad, says in [(np.empty((3, 10), np.float32), "this run produces"),
                          (np.empty((10, 2), np.float32).T, "C-contiguous"),
                          ([0.0] * 20, "must be a NumPy array")]:
            with self.subTest(says), self.assertRaisesRegex(Exception, says):
                s.run_into({"x": x}, {name: bad})
        with self.assertRaisesRegex(Exception, "is not an output"):
            s.run_into({"x": x}, {"nope": out})

    def test_threads_share_a_session(self):
        s = self.sessions["cpu"]
        xs = [np.full((2, 1, 28, 28), i, np.float32) for i in range(8)]
        want = [s.run(None, {"x": x})[0] for x in xs]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda x: s.run(None, {"x": x})[0], xs))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)

    def test_session_is_a_snapshot(self):
        model = nngraph.load(support.SMALL_CNN)
        s = model.compile()
        x = np.ones((1, 1, 28, 28), np.float32)
        (before,) = s.run(None, {"x": x})
        model.optimize("O2")
        model.load_state_dict({"fc.bias": np.full(10, 5.0, np.float32)}, strict=False)
        (after,) = s.run(None, {"x": x})
        np.testing.assert_array_equal(before, after)

    def test_path_session(self):
        s = nngraph.InferenceSession(support.SMALL_CNN, backend="reference")
        (y,) = s.run(None, {"x": np.zeros((2, 1, 28, 28), np.float32)})
        self.assertEqual(y.shape, (2, 10))

    def test_path_session_optimizes_as_onnxruntime_does(self):
        # InferenceSession optimizes its copy (-O2 by default, as
        # onnxruntime's session applies its graph optimizations); "O0" runs
        # the graph as written; Model.compile takes the model as it is.
        x = np.random.default_rng(1).standard_normal((2, 1, 28, 28)).astype(np.float32)
        got = {}
        for optimize in ("O2", "O0", "canonicalize,fold-conv-bn"):
            s = nngraph.InferenceSession(support.SMALL_CNN, optimize=optimize)
            (got[optimize],) = s.run(None, {"x": x})
            got[optimize + " stats"] = s.stats()
        self.assertGreater(got["O2 stats"]["fused_nodes"], 0)
        self.assertEqual(got["O0 stats"]["fused_nodes"], 0)
        self.assertLess(got["O2 stats"]["steps"], got["O0 stats"]["steps"])
        default = nngraph.InferenceSession(support.SMALL_CNN)
        default.run(None, {"x": x})
        self.assertEqual(default.stats()["steps"], got["O2 stats"]["steps"])
        self.sessions["cpu"].run(None, {"x": x})  # Model.compile: as it is.
        self.assertEqual(self.sessions["cpu"].stats()["fused_nodes"], 0)
        for optimize in ("O0", "canonicalize,fold-conv-bn"):
            np.testing.assert_allclose(got["O2"], got[optimize], rtol=1e-5, atol=1e-5)
        with self.assertRaisesRegex(nngraph.Error, "O9.*valid levels"):
            nngraph.InferenceSession(support.SMALL_CNN, optimize="O9")
        with self.assertRaisesRegex(nngraph.Error, "no-such-pass.*valid passes"):
            nngraph.InferenceSession(support.SMALL_CNN, optimize="no-such-pass")

    def test_feed_errors(self):
        s = self.sessions["cpu"]
        x = np.zeros((1, 1, 28, 28), np.float32)
        cases = [
            ({}, "'x'"),  # Missing: names the input.
            ({"x": x, "z": x}, "'z'"),
            ({"x": x.astype(np.float64)}, "f64 but the input is f32.*astype"),
            ({"x": x[0]}, "rank"),
            ({"x": np.zeros((1, 1, 27, 28), np.float32)}, "27"),
            ({"x": x.astype(np.complex64)}, "complex64.*astype"),
            ([x, x], "2 arrays for the 1 inputs"),
            ("x", "dict of input name"),
        ]
        for feed, message in cases:
            with self.subTest(message):
                with self.assertRaisesRegex(nngraph.Error, message):
                    s.run(None, feed)
        with self.assertRaisesRegex(nngraph.Error, "'z' is not an output.*: y"):
            s.run(["z"], {"x": x})
        with self.assertRaisesRegex(nngraph.Error, "cpu.*reference|reference.*cpu"):
            self.cnn.compile("tpu")
        with self.assertRaisesRegex(nngraph.Error, "Model or a model path.*int"):
            nngraph.InferenceSession(3)


if __name__ == "__main__":
    unittest.main(verbosity=2)
