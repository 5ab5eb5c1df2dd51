//===- OnnxGradient.cpp - Expanding ONNX Gradient nodes on import ---------===//
//
// Work in progress: Gradient nodes are not expanded yet, so checkOperators
// reports them as unsupported, as before.
//
//===----------------------------------------------------------------------===//

#include "OnnxGradient.h"

namespace nng::frontend::onnxio {

void expandGradients(::onnx::ModelProto &, const ModelSource &) {}

} // namespace nng::frontend::onnxio
