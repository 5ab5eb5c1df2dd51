"""f16 models (weights and activations float16, as .half() exports and ONNX's
float16 converters write them) on the cpu backend: compiled as the same
graph in f32 (backends/lib/cpu/WidenHalf.h) with oneDNN's f32 primitives and
no node-kernel fallback (the entry and exit Casts are own loops, LowerCast.cpp); outputs keep their
f16 dtype and agree with ONNX Runtime (onnxruntime-node, through
tests/ort/run_onnx.mjs) and with the reference backend's f16 run within
f16's tolerance. SKIPPED without python3-onnx, NumPy, node or
onnxruntime-node.
"""

import unittest

import support

np = support.require("numpy", "python3-numpy")
onnx = support.require("onnx", "python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import nngraph  # noqa: E402



def conv_net():
    """x: f16[1,3,16,16] -> conv 3x3 -> relu -> conv 3x3 (+ residual) ->
    max pool -> global average pool -> gemm -> y: f16[1,10], and y cast to
    f32 as a second output; a Constant f16 scale in between."""
    rng = np.random.default_rng(0)
    h = TensorProto.FLOAT16

    def init(name, shape, scale):
        a = (rng.standard_normal(shape) * scale).astype(np.float16)
        return numpy_helper.from_array(a, name)
    inits = [init("w1", (8, 3, 3, 3), 0.3), init("b1", (8,), 0.1),
             init("w2", (8, 8, 3, 3), 0.15), init("b2", (8,), 0.1),
             init("fc.w", (10, 8), 0.3), init("fc.b", (10,), 0.1)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 4,
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1] * 4,
                         kernel_shape=[3, 3]),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
            np.array(0.5, np.float16))),
        helper.make_node("Mul", ["s", "k"], ["sk"]),
        helper.make_node("MaxPool", ["sk"], ["p"], kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], transB=1),
        helper.make_node("Cast", ["y"], ["y32"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "fp16net", [helper.make_tensor_value_info("x", h, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", h, [1, 10]),
         helper.make_tensor_value_info("y32", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    feeds = {"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float16)}
    return model.SerializeToString(), feeds


class Fp16Test(support.TempDirTestCase):
    def test_conv_net_runs_in_f32_and_matches(self):
        data, feeds = conv_net()
        path = self.path("fp16.onnx")
        with open(path, "wb") as f:
            f.write(data)
        want = support.run_ort(self, path, feeds)
        ref = nngraph.InferenceSession(path, backend="reference")
        ref_out = dict(zip([o.name for o in ref.get_outputs()],
                           ref.run(None, feeds)))
        for level in ("O0", "O2"):
            with self.subTest(level=level):
                m = nngraph.load(path)
                m.optimize(level)
                s = m.compile("cpu")
                got = dict(zip([o.name for o in s.get_outputs()],
                               s.run(None, feeds)))
                self.assertEqual(got["y"].dtype, np.float16)
                self.assertEqual(got["y32"].dtype, np.float32)
                for name, w in want.items():
                    # f16 keeps 11 bits: its rounding, not an error.
                    np.testing.assert_allclose(
                        got[name].astype(np.float32), w.astype(np.float32),
                        rtol=1e-2, atol=1e-2, err_msg=name + " vs ORT")
                    np.testing.assert_allclose(
                        got[name].astype(np.float32),
                        ref_out[name].astype(np.float32),
                        rtol=1e-2, atol=1e-2, err_msg=name + " vs reference")
                stats = s.stats()
                self.assertGreater(stats["onednn_steps"], 0, stats)
                # No node kernel: the entry and exit Casts are own loops.
                self.assertEqual(stats["fallbacks"], [])


if __name__ == "__main__":
    unittest.main()
