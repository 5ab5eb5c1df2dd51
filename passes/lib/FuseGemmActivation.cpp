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

namespace nng::passes {
namespace {

class FuseGemmActivationPass final : public Pass {
public:
  std::string_view name() const override { return "fuse-gemm-act"; }
  std::string_view summary() const override {
    return "fuse a Gemm and the activation that follows it into "
           "nng.FusedGemm";
  }
  bool run(ir::Graph &G) override {
    std::vector<std::unique_ptr<RewritePattern>> Patterns;
    Patterns.push_back(std::make_unique<fusion::ActivationFusion>(
        ir::OpKind::Gemm, ir::OpKind::FusedGemm, "fuse-gemm-act"));
    return fusion::applyFusionPatterns(G, Patterns, *this);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseGemmActivationPass() {
  return std::make_unique<FuseGemmActivationPass>();
}

} // namespace nng::passes
