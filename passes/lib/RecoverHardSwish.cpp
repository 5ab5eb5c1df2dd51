//===- RecoverHardSwish.cpp - recover-hardswish: rebuild HardSwish -------===//
//
// Exporters that lack HardSwish (PaddlePaddle's, older torch opsets) spell
// it out as x * Clip(x + 3, 0, 6) / 6, with the division as Div by 6 or Mul
// by 1/6 and the product's operands in either order. Rooted at the Clip,
// this pass matches that chain (constants within a few ulps of their
// dtype, every intermediate value read only by the next node) and replaces
// it by HardSwish(x), which the cpu backend fuses into the convolution
// before it as a post-op instead of running an Add, a Clip and a fused
// region (with the layout reorders around it) after it. Results agree with
// the chain's to rounding: HardSwish computes x * max(0, min(1, x / 6 +
// 0.5)) once; NaN and infinities give what the chain gives. It declines,
// counting why, when a piece or a constant differs or a value has other
// consumers.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// The rule at the Clip of x * Clip(x + 3, 0, 6) / 6.
bool recoverHardSwish(ir::Node &Clip, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  if (Clip.numInputs() != 3 || !Clip.hasInput(1) || !Clip.hasInput(2))
    return R.decline(Clip, "bounds are not inputs");
  std::optional<double> Lo = constantScalar(Clip.input(1)),
                        Hi = constantScalar(Clip.input(2));
  if (!Lo || !Hi || *Lo != 0.0 || *Hi != 6.0)
    return R.decline(Clip, "bounds are not the constants 0 and 6");
  ir::Value *Shifted = Clip.input(0);
  ir::Value *X = matchScalarOp(Shifted, OpKind::Add, 3.0);
  if (!X || !hasSingleUse(G, Shifted))
    return R.decline(Clip, "operand is not x + 3 read only here");
  if (!isFloatingPoint(X->type().dtype()))
    return R.decline(Clip, "not floating point");
  ir::Node *Prod = singleUser(G, Clip.output());
  if (!Prod || Prod->op() != OpKind::Mul ||
      otherOperand(*Prod, Clip.output()) != X)
    return R.decline(Clip, "result does not feed only x * it");
  ir::Node *Final = consumerWithScalar(G, Prod->output(), OpKind::Div, 6.0);
  if (!Final)
    Final = consumerWithScalar(G, Prod->output(), OpKind::Mul, 1.0 / 6.0);
  if (!Final)
    return R.decline(Clip, "product is not divided by 6");
  if (!(Final->output()->type() == X->type()))
    return R.decline(Clip, "result type differs from x's");
  ir::Node *HS =
      R.create(OpKind::HardSwish, {X},
               {G.uniqueName(Final->output()->name() + ".hswish")}, {}, Final);
  HS->setName(Final->name());
  HS->setScope(Final->scope());
  R.replaceWithNewValue(Final->output(), HS->output());
  R.eraseNode(Final);
  R.eraseNode(Prod);
  R.eraseNode(&Clip);
  R.eraseNode(Shifted->producer());
  return true;
}

} // namespace

std::unique_ptr<Pass> createRecoverHardSwishPass() {
  return std::make_unique<RulePass>(
      "recover-hardswish",
      "replace exported x * Clip(x + 3, 0, 6) / 6 chains by HardSwish",
      RewritePatternList{
          // x * Clip(x + 3, 0, 6) / 6 (or * 1/6) -> HardSwish(x)
          {OpKind::Clip, "recover-hardswish", recoverHardSwish},
      });
}

} // namespace nng::passes
