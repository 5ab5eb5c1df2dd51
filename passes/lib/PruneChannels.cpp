//===- PruneChannels.cpp - prune-channels: structured channel pruning -----===//
//
// Removes whole channels so that the model really shrinks (smaller weights,
// fewer MACs), as Torch-Pruning's DepGraph does, on the graph itself. The
// analysis and the decision (which channel groups exist, which are left
// alone and why, which channels each keeps) are planChannelPruning's
// (ChannelPruning.h), shared with the module pruner; this pass applies the
// plan to the graph: every weight, bias, BatchNorm parameter and
// per-channel constant of a group is sliced to the kept channels (shared
// constants get private copies first), depthwise Convs' `group` follows, a
// Reshape acting as a flatten becomes a Flatten (its shape would be stale),
// and shapes are inferred again.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/ChannelPruning.h"
#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/rewrite/PatternRewriter.h"
#include "nngraph/passes/Passes.h"

#include <unordered_set>

namespace nng::passes {
namespace {

using ir::Node;
using ir::Value;

class PruneChannelsPass final : public Pass {
public:
  PruneChannelsPass() {
    declareOption("ratio", 0.5, "share of each group's channels removed");
    declareEnumOption("criterion", "l1", {"l1", "l2", "bn", "random"},
                      "channel importance: weight-row norm, BatchNorm "
                      "|scale| or random");
    declareOption("round", 8,
                  "kept channel counts are rounded up to a multiple of this");
    declareOption("exclude", "",
                  "comma-separated node name or scope patterns whose "
                  "channels stay");
    declareOption("seed", 0, "seed of the random criterion");
    declareOption("global", false,
                  "rank channels across all groups (importance relative to "
                  "each group's mean) instead of removing ratio of each");
  }
  std::string_view name() const override { return "prune-channels"; }
  std::string_view summary() const override {
    return "remove the least important channels of every prunable channel "
           "group (convolutions, linear layers; residuals prune together)";
  }
  bool run(ir::Graph &G) override;
};

bool PruneChannelsPass::run(ir::Graph &G) {
  ChannelPruningOptions O;
  O.Ratio = floatOption("ratio");
  O.Criterion = stringOption("criterion");
  O.Round = intOption("round");
  O.Exclude = splitPatterns(stringOption("exclude"));
  O.Global = boolOption("global");
  O.Seed = intOption("seed");
  std::unordered_set<const Value *> UnusedBefore =
      detail::unusedInitializers(G);
  ChannelPruningPlan Plan = planChannelPruning(G, O);

  // Slice every member of every group that loses channels.
  std::vector<Value *> Orphans; ///< Constants replaced by private copies.
  for (const ChannelGroupPlan &P : Plan.Groups) {
    for (const ChannelSlice &Sl : P.Slices) {
      Value *V = Sl.User->input(Sl.Input);
      rt::Tensor T =
          gatherChannels(*ir::constantValue(channelConstantSource(V)),
                         Sl.Axis, P.Kept, Sl.Multiplier);
      if (V->isInitializer() && V->uses().size() == 1 && !G.isOutput(V)) {
        V->setType(ir::TensorType(T.dtype(), T.shape()));
        V->setData(std::move(T));
      } else { // Shared or computed: this node gets its own copy.
        Sl.User->setInput(Sl.Input,
                          G.addInitializer(G.uniqueName(V->name()), T));
        Orphans.push_back(V);
      }
    }
    auto Keep = static_cast<int64_t>(P.Kept.size());
    for (Node *D : P.Depthwise)
      D->setAttr("group", ir::Attribute(Keep));
    for (Node *R : P.Reshapes) { // Its shape constant is stale now.
      ir::AttrMap A;
      A.set("axis", ir::Attribute(int64_t(1)));
      Node *F = G.addNode(ir::OpKind::Flatten, {R->input(0)},
                          {G.uniqueName(R->output(0)->name())}, std::move(A),
                          R);
      F->setName(R->name());
      F->setScope(R->scope());
      G.replaceAllUsesWith(R->output(0), F->output(0));
      G.eraseNode(R);
    }
    if (!P.FromConcat) {
      bumpStatistic("groups-pruned");
      bumpStatistic("channels-removed", P.Channels - Keep);
    }
  }
  for (const auto &[Why, Count] : Plan.LeftAlone)
    bumpStatistic("groups-left: " + Why, Count);
  if (Plan.Groups.empty())
    return false;
  for (Value *V : Orphans)
    if (V->isInitializer() && !V->hasUses() && !G.isOutput(V))
      G.eraseValue(V);
  eraseDeadNodes(G); // Identity/Constant nodes nothing reads any more.
  detail::eraseNewlyUnusedInitializers(G, UnusedBefore);
  // Every result's shape may change: infer them afresh.
  for (const auto &N : G.nodes())
    for (Value *V : N->outputs())
      if (V)
        V->setType(ir::TensorType(V->type().dtype()));
  ir::inferTypes(G);
  return true;
}

} // namespace

std::unique_ptr<Pass> createPruneChannelsPass() {
  return std::make_unique<PruneChannelsPass>();
}

} // namespace nng::passes
