//===- OnnxLowering.h - Making a graph expressible in ONNX ------*- C++ -*-===//
//
// Private to the ONNX frontend: the rewrite that export runs on a copy of
// the graph (nng-domain expansion, opset downgrades). See OnnxLowering.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

namespace nng::frontend::onnxio {

/// Rewrites G in place so that every node is a default-domain op whose
/// semantics hold at Opset (13..17), or an nng.ModuleCall (exported to the
/// custom domain ModuleCallDomain). Throws Error(Unsupported) naming the
/// node when one cannot be expressed.
void lowerForOnnx(ir::Graph &G, int Opset);

/// The ONNX domain of exported nng.ModuleCall nodes (op_type "ModuleCall",
/// attributes module, module_type, callback).
inline constexpr const char *ModuleCallDomain = "ai.nngraph.module";

} // namespace nng::frontend::onnxio
