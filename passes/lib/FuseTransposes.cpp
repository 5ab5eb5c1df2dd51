//===- FuseTransposes.cpp - fuse-transposes: compose Transpose chains -----===//
//
// Transpose(Transpose(x, p), q) is one Transpose of x by the composed
// permutation c[i] = p[q[i]]; when c is the identity the pair is removed and
// x is used directly, and a lone identity Transpose is removed too. Driven by
// the greedy pattern driver, so whole chains collapse. The inner Transpose
// stays while something else uses it. The rules are canonicalize's
// (TransposeRules.cpp).
//
// Statistics: "compose-transposes", "remove-identity-transpose"; declines
// ("declined: PATTERN: REASON", printed under --debug-only=fuse-transposes):
// unknown rank (no 'perm' and an input of unknown rank), a result that is a
// graph output which would be renamed, a non-identity lone Transpose.
//
//===----------------------------------------------------------------------===//

#include "TransposeRules.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {

std::unique_ptr<Pass> createFuseTransposesPass() {
  return std::make_unique<RulePass>(
      "fuse-transposes",
      "compose consecutive Transposes into one (identity: removed)",
      detail::transposeRules());
}

} // namespace nng::passes
