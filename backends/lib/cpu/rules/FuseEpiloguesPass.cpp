//===- FuseEpiloguesPass.cpp - cpu-fuse-epilogues, the backend's pass ----===//
//
// The cpu backend's epilogue rules (FuseEpilogues.cpp, FuseProducts.cpp) as
// a pass of the rewrite engine, which sits below the backends: the backend
// states its own pass, with its statistics and its --debug-only output
// (each decline counts under its reason and prints under
// --debug-only=cpu-fuse-epilogues), and the pass registry lists it. The cpu
// backend's pipelines run it before form-fused-regions, so that no fused
// region takes the Add or the activation; compileCpu runs the same rules on
// every graph it compiles, so a graph that ran no pipeline fuses alike.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/rewrite/Pass.h"

namespace nng::backends::cpu {
namespace {

class FuseEpiloguesPass final : public passes::Pass {
public:
  std::string_view name() const override { return "cpu-fuse-epilogues"; }
  std::string_view summary() const override {
    return "fuse a Conv (a linear MatMul or Gemm), the bias Add, the residual "
           "Add and the activation after it into one nng.FusedConv "
           "(nng.FusedMatMul): the cpu backend's epilogue rules";
  }

  bool run(ir::Graph &G) override {
    auto Declined = [this](const ir::Node &N, std::string_view Stat,
                           const std::string &Why) {
      bumpStatistic(Stat);
      if (passes::debugEnabled(name()))
        passes::debugStream() << "[" << name() << "] declined at "
                              << N.describe() << ": " << Why << "\n";
    };
    EpilogueFusionCounts Convs = fuseConvEpilogues(G, Declined);
    EpilogueFusionCounts Products = fuseProductEpilogues(G, Declined);
    if (Convs.Fused > 0)
      bumpStatistic("fused-convs", Convs.Fused);
    if (Products.Fused > 0)
      bumpStatistic("fused-products", Products.Fused);
    if (Products.Biases > 0)
      bumpStatistic("fused-biases", Products.Biases);
    if (Convs.Sums + Products.Sums > 0)
      bumpStatistic("fused-sums", Convs.Sums + Products.Sums);
    if (Convs.Activations + Products.Activations > 0)
      bumpStatistic("fused-activations",
                    Convs.Activations + Products.Activations);
    return Convs.Fused + Products.Fused > 0;
  }
};

} // namespace

std::unique_ptr<passes::Pass> createFuseEpiloguesPass() {
  return std::make_unique<FuseEpiloguesPass>();
}

} // namespace nng::backends::cpu
