//===- FuseTransposes.cpp - fuse-transposes: compose Transpose chains -----===//
//
// Transpose(Transpose(x, p), q) is one Transpose of x by the composed
// permutation c[i] = p[q[i]]; when c is the identity the pair is removed and
// x is used directly, and a lone identity Transpose is removed too. Driven by
// the greedy pattern driver, so whole chains collapse. The inner Transpose
// stays while something else uses it.
//
// Statistics: "compose-transposes", "remove-identity-transpose"; declines
// ("declined: PATTERN: REASON", printed under --debug-only=fuse-transposes):
// unknown rank (no 'perm' and an input of unknown rank), a result that is a
// graph output which would be renamed, a non-identity lone Transpose.
//
//===----------------------------------------------------------------------===//

#include "RewriteUtils.h"
#include "nngraph/passes/Passes.h"

namespace nng::passes {
namespace {

using namespace detail;

/// Forwards N's result to To unless that changes the graph's interface.
bool forward(ir::Node &N, ir::Value *To, PatternRewriter &R) {
  if (const char *Why = replaceBlocker(R.graph(), N.output(), To))
    return R.decline(N, Why);
  R.replaceValue(N.output(), To);
  R.eraseNode(&N);
  return true;
}

class ComposeTransposesPattern final : public RewritePattern {
public:
  ComposeTransposesPattern()
      : RewritePattern(ir::OpKind::Transpose, "compose-transposes") {}
  bool matchAndRewrite(ir::Node &N, PatternRewriter &R) const override {
    ir::Node *P = N.input(0)->producer();
    if (!P || P->op() != ir::OpKind::Transpose)
      return false;
    std::optional<std::vector<int64_t>> Inner = transposePerm(*P);
    std::optional<std::vector<int64_t>> Outer = transposePerm(N);
    if (!Inner || !Outer)
      return R.decline(N, "rank unknown");
    if (Inner->size() != Outer->size())
      return R.decline(N, "permutations of different ranks");
    std::vector<int64_t> Perm = composePerms(*Inner, *Outer);
    if (isIdentityPerm(Perm))
      return forward(N, P->input(0), R);
    ir::AttrMap A;
    A.set("perm", Perm);
    ir::Node *T = R.create(ir::OpKind::Transpose, {P->input(0)},
                           {N.output()->name()}, std::move(A), &N);
    T->setScope(N.scope());
    replaceWithNewValue(R, N.output(), T->output());
    R.eraseNode(&N);
    return true;
  }
};

class RemoveIdentityTransposePattern final : public RewritePattern {
public:
  RemoveIdentityTransposePattern()
      : RewritePattern(ir::OpKind::Transpose, "remove-identity-transpose") {}
  bool matchAndRewrite(ir::Node &N, PatternRewriter &R) const override {
    std::optional<std::vector<int64_t>> Perm = transposePerm(N);
    if (!Perm)
      return R.decline(N, "rank unknown");
    if (!isIdentityPerm(*Perm))
      return R.decline(N, "perm is not the identity");
    return forward(N, N.input(0), R);
  }
};

class FuseTransposesPass final : public Pass {
public:
  std::string_view name() const override { return "fuse-transposes"; }
  std::string_view summary() const override {
    return "compose consecutive Transposes into one (identity: removed)";
  }
  bool run(ir::Graph &G) override {
    std::vector<std::unique_ptr<RewritePattern>> Patterns;
    Patterns.push_back(std::make_unique<ComposeTransposesPattern>());
    Patterns.push_back(std::make_unique<RemoveIdentityTransposePattern>());
    return applyPatternsGreedily(G, Patterns, *this);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseTransposesPass() {
  return std::make_unique<FuseTransposesPass>();
}

} // namespace nng::passes
