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

namespace nng::passes {
namespace {

class FuseConvActivationPass final : public Pass {
public:
  std::string_view name() const override { return "fuse-conv-act"; }
  std::string_view summary() const override {
    return "fuse a Conv and the activation that follows it into "
           "nng.FusedConv";
  }
  bool run(ir::Graph &G) override {
    std::vector<std::unique_ptr<RewritePattern>> Patterns;
    Patterns.push_back(std::make_unique<fusion::ActivationFusion>(
        ir::OpKind::Conv, ir::OpKind::FusedConv, "fuse-conv-act"));
    return fusion::applyFusionPatterns(G, Patterns, *this);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseConvActivationPass() {
  return std::make_unique<FuseConvActivationPass>();
}

} // namespace nng::passes
