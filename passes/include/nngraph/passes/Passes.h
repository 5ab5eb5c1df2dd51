//===- Passes.h - Factories of the built-in passes --------------*- C++ -*-===//
//
// One createXPass() factory per pass; each pass lives in its own file in
// passes/lib. The registry (PassRegistry.h) maps pipeline names to these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/passes/Pass.h"

#include <memory>

namespace nng::passes {

/// "shape-infer": infers every node's output types (ir::inferTypes).
std::unique_ptr<Pass> createShapeInferPass();
/// "dce": removes nodes whose outputs are unused and are not graph outputs,
/// then initializers nothing uses.
std::unique_ptr<Pass> createDeadCodeEliminationPass();

} // namespace nng::passes
