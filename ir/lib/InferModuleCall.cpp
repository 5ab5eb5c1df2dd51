//===- InferModuleCall.cpp - Inference for nng.ModuleCall ----------------===//
//
// nng.ModuleCall is a leaf module of a traced model: its output types are
// what the module produced on the tracer's example inputs, fixed when the
// node is created, and cannot be computed from the input types. Inference
// therefore keeps each output's declared type (so inferTypes and the
// verifier accept it unchanged) and, at run time, where nothing is declared,
// leaves the outputs unset; the kernel checks what the callback returns
// against the node's declared types instead.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/ShapeInference.h"

namespace nng::ir {

/// nng.ModuleCall(inputs...) -> outputs...: the declared output types.
void inferModuleCall(InferContext &C) {
  if (C.attrString("module").empty())
    C.fail("attribute 'module' (the leaf module's path) is empty");
  for (size_t I = 0; I < C.numOutputs(); ++I)
    if (const TensorType *T = C.declaredOutputType(I))
      C.setOutputType(I, *T);
}

} // namespace nng::ir
