//===- CpuFuseEpilogues.cpp - cpu-fuse-epilogues: conv epilogue rule ------===//
//
// The cpu backend's convolution epilogue rule as a pass: Conv, then a
// residual Add, then an activation become one nng.FusedConv carrying the
// residual as its Sum input and the activation as attributes
// (backends/cpu/FusionRules.h says when it fires). The cpu backend lists it
// in its pipelines before form-fused-regions, so that no fused region takes
// the Add or the activation; compileCpu runs the same rule on every graph it
// compiles, so a graph that ran no pipeline fuses alike. Each decline counts
// under its reason and prints under --debug-only=cpu-fuse-epilogues.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/passes/Debug.h"
#include "nngraph/passes/Passes.h"

namespace nng::passes {
namespace {

class CpuFuseEpiloguesPass final : public Pass {
public:
  std::string_view name() const override { return "cpu-fuse-epilogues"; }
  std::string_view summary() const override {
    return "fuse a Conv, the residual Add after it and the activation after "
           "that into one nng.FusedConv (the cpu backend's epilogue rule)";
  }

  bool run(ir::Graph &G) override {
    backends::cpu::EpilogueFusionCounts Counts = backends::cpu::fuseConvEpilogues(
        G, [this](const ir::Node &N, std::string_view Stat,
                  const std::string &Why) {
          bumpStatistic(Stat);
          if (debugEnabled(name()))
            debugStream() << "[" << name() << "] declined at " << N.describe()
                          << ": " << Why << "\n";
        });
    if (Counts.Fused > 0) {
      bumpStatistic("fused-convs", Counts.Fused);
      if (Counts.Sums > 0)
        bumpStatistic("fused-sums", Counts.Sums);
      if (Counts.Activations > 0)
        bumpStatistic("fused-activations", Counts.Activations);
    }
    return Counts.Fused > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createCpuFuseEpiloguesPass() {
  return std::make_unique<CpuFuseEpiloguesPass>();
}

} // namespace nng::passes
