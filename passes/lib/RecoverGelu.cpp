//===- RecoverGelu.cpp - recover-gelu: rebuild nng.Gelu -------------------===//
//
// Exporters spell GELU out. The exact form 0.5 * x * (1 + erf(x / sqrt 2))
// appears with Div(x, sqrt 2) or Mul(x, 1/sqrt 2), and with the product
// arranged as ((x * c) * 0.5), ((x * c) / 2), ((x * 0.5) * c) or
// (x * (c * 0.5)), c = 1 + erf(...). The tanh approximation
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) has x^3 as
// Pow(x, 3), (x * x) * x or x * (x * x) and the same product arrangements.
// Rooted at the Erf / Tanh, this pass matches these (commutative operands in
// either order, constants within a few ulps of their dtype) and replaces
// the chain by nng.Gelu(x) with approximate 'none' or 'tanh'. It declines,
// counting why, when a piece or constant differs or an intermediate value
// has other consumers.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

#include <cmath>

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// True when V is x^3: Pow(x, 3), Mul(Mul(x, x), x) or Mul(x, Mul(x, x)),
/// with single-use intermediates.
bool isCube(const ir::Graph &G, const ir::Value *V, const ir::Value *X) {
  const ir::Node *P = V->producer();
  if (!P || !hasSingleUse(G, V))
    return false;
  if (P->op() == OpKind::Pow) {
    std::optional<double> E = constantScalar(P->input(1));
    return P->input(0) == X && E && *E == 3.0;
  }
  if (P->op() != OpKind::Mul)
    return false;
  const ir::Value *Sq = otherOperand(*P, X);
  const ir::Node *SqN = Sq ? Sq->producer() : nullptr;
  return SqN && SqN->op() == OpKind::Mul && SqN->input(0) == X &&
         SqN->input(1) == X && hasSingleUse(G, Sq);
}

/// x of x / sqrt(2) or x * (1 / sqrt(2)).
ir::Value *erfInput(const ir::Value *A) {
  if (ir::Value *X = matchScalarOp(A, OpKind::Div, ir::GeluSqrt2))
    return X;
  return matchScalarOp(A, OpKind::Mul, 1.0 / ir::GeluSqrt2);
}

/// x of sqrt(2/pi) * (x + 0.044715 * x^3).
ir::Value *tanhInput(const ir::Graph &G, const ir::Value *U) {
  ir::Value *S = matchScalarOp(U, OpKind::Mul, ir::GeluTanhScale);
  const ir::Node *Sum = S ? S->producer() : nullptr;
  if (!Sum || Sum->op() != OpKind::Add || !hasSingleUse(G, S))
    return nullptr;
  for (size_t I = 0; I < 2; ++I) {
    ir::Value *X = Sum->input(I), *T = Sum->input(1 - I);
    ir::Value *Cube = matchScalarOp(T, OpKind::Mul, ir::GeluTanhCubic);
    if (Cube && hasSingleUse(G, T) && isCube(G, Cube, X))
      return X;
  }
  return nullptr;
}

/// The node computing 0.5 * x * C in one of the usual arrangements, or
/// null.
ir::Node *productTail(const ir::Graph &G, ir::Value *X, ir::Value *C) {
  ir::Node *U = singleUser(G, C);
  if (!U || U->op() != OpKind::Mul)
    return nullptr;
  ir::Value *Other = otherOperand(*U, C);
  if (Other == X) { // (x * c) * 0.5 or (x * c) / 2.
    if (ir::Node *F = consumerWithScalar(G, U->output(), OpKind::Mul, 0.5))
      return F;
    return consumerWithScalar(G, U->output(), OpKind::Div, 2.0);
  }
  if (Other && matchScalarOp(Other, OpKind::Mul, 0.5) == X)
    return U; // (x * 0.5) * c.
  std::optional<double> Half = constantScalar(Other);
  if (Half && near(*Half, 0.5, constantTolerance(C->type().dtype()))) {
    ir::Node *F = singleUser(G, U->output()); // x * (c * 0.5).
    if (F && F->op() == OpKind::Mul && otherOperand(*F, U->output()) == X)
      return F;
  }
  return nullptr;
}

/// The rule at the Erf or Tanh in the middle of a GELU chain.
bool recoverGelu(ir::Node &N, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  ir::Value *Arg = N.input(0);
  if (!hasSingleUse(G, Arg))
    return R.decline(N, "operand has other consumers");
  bool IsTanh = N.op() == OpKind::Tanh;
  ir::Value *X = IsTanh ? tanhInput(G, Arg) : erfInput(Arg);
  if (!X)
    return R.decline(N, IsTanh ? "operand is not sqrt(2/pi) * (x + "
                                 "0.044715 * x^3)"
                               : "operand is not x / sqrt(2)");
  if (!isFloatingPoint(X->type().dtype()))
    return R.decline(N, "not floating point");
  ir::Node *Plus1 = consumerWithScalar(G, N.output(), OpKind::Add, 1.0);
  if (!Plus1)
    return R.decline(N, "result does not feed only 1 + it");
  ir::Node *Final = productTail(G, X, Plus1->output());
  if (!Final)
    return R.decline(N, "not multiplied by 0.5 * x");
  if (!(Final->output()->type() == X->type()))
    return R.decline(N, "result shape differs from x's");
  ir::AttrMap Attrs;
  if (IsTanh)
    Attrs.set("approximate", ir::Attribute("tanh"));
  ir::Node *Gelu =
      R.create(OpKind::Gelu, {X},
               {G.uniqueName(Final->output()->name() + ".gelu")}, Attrs, Final);
  Gelu->setName(Final->name());
  Gelu->setScope(Final->scope());
  R.replaceWithNewValue(Final->output(), Gelu->output());
  R.eraseNode(&N);
  R.eraseNode(Final);
  return true;
}

} // namespace

std::unique_ptr<Pass> createRecoverGeluPass() {
  return std::make_unique<RulePass>(
      "recover-gelu",
      "replace exported Erf- and Tanh-based GELU chains by nng.Gelu",
      RewritePatternList{
          // 0.5 * x * (1 + Erf(x / sqrt 2)) -> nng.Gelu(x)
          {OpKind::Erf, "recover-gelu-erf", recoverGelu},
          // 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
          //   -> nng.Gelu(x){approximate = "tanh"}
          {OpKind::Tanh, "recover-gelu-tanh", recoverGelu},
      });
}

} // namespace nng::passes
