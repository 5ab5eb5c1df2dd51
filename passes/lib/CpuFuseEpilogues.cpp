//===- CpuFuseEpilogues.cpp - cpu-fuse-epilogues in the registry ---------===//
//
// The cpu backend states its epilogue rules as a pass of its own
// (backends/lib/cpu/rules/FuseEpiloguesPass.cpp, on the rewrite engine);
// the registry of built-in passes lists it under this factory.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/passes/Passes.h"

namespace nng::passes {

std::unique_ptr<Pass> createCpuFuseEpiloguesPass() {
  return backends::cpu::createFuseEpiloguesPass();
}

} // namespace nng::passes
