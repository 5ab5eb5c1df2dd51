//===- Passes.h - Factories of the built-in passes --------------*- C++ -*-===//
//
// One createXPass() factory per pass (declared from Passes.def); each pass
// lives in its own file in passes/lib. The registry (PassRegistry.h) maps
// pipeline names to these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/Pass.h"

#include <memory>

namespace nng::passes {

/// One factory per row of Passes.def ("shape-infer", "dce", ...).
#define NNG_PASS(Factory) std::unique_ptr<Pass> Factory();
#include "nngraph/passes/Passes.def"

} // namespace nng::passes
