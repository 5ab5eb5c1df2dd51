#!/usr/bin/python3
"""Writes the nested-graph seeds of fuzz.onnx-import (this folder): small
models whose If, Loop and Scan bodies nest and read values of outer
scopes, so the fuzzer's mutations start from graphs inside graphs.

Usage: /usr/bin/python3 tests/fuzz/seeds/onnx/make_seeds.py OUT_DIR
(Debian's python3-onnx).
"""

import os
import sys

from onnx import TensorProto, helper, save


def nested_if(depth):
    """depth Ifs inside each other's then branch, each reading x."""
    def branch(level):
        if level == depth:
            return helper.make_graph(
                [helper.make_node("Neg", ["x"], [f"n{level}"])], f"leaf{level}",
                [], [helper.make_tensor_value_info(f"n{level}", TensorProto.FLOAT, [2])])
        inner = helper.make_node(
            "If", ["c"], [f"y{level}"], then_branch=branch(level + 1),
            else_branch=helper.make_graph(
                [helper.make_node("Abs", ["x"], [f"a{level}"])], f"else{level}",
                [], [helper.make_tensor_value_info(f"a{level}", TensorProto.FLOAT, [2])]))
        return helper.make_graph(
            [inner], f"then{level}", [],
            [helper.make_tensor_value_info(f"y{level}", TensorProto.FLOAT, [2])])
    g = branch(0)
    g.name = f"nested_if{depth}"
    g.input.extend([helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def loop_with_if():
    """A Loop whose body holds an If reading the loop's carried value and a
    value two scopes out; a scan output."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["acc", "w"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    body = helper.make_graph(
        [helper.make_node("If", ["go"], ["z"], then_branch=then_g,
                          else_branch=else_g),
         helper.make_node("Add", ["acc", "z"], ["acc2"]),
         helper.make_node("Identity", ["go"], ["go2"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("go", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("go2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["m", "c", "x"], ["out", "rows"], body=body)],
        "loop_with_if",
        [helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor("w", TensorProto.FLOAT, [2], [0.5, 2.0])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def scan_with_loop():
    """A Scan whose body runs a Loop (a sum of its row, M from outside)."""
    loop_body = helper.make_graph(
        [helper.make_node("Add", ["s", "r"], ["s2"]),
         helper.make_node("Identity", ["go"], ["go2"])],
        "inner",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("go", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("go2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s2", TensorProto.FLOAT, [3])])
    body = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "st"], ["st2"], body=loop_body),
         helper.make_node("Identity", ["st2"], ["o"])],
        "scan_body",
        [helper.make_tensor_value_info("st", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("st2", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("o", TensorProto.FLOAT, [3])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["init", "rows"], ["final", "outs"],
                          body=body, num_scan_inputs=1)],
        "scan_with_loop",
        [helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("init", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("outs", TensorProto.FLOAT, [4, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {"nested_if3.onnx": nested_if(3), "nested_if12.onnx": nested_if(12),
             "nested_if31.onnx": nested_if(31), "loop_with_if.onnx": loop_with_if(),
             "scan_with_loop.onnx": scan_with_loop()}
    for name, model in seeds.items():
        save(model, os.path.join(out, name))


if __name__ == "__main__":
    main()
