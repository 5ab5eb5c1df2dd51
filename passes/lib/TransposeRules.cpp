//===- TransposeRules.cpp - The Transpose rules of two passes -------------===//
//
// Transpose(Transpose(x, p), q) is one Transpose of x by the composed
// permutation c[i] = p[q[i]], and x itself when c is the identity; a lone
// identity Transpose is x. Both decline (counted) when a rank is unknown
// (no 'perm' and an input of unknown rank) or a graph output would be
// renamed. The inner Transpose stays while something else uses it.
//
//===----------------------------------------------------------------------===//

#include "TransposeRules.h"
#include "nngraph/rewrite/RewriteUtils.h"

namespace nng::passes::detail {
namespace {

using ir::OpKind;

bool composeTransposes(ir::Node &N, PatternRewriter &R) {
  ir::Node *P = N.input(0)->producer();
  if (!P || P->op() != OpKind::Transpose)
    return false;
  std::optional<std::vector<int64_t>> Inner = transposePerm(*P);
  std::optional<std::vector<int64_t>> Outer = transposePerm(N);
  if (!Inner || !Outer)
    return R.decline(N, "rank unknown");
  if (Inner->size() != Outer->size())
    return R.decline(N, "permutations of different ranks");
  std::vector<int64_t> Perm = composePerms(*Inner, *Outer);
  if (isIdentityPerm(Perm))
    return R.replaceOp(N, P->input(0));
  ir::AttrMap A;
  A.set("perm", Perm);
  ir::Node *T = R.create(OpKind::Transpose, {P->input(0)}, {N.output()->name()},
                         std::move(A), &N);
  T->setScope(N.scope());
  R.replaceWithNewValue(N.output(), T->output());
  R.eraseNode(&N);
  return true;
}

bool removeIdentityTranspose(ir::Node &N, PatternRewriter &R) {
  std::optional<std::vector<int64_t>> Perm = transposePerm(N);
  if (!Perm)
    return R.decline(N, "rank unknown");
  if (!isIdentityPerm(*Perm))
    return R.decline(N, "perm is not the identity");
  return R.replaceOp(N, N.input(0));
}

} // namespace

RewritePatternList transposeRules() {
  return {
      // Transpose(Transpose(x, p), q) -> Transpose(x, p∘q), or x if p∘q = id
      {OpKind::Transpose, "compose-transposes", composeTransposes},
      // Transpose(x, id) -> x
      {OpKind::Transpose, "remove-identity-transpose", removeIdentityTranspose},
  };
}

} // namespace nng::passes::detail
