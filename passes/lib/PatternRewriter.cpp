//===- PatternRewriter.cpp - The greedy pattern driver -------------------===//

#include "nngraph/passes/PatternRewriter.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Debug.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>

namespace nng::passes {

RewritePattern::~RewritePattern() = default;

ir::Node *PatternRewriter::create(ir::OpKind Op, std::vector<ir::Value *> Ins,
                                  std::vector<std::string> OutputNames,
                                  ir::AttrMap Attrs, ir::Node *InsertBefore) {
  ir::Node *N = G.addNode(Op, std::move(Ins), std::move(OutputNames),
                          std::move(Attrs), InsertBefore);
  std::vector<ir::TensorType> Types = ir::inferNodeTypes(*N);
  for (size_t I = 0; I < N->numOutputs(); ++I)
    N->output(I)->setType(Types[I]);
  return N;
}

ir::Value *PatternRewriter::addConstant(std::string_view Base,
                                        Tensor Data) {
  return G.addInitializer(G.uniqueName(Base), std::move(Data));
}

void PatternRewriter::replaceValue(ir::Value *From, ir::Value *To) {
  if (From == To)
    return;
  bool WasOutput = G.isOutput(From);
  G.replaceAllUsesWith(From, To);
  // Keep the graph interface's names: the replacement takes the old name
  // when it is a node output that is not already a graph input/initializer.
  if (WasOutput && To->producer() && !From->hasUses()) {
    std::string Name = From->name();
    std::string Tmp = G.uniqueName(Name + ".replaced");
    G.rename(From, Tmp);
    G.rename(To, Name);
  }
}

void PatternRewriter::eraseNode(ir::Node *N) { Erased.insert(N); }

bool PatternRewriter::decline(const ir::Node &N, std::string_view Reason) {
  std::string Pattern = Current ? Current->name() : std::string("pattern");
  std::string Stat = "declined: " + Pattern + ": " + std::string(Reason);
  // A node declines again in every sweep of the driver; count it once. The
  // first output's name identifies the node (value names are unique).
  Owner.bumpStatisticOnce(Stat,
                          (N.numOutputs() ? N.output(0)->name() : N.name()) +
                              '\n' + Stat);
  if (debugEnabled(Owner.name()))
    debugStream() << "[" << Owner.name() << "] " << Pattern
                  << " declined at " << N.describe() << ": " << Reason
                  << "\n";
  return false;
}

size_t eraseDeadNodes(ir::Graph &G) {
  size_t Erased = 0;
  // Walk backwards so a chain of dead nodes goes in one sweep.
  for (size_t I = G.nodes().size(); I-- > 0;) {
    ir::Node *N = G.nodes()[I].get();
    bool Dead = true;
    for (ir::Value *O : N->outputs())
      if (O->hasUses() || G.isOutput(O))
        Dead = false;
    if (Dead) {
      G.eraseNode(N);
      ++Erased;
    }
  }
  return Erased;
}

bool applyPatternsGreedily(
    ir::Graph &G, const std::vector<std::unique_ptr<RewritePattern>> &Patterns,
    Pass &Owner, int MaxIterations) {
  std::unordered_map<ir::OpKind, std::vector<const RewritePattern *>> ByRoot;
  for (const auto &P : Patterns)
    ByRoot[P->root()].push_back(P.get());
  bool Changed = false;
  for (int Iter = 0;; ++Iter) {
    if (Iter == MaxIterations) {
      Owner.bumpStatistic("iteration-cap-reached");
      break;
    }
    PatternRewriter R(G, Owner);
    bool SweepChanged = false;
    std::vector<ir::Node *> Worklist;
    for (const auto &N : G.nodes())
      Worklist.push_back(N.get());
    for (ir::Node *N : Worklist) {
      if (R.isErased(N))
        continue;
      auto It = ByRoot.find(N->op());
      if (It == ByRoot.end())
        continue;
      for (const RewritePattern *P : It->second) {
        R.setCurrentPattern(P);
        if (P->matchAndRewrite(*N, R)) {
          Owner.bumpStatistic(P->name());
          if (debugEnabled(Owner.name()))
            debugStream() << "[" << Owner.name() << "] " << P->name()
                          << " applied\n";
          SweepChanged = true;
          break;
        }
      }
    }
    // New nodes were appended or inserted; restore topological order, then
    // drop what the rewrites left dead.
    if (SweepChanged) {
      G.topologicalSort();
      eraseDeadNodes(G);
      Changed = true;
    } else {
      break;
    }
  }
  return Changed;
}

} // namespace nng::passes
