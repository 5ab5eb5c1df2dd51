//===- FuseReshapes.cpp - fuse-reshapes: collapse reshape-like chains -----===//
//
// Reshape, Flatten, Squeeze and Unsqueeze only reinterpret the shape of
// row-major data, so a chain of them equals one Reshape of the chain's input
// to the chain's final shape. A node of this family whose input comes from
// another one is replaced by Reshape(input of the producer, final shape)
// when that shape is known: fully static, or static but for one dim, which
// the new Reshape then infers (-1). Driven greedily, so whole chains
// collapse. A chain (even of one node) whose final shape equals its input's
// static shape is removed altogether. Producers stay while something else
// uses them; shape constants left unused are erased.
//
// Statistics: "collapse-reshape-chain" (nodes rewritten), of which
// "noop-chains-removed"; "initializers-erased"; declines ("declined:
// collapse-reshape-chain: REASON", printed under --debug-only=fuse-reshapes): a
// result shape with more than one non-static dim (or unknown rank), a
// non-static dim next to a zero-size one, a graph output that would be renamed.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace detail;

/// True for the ops that only reinterpret the shape of row-major data.
bool isReshapeLike(ir::OpKind Op) {
  return Op == ir::OpKind::Reshape || Op == ir::OpKind::Flatten ||
         Op == ir::OpKind::Squeeze || Op == ir::OpKind::Unsqueeze;
}

/// Replaces N's result by the chain's input X, which has the same shape.
bool removeChain(ir::Node &N, ir::Value *X, PatternRewriter &R) {
  if (!R.replaceOp(N, X))
    return false;
  R.owner().bumpStatistic("noop-chains-removed");
  return true;
}

/// The rule at a reshape-like node (see the file comment).
bool collapseReshapeChain(ir::Node &N, PatternRewriter &R) {
  ir::Node *P = N.input(0)->producer();
  const ir::TensorType &Out = N.output()->type();
  if (!P || !isReshapeLike(P->op())) {
    // A chain of one: only removed when it changes nothing.
    std::optional<Shape> In = N.input(0)->type().staticShape();
    if (!In || In != Out.staticShape())
      return false;
    return removeChain(N, N.input(0), R);
  }
  ir::Value *X = P->input(0);
  if (!Out.hasRank())
    return R.decline(N, "result rank unknown");
  // The final shape, with -1 for at most one non-static dim.
  std::vector<int64_t> Dims;
  int Unknown = 0;
  bool HasZero = false;
  for (const ir::Dim &D : Out.dims()) {
    Unknown += !D.isStatic();
    HasZero |= D.isStatic() && D.value() == 0;
    Dims.push_back(D.isStatic() ? D.value() : -1);
  }
  if (Unknown > 1)
    return R.decline(N, "result shape is not static");
  if (Unknown == 1 && HasZero)
    return R.decline(N, "non-static dim next to a zero-size dim");
  if (std::optional<Shape> In = X->type().staticShape();
      In && Unknown == 0 && In->dims() == Dims)
    return removeChain(N, X, R);
  ir::Value *ShapeV =
      R.addConstant(N.output()->name() + ".shape", shapeTensor(Dims));
  ir::AttrMap A;
  if (HasZero) // A 0 means "zero", not "copy the input dim".
    A.set("allowzero", int64_t(1));
  ir::Node *Re = R.create(ir::OpKind::Reshape, {X, ShapeV},
                          {N.output()->name()}, std::move(A), &N);
  Re->setScope(N.scope());
  R.replaceWithNewValue(N.output(), Re->output());
  R.eraseNode(&N);
  return true;
}

} // namespace

std::unique_ptr<Pass> createFuseReshapesPass() {
  return std::make_unique<RulePass>(
      "fuse-reshapes",
      "collapse Reshape/Flatten/Squeeze/Unsqueeze chains into one Reshape",
      RewritePatternList{
          // r2(r1(x)) -> Reshape(x, shape of r2's result), or x when that is
          // x's shape (r1, r2: Reshape, Flatten, Squeeze, Unsqueeze)
          {{ir::OpKind::Reshape, ir::OpKind::Flatten, ir::OpKind::Squeeze,
            ir::OpKind::Unsqueeze},
           "collapse-reshape-chain",
           collapseReshapeChain},
      });
}

} // namespace nng::passes
