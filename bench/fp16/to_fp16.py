#!/usr/bin/python3
# ===- to_fp16.py - An f32 ONNX model rewritten as an f16 one --------------===#
#
# Writes the f16 twin of an f32 model, as ONNX's float16 converters do for a
# plain network: every float initializer, graph input, output and value_info
# becomes float16, Cast nodes to float cast to float16, float tensor
# attributes (Constant values) become float16. For benchmarking the cpu
# backend on f16 models (bench/README.md, "f16 models"):
#
#   python3 bench/cpu_vs_ort/export_models.py build/bench/cpu_vs_ort/models
#   python3 bench/fp16/to_fp16.py build/bench/cpu_vs_ort/models/resnet18.onnx /tmp/r18h.onnx
#   nngraph-bench /tmp/r18h.onnx --vs-ort --threads 2
#
# Needs Debian's python3-onnx and NumPy.
#
# ===----------------------------------------------------------------------===#

import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: to_fp16.py IN.onnx OUT.onnx")
    m = onnx.load(sys.argv[1])
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            a = numpy_helper.to_array(t).astype(np.float16)
            g.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
            if (a.type == onnx.AttributeProto.TENSOR
                    and a.t.data_type == TensorProto.FLOAT):
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
    onnx.save(m, sys.argv[2])


if __name__ == "__main__":
    main()
