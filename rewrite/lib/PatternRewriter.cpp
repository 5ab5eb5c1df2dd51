//===- PatternRewriter.cpp - The greedy pattern driver -------------------===//
//
// The rewriter's edits (value replacement that keeps the graph's names) and
// the greedy driver, which indexes the rules by the ops they root at.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/PatternRewriter.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <unordered_map>

namespace nng::passes {

RootOps RootOps::any() {
  RootOps R;
  R.Any = true;
  return R;
}

bool RootOps::contains(ir::OpKind Op) const {
  return Any || std::find(Ops.begin(), Ops.end(), Op) != Ops.end();
}

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

ir::Value *PatternRewriter::addConstant(std::string_view Base, Tensor Data) {
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

bool PatternRewriter::replaceOp(ir::Node &N, ir::Value *To) {
  if (const char *Why = replaceBlocker(G, N.output(), To))
    return decline(N, Why);
  replaceValue(N.output(), To);
  eraseNode(&N);
  return true;
}

void PatternRewriter::replaceWithNewValue(ir::Value *Old, ir::Value *New) {
  std::string Name = Old->name();
  // Keep what the old type knew (a symbolic dim the new node's inference
  // cannot see, for instance).
  if (std::optional<ir::TensorType> T =
          ir::mergeTypes(New->type(), Old->type()))
    New->setType(*T);
  // replaceValue already hands a graph output's name over; do the same for
  // any other value.
  replaceValue(Old, New);
  if (New->name() != Name) {
    G.rename(Old, G.uniqueName(Name + ".old"));
    G.rename(New, Name);
  }
}

ir::Value *PatternRewriter::replaceWithInitializer(ir::Value *Old,
                                                   Tensor Data) {
  ir::Value *Init = addConstant(Old->name(), std::move(Data));
  replaceWithNewValue(Old, Init);
  return Init;
}

const char *replaceBlocker(const ir::Graph &G, const ir::Value *From,
                           const ir::Value *To) {
  if (!G.isOutput(From))
    return nullptr;
  // replaceValue hands From's name to To, which works only when To is a
  // node output that is not a graph output itself.
  if (G.isOutput(To))
    return "two graph outputs would merge";
  if (!To->producer())
    return "graph output would be renamed to an input or initializer";
  return nullptr;
}

void PatternRewriter::eraseNode(ir::Node *N) { Erased.insert(N); }

bool PatternRewriter::decline(const ir::Node &N, std::string_view Reason) {
  std::string Pattern = Current ? Current->Name : std::string("pattern");
  std::string Stat = "declined: " + Pattern + ": " + std::string(Reason);
  // A node declines again in every sweep of the driver; count it once. The
  // first output's name identifies the node (value names are unique).
  Owner.bumpStatisticOnce(
      Stat, (N.numOutputs() ? N.output(0)->name() : N.name()) + '\n' + Stat);
  if (debugEnabled(Owner.name()))
    debugStream() << "[" << Owner.name() << "] " << Pattern << " declined at "
                  << N.describe() << ": " << Reason << "\n";
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

namespace {

/// The rules rooted at each op, in list order (any-op rules included),
/// gathered on the first node of that op.
class PatternIndex {
public:
  explicit PatternIndex(const RewritePatternList &Patterns)
      : Patterns(Patterns) {}
  const std::vector<const RewritePattern *> &at(ir::OpKind Op) {
    auto [It, New] = ByRoot.try_emplace(Op);
    if (New)
      for (const RewritePattern &P : Patterns)
        if (P.Roots.contains(Op))
          It->second.push_back(&P);
    return It->second;
  }

private:
  const RewritePatternList &Patterns;
  std::unordered_map<ir::OpKind, std::vector<const RewritePattern *>> ByRoot;
};

} // namespace

bool applyPatternsGreedily(ir::Graph &G, const RewritePatternList &Patterns,
                           Pass &Owner, int MaxIterations) {
  PatternIndex Index(Patterns);
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
      for (const RewritePattern *P : Index.at(N->op())) {
        R.setCurrentPattern(P);
        if (P->MatchAndRewrite(*N, R)) {
          Owner.bumpStatistic(P->Name);
          if (debugEnabled(Owner.name()))
            debugStream() << "[" << Owner.name() << "] " << P->Name
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
