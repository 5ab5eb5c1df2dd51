//===- OnnxGradient.h - Expanding ONNX Gradient nodes on import -*- C++ -*-===//
//
// Private to the ONNX frontend: the importer's rewrite of
// ai.onnx.preview.training.Gradient nodes into the ordinary nodes that
// compute the gradients they stand for. See OnnxGradient.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OnnxProto.h"

namespace nng::frontend::onnxio {

/// Replaces every ai.onnx.preview.training.Gradient node of M's main graph
/// by default-domain nodes computing d y / d xs (reverse-mode
/// differentiation of the nodes between xs and y), valid at the model's
/// opset; drops the ai.onnx.preview.training opset import when no node of
/// that domain is left. Models without Gradient nodes are left untouched.
/// Throws Error(Parse) for a malformed Gradient node and Error(Unsupported)
/// naming the Gradient node and the node it cannot differentiate (or the
/// shape information it lacks).
void expandGradients(::onnx::ModelProto &M, const ModelSource &Src);

} // namespace nng::frontend::onnxio
