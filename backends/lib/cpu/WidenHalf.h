//===- WidenHalf.h - f16 graphs computed in f32 (internal) -----*- C++ -*-===//
//
// The cpu backend has f32 kernels (oneDNN's and its own) for every op it
// compiles, and only node kernels for f16. So a graph whose values are f16
// (a model exported with .half(), or converted by ONNX's float16 tools) is
// compiled as the same graph in f32: f16 weights converted once, f16
// inputs cast to f32 on entry and f16 outputs cast back on exit, as ONNX
// Runtime's CPU provider does for the f16 nodes it has no kernel for (it
// inserts Casts around them). Between nodes values stay f32: no rounding to
// f16's 11 bits after each node, so results differ from a strict f16 run
// by f16's rounding (relative ~1e-3), usually towards the f64 result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

namespace nng::backends::cpu {

/// Rewrites G to compute in f32 where it computes in f16 (see the file
/// comment): initializers, node outputs and the dtypes node attributes name
/// (Cast's 'to', EyeLike's 'dtype', f16 tensor attributes); graph inputs
/// and outputs keep their f16 types through Casts. Only an f16 model is
/// widened (an f16 graph input or initializer): an f32 graph that rounds
/// through f16 inside keeps its rounding. Returns the number of values
/// widened; 0 leaves G unchanged (not an f16 model, or it has regions,
/// which keep their own types).
int widenHalfToFloat(ir::Graph &G);

} // namespace nng::backends::cpu
