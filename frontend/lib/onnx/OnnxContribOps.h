//===- OnnxContribOps.h - ONNX Runtime contrib ops on import ---*- C++ -*-===//
//
// Private to the ONNX frontend: the importer's rewrite of com.microsoft
// attention operators (what ONNX Runtime's transformer optimizer writes)
// into default-domain nodes, which -O2's fuse-attention makes one
// nng.Attention again. See OnnxContribOps.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OnnxProto.h"

namespace nng::frontend::onnxio {

/// Replaces every com.microsoft.MultiHeadAttention and Attention node of
/// M's main graph by
/// default-domain nodes computing the same outputs (valid at opset 13 and
/// later); other nodes are left alone. Throws Error(Unsupported) naming the
/// node and what it uses that the rewrite does not cover (a packed or
/// head-split query/key/value, a key padding mask, causal masking).
void expandContribOps(::onnx::ModelProto &M, const ModelSource &Src);

/// Rewrites the ai.onnx.preview.training optimizer steps (Adagrad,
/// Momentum, Adam) into standard ops (OnnxTrainingOps.cpp).
void expandTrainingOps(::onnx::ModelProto &M, const ModelSource &Src);

/// True for the optimizer steps expandTrainingOps() rewrites.
bool isOnnxTrainingOp(std::string_view Domain, std::string_view OpType);

} // namespace nng::frontend::onnxio
