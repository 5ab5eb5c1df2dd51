//===- RulePass.cpp - A pass made of a rewrite-rule list ------------------===//
//
// Implementation of RulePass.h: the greedy driver's rounds and the cleanup
// of the initializers the rewrites orphaned.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RulePass.h"
#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"

namespace nng::passes {

RulePass::RulePass(std::string Name, std::string Summary,
                   RewritePatternList Rules)
    : Name(std::move(Name)), Summary(std::move(Summary)),
      Rules(std::move(Rules)) {}

bool RulePass::run(ir::Graph &G) {
  auto UnusedBefore = detail::unusedInitializers(G);
  RewritePatternList Patterns = rules();
  bool Changed = false;
  for (int Round = 0; Round < Rounds; ++Round) {
    if (!applyPatternsGreedily(G, Patterns, *this))
      break;
    Changed = true;
    if (Rounds > 1)
      ir::inferTypes(G);
  }
  int64_t Erased = detail::eraseNewlyUnusedInitializers(G, UnusedBefore);
  bumpStatistic("initializers-erased", Erased);
  return Changed || Erased > 0;
}

} // namespace nng::passes
