//===- DeadCodeElimination.cpp - dce: remove unused nodes and weights -----===//
//
// Removes every node none of whose outputs is used or is a graph output
// (walking backwards, so whole dead chains go in one run), then every
// initializer that nothing uses. Graph inputs are the model's interface and
// stay even when unused. No op of the table has side effects, so a node
// with dead outputs is always safe to remove.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Passes.h"

namespace nng::passes {
namespace {

class DeadCodeEliminationPass final : public Pass {
public:
  std::string_view name() const override { return "dce"; }
  bool entersRegions() const override { return true; }
  std::string_view summary() const override {
    return "remove nodes whose results are unused and unused initializers";
  }

  bool run(ir::Graph &G) override {
    // Collect dead nodes back to front: erasing a node frees its inputs'
    // uses, which may make their producers dead in turn.
    int64_t NodesErased = 0;
    for (size_t I = G.numNodes(); I-- > 0;) {
      ir::Node *N = G.nodes()[I].get();
      if (isDead(G, *N)) {
        G.eraseNode(N);
        ++NodesErased;
      }
    }
    std::vector<ir::Value *> DeadInits;
    for (ir::Value *V : G.initializers())
      if (!V->hasUses() && !G.isOutput(V))
        DeadInits.push_back(V);
    for (ir::Value *V : DeadInits)
      G.eraseValue(V);
    bumpStatistic("nodes-erased", NodesErased);
    bumpStatistic("initializers-erased",
                  static_cast<int64_t>(DeadInits.size()));
    return NodesErased != 0 || !DeadInits.empty();
  }

private:
  static bool isDead(const ir::Graph &G, const ir::Node &N) {
    for (ir::Value *V : N.outputs())
      if (V->hasUses() || G.isOutput(V))
        return false;
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createDeadCodeEliminationPass() {
  return std::make_unique<DeadCodeEliminationPass>();
}

} // namespace nng::passes
