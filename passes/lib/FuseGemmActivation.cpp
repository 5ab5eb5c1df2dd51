//===- FuseGemmActivation.cpp - fuse-gemm-act: Gemm + activation ---------===//
//
// A Gemm whose result feeds only an activation of the FusedActivation table
// (Relu, LeakyRelu, Sigmoid, Tanh, Clip with constant bounds, HardSigmoid,
// HardSwish, Elu, nng.Gelu) becomes one nng.FusedGemm with the Gemm's
// inputs and attributes and the activation's parameters; the fused result
// takes the activation's name. The pass declines, counting why, when the
// Gemm's result has other consumers or is a graph output, or when the
// consumer is not such an activation.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {

std::unique_ptr<Pass> createFuseGemmActivationPass() {
  return std::make_unique<RulePass>(
      "fuse-gemm-act",
      "fuse a Gemm and the activation that follows it into "
      "nng.FusedGemm",
      RewritePatternList{
          // act(Gemm(x, W, ...)) -> nng.FusedGemm(x, W, ...){activation = act}
          {ir::OpKind::Gemm, "fuse-gemm-act",
           fusion::fuseActivationInto(ir::OpKind::FusedGemm)},
      });
}

} // namespace nng::passes
