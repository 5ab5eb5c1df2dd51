"""ONNX Runtime's com.microsoft.MultiHeadAttention (what its transformer
optimizer writes) imported as default-domain nodes (OnnxContribOps.cpp):
models written with onnx.helper run in ONNX Runtime (onnxruntime-node,
through tests/ort/run_onnx.mjs) and in nngraph on the reference and cpu
backends at -O2 (where fuse-attention makes the attention one
nng.Attention), and the outputs agree within 1e-5. The forms the import
refuses say so, naming the node. SKIPPED without python3-onnx, NumPy, node
or onnxruntime-node.
"""

import unittest

import support

np = support.require("numpy", "python3-numpy")
onnx = support.require("onnx", "python3-onnx")
from onnx import TensorProto, helper  # noqa: E402

import nngraph  # noqa: E402



def mha_model(heads=4, d=16, bias=False, past=False, attn_bias=False,
              scale=None, unidirectional=0, batch=2, seq=5, kv=7, cache=3):
    """A model of one MultiHeadAttention; returns (bytes, feeds)."""
    rng = np.random.default_rng(0)
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info("q", f, [batch, seq, d]),
           helper.make_tensor_value_info("k", f, [batch, kv, d]),
           helper.make_tensor_value_info("v", f, [batch, kv, d])]
    names = ["q", "k", "v"]
    inits = []
    feeds = {n: rng.standard_normal((batch, seq if n == "q" else kv, d))
             .astype(np.float32) for n in names}
    names.append("bias" if bias else "")
    if bias:
        inits.append(helper.make_tensor(
            "bias", f, [3 * d], rng.standard_normal(3 * d).astype(np.float32)))
    names.append("")  # key_padding_mask
    total = kv + (cache if past else 0)
    if attn_bias:
        ins.append(helper.make_tensor_value_info("ab", f, [1, heads, seq, total]))
        feeds["ab"] = rng.standard_normal((1, heads, seq, total)).astype(np.float32)
    names.append("ab" if attn_bias else "")
    outs = [helper.make_tensor_value_info("y", f, None)]
    out_names = ["y"]
    if past:
        for n in ("past_k", "past_v"):
            ins.append(helper.make_tensor_value_info(
                n, f, [batch, heads, cache, d // heads]))
            feeds[n] = rng.standard_normal(
                (batch, heads, cache, d // heads)).astype(np.float32)
        names += ["past_k", "past_v"]
        out_names += ["present_k", "present_v"]
        outs += [helper.make_tensor_value_info(n, f, None)
                 for n in ("present_k", "present_v")]
    while names and names[-1] == "":
        names.pop()
    attrs = {"num_heads": heads, "unidirectional": unidirectional}
    if scale is not None:
        attrs["scale"] = scale
    node = helper.make_node("MultiHeadAttention", names, out_names,
                            name="mha", domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], "mha", ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    order = [i.name for i in ins]
    return model.SerializeToString(), {n: feeds[n] for n in order}


def attention_model(heads=4, d=16, batch=2, seq=6, mask=True, lengths=False):
    """A model of one com.microsoft.Attention (BERT's fused form)."""
    rng = np.random.default_rng(1)
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info("x", f, [batch, seq, d])]
    feeds = {"x": rng.standard_normal((batch, seq, d)).astype(np.float32)}
    inits = [helper.make_tensor("w", f, [d, 3 * d],
                                (0.3 * rng.standard_normal(3 * d * d)).astype(np.float32)),
             helper.make_tensor("b", f, [3 * d],
                                rng.standard_normal(3 * d).astype(np.float32))]
    names = ["x", "w", "b"]
    if lengths:  # A 1-D mask_index: the sequence lengths (refused).
        ins.append(helper.make_tensor_value_info("m", TensorProto.INT32, [batch]))
        feeds["m"] = np.full((batch,), seq, np.int32)
        names.append("m")
    elif mask:
        ins.append(helper.make_tensor_value_info("m", TensorProto.INT32, [batch, seq]))
        m = np.ones((batch, seq), np.int32)
        m[1, seq - 2:] = 0  # The second row's last two positions are padding.
        feeds["m"] = m
        names.append("m")
    node = helper.make_node("Attention", names, ["y"], name="attn",
                            domain="com.microsoft", num_heads=heads)
    graph = helper.make_graph([node], "attn", ins,
                              [helper.make_tensor_value_info("y", f, None)], inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString(), feeds


class ContribAttentionTest(support.TempDirTestCase):
    def ort(self, model_bytes, feeds):
        path = self.path("m.onnx")
        with open(path, "wb") as f:
            f.write(model_bytes)
        return path, support.run_ort(self, path, feeds)

    def check(self, make=mha_model, **form):
        data, feeds = make(**form)
        path, want = self.ort(data, feeds)
        for backend in ("reference", "cpu"):
            with self.subTest(backend=backend, make=make.__name__, **form):
                m = nngraph.load(path)
                m.optimize("O2")
                s = m.compile(backend)
                names = [o.name for o in s.get_outputs()]
                got = dict(zip(names, s.run(None, feeds)))
                for name, w in want.items():
                    np.testing.assert_allclose(got[name], w, rtol=1e-5,
                                               atol=1e-5, err_msg=name)
                # -O2's fuse-attention found the pattern.
                self.assertIn("nng.Attention", str(m))

    def test_plain(self):
        self.check()

    def test_bias_scale_and_attention_bias(self):
        self.check(bias=True, scale=0.3, attn_bias=True)

    def test_past_key_value(self):
        self.check(past=True, bias=True)

    def test_fused_attention_with_mask(self):
        self.check(make=attention_model)
        self.check(make=attention_model, mask=False)

    def test_refused_forms_name_the_node(self):
        data, _ = mha_model(unidirectional=1)
        path = self.path("causal.onnx")
        with open(path, "wb") as f:
            f.write(data)
        with self.assertRaises(nngraph.Error) as e:
            nngraph.load(path)
        self.assertIn("'mha'", str(e.exception))
        self.assertIn("unidirectional", str(e.exception))
        data, _ = attention_model(lengths=True)
        path = self.path("lengths.onnx")
        with open(path, "wb") as f:
            f.write(data)
        with self.assertRaises(nngraph.Error) as e:
            nngraph.load(path)
        self.assertIn("'attn'", str(e.exception))
        self.assertIn("1-D mask_index", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
