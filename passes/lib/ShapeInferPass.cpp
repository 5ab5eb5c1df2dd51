//===- ShapeInferPass.cpp - shape-infer: (re)infer value types ------------===//
//
// Runs ir::inferTypes over the graph: every node's output types are computed
// from its inputs and merged with what the values declare. Reports a change
// when any output type became more precise.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"

namespace nng::passes {
namespace {

class ShapeInferPass final : public Pass {
public:
  std::string_view name() const override { return "shape-infer"; }
  std::string_view summary() const override {
    return "infer every node's output dtype and shape from its inputs";
  }

  bool run(ir::Graph &G) override {
    std::vector<ir::TensorType> Before;
    for (const auto &N : G.nodes())
      for (ir::Value *V : N->outputs())
        Before.push_back(V->type());
    ir::inferTypes(G);
    size_t I = 0;
    int64_t Refined = 0;
    for (const auto &N : G.nodes())
      for (ir::Value *V : N->outputs())
        Refined += !(V->type() == Before[I++]);
    bumpStatistic("values-refined", Refined);
    return Refined != 0;
  }
};

} // namespace

std::unique_ptr<Pass> createShapeInferPass() {
  return std::make_unique<ShapeInferPass>();
}

} // namespace nng::passes
