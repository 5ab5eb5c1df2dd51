//===- FuseConvActivation.cpp - fuse-conv-act: Conv + activation ---------===//
//
// A Conv whose result feeds only an activation of the FusedActivation table
// (Relu, LeakyRelu, Sigmoid, Tanh, Clip with constant bounds, HardSigmoid,
// HardSwish, Elu, nng.Gelu) becomes one nng.FusedConv with the Conv's
// inputs and attributes and the activation's parameters; the fused result
// takes the activation's name. The pass declines, counting why, when the
// Conv's result has other consumers or is a graph output, or when the
// consumer is not such an activation.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {

std::unique_ptr<Pass> createFuseConvActivationPass() {
  return std::make_unique<RulePass>(
      "fuse-conv-act",
      "fuse a Conv and the activation that follows it into "
      "nng.FusedConv",
      RewritePatternList{
          // act(Conv(x, W, ...)) -> nng.FusedConv(x, W, ...){activation = act}
          {ir::OpKind::Conv, "fuse-conv-act",
           fusion::fuseActivationInto(ir::OpKind::FusedConv)},
      });
}

} // namespace nng::passes
