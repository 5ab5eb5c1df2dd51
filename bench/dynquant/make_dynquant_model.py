#!/usr/bin/env python3
"""Writes a small conv net in ONNX Runtime's dynamic QOperator form.

Each 3x3 convolution is what onnxruntime.quantization.quantize_dynamic
writes for a float Conv (+ bias, + Relu):

  x_q, x_s, x_zp = DynamicQuantizeLinear(x)
  acc = ConvInteger(x_q, w_q, x_zp, w_zp)              i32
  y = Relu(Cast<f32>(acc) * Mul(x_s, w_s) + Reshape(b, [1, -1, 1, 1]))

with w_q s8 symmetric (ORT's default QInt8 weights) or u8 asymmetric
(--weights u8); with --linear a GlobalAveragePool, Flatten and a dynamically
quantized linear layer (MatMulInteger, Cast, Mul, Add) end the net. Needs
Debian's python3-onnx (/usr/bin/python3). Used by the benchmark in
bench/README and by tests/fx/DynamicQuantOrtTest.cpp.

  /usr/bin/python3 make_dynquant_model.py OUT.onnx [--size 256] [--channels 32]
      [--layers 3] [--batch 1] [--weights s8|u8] [--linear] [--seed 0]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weights(w, kind):
    if kind == "s8":
        scale = np.float32(np.abs(w).max() / 127.0)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        return q, scale, np.int8(0)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
    q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--channels", type=int, default=32)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--weights", choices=["s8", "u8"], default="s8")
    ap.add_argument("--linear", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    nodes, inits, outs = [], [], []
    x = "x"
    cin = 3
    shape4 = numpy_helper.from_array(np.array([1, -1, 1, 1], np.int64),
                                     "bias_shape")
    inits.append(shape4)
    for i in range(a.layers):
        p = f"conv{i}"
        cout = a.channels
        w = (rng.standard_normal((cout, cin, 3, 3)) /
             np.sqrt(cin * 9)).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        wq, ws, wz = quantize_weights(w, a.weights)
        inits += [numpy_helper.from_array(wq, p + ".w_quantized"),
                  numpy_helper.from_array(np.array(ws, np.float32),
                                          p + ".w_scale"),
                  numpy_helper.from_array(np.array(wz), p + ".w_zero_point"),
                  numpy_helper.from_array(b, p + ".b")]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [x],
                             [x + "_quantized", x + "_scale",
                              x + "_zero_point"], p + "_quant"),
            helper.make_node("ConvInteger",
                             [x + "_quantized", p + ".w_quantized",
                              x + "_zero_point", p + ".w_zero_point"],
                             [p + "_output_quantized"], p + "_quant_conv",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("Cast", [p + "_output_quantized"],
                             [p + "_cast_output"], p + "_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [x + "_scale", p + ".w_scale"],
                             [p + "_scales_mul:0"], p + "_scales_mul"),
            helper.make_node("Mul", [p + "_cast_output", p + "_scales_mul:0"],
                             [p + "_scaled"], p + "_output_scale_mul"),
            helper.make_node("Reshape", [p + ".b", "bias_shape"],
                             [p + "_bias_reshape_output"], p + "_bias_reshape"),
            helper.make_node("Add", [p + "_scaled", p + "_bias_reshape_output"],
                             [p + "_biased"], p + "_bias_add"),
            helper.make_node("Relu", [p + "_biased"], [p + "_out"], p + "_relu"),
        ]
        outs.append((p + "_out", [a.batch, cout, a.size, a.size]))
        x = p + "_out"
        cin = cout
    if a.linear:
        n = 10
        w = (rng.standard_normal((cin, n)) / np.sqrt(cin)).astype(np.float32)
        b = (rng.standard_normal(n) * 0.1).astype(np.float32)
        wq, ws, wz = quantize_weights(w, a.weights)
        inits += [numpy_helper.from_array(wq, "fc.w_quantized"),
                  numpy_helper.from_array(np.array(ws, np.float32),
                                          "fc.w_scale"),
                  numpy_helper.from_array(np.array(wz), "fc.w_zero_point"),
                  numpy_helper.from_array(b, "fc.b")]
        nodes += [
            helper.make_node("GlobalAveragePool", [x], ["pooled"], "pool"),
            helper.make_node("Flatten", ["pooled"], ["flat"], "flatten"),
            helper.make_node("DynamicQuantizeLinear", ["flat"],
                             ["flat_quantized", "flat_scale",
                              "flat_zero_point"], "fc_quant"),
            helper.make_node("MatMulInteger",
                             ["flat_quantized", "fc.w_quantized",
                              "flat_zero_point", "fc.w_zero_point"],
                             ["fc_output_quantized"], "fc_quant_matmul"),
            helper.make_node("Cast", ["fc_output_quantized"],
                             ["fc_cast_output"], "fc_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", ["flat_scale", "fc.w_scale"],
                             ["fc_scales_mul:0"], "fc_scales_mul"),
            helper.make_node("Mul", ["fc_cast_output", "fc_scales_mul:0"],
                             ["fc_scaled"], "fc_output_scale_mul"),
            helper.make_node("Add", ["fc_scaled", "fc.b"], ["logits"], "fc_add"),
        ]
        outs.append(("logits", [a.batch, n]))
    graph = helper.make_graph(
        nodes, "dynquant_convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [a.batch, 3, a.size, a.size])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, s)
         for o, s in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="nngraph make_dynquant_model.py")
    onnx.checker.check_model(model)
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
