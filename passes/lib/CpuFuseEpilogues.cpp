//===- CpuFuseEpilogues.cpp - cpu-fuse-epilogues: the epilogue rules -----===//
//
// The cpu backend's epilogue rules as a pass: Conv, then a residual Add,
// then an activation become one nng.FusedConv carrying the residual as its
// Sum input and the activation as attributes; a linear layer's MatMul or
// Gemm, then a bias Add, a residual Add and an activation one
// nng.FusedMatMul (backends/cpu/FusionRules.h says when they fire). The cpu
// backend lists it
// in its pipelines before form-fused-regions, so that no fused region takes
// the Add or the activation; compileCpu runs the same rule on every graph it
// compiles, so a graph that ran no pipeline fuses alike. Each decline counts
// under its reason and prints under --debug-only=cpu-fuse-epilogues.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/passes/Passes.h"

namespace nng::passes {
namespace {

class CpuFuseEpiloguesPass final : public Pass {
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
      if (debugEnabled(name()))
        debugStream() << "[" << name() << "] declined at " << N.describe()
                      << ": " << Why << "\n";
    };
    backends::cpu::EpilogueFusionCounts Convs =
        backends::cpu::fuseConvEpilogues(G, Declined);
    backends::cpu::EpilogueFusionCounts Products =
        backends::cpu::fuseProductEpilogues(G, Declined);
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

std::unique_ptr<Pass> createCpuFuseEpiloguesPass() {
  return std::make_unique<CpuFuseEpiloguesPass>();
}

} // namespace nng::passes
