//===- RecoverLayerNorm.cpp - recover-layernorm ---------------------------===//
//
// Exporters (PyTorch before opset 17, TensorFlow) spell layer normalization
// out as
//   m = ReduceMean(x, axes); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes)
//   y = Div(d, Sqrt(Add(v, eps)))            [then Mul(y, scale), Add(_, bias)]
// with Mul(d, d) in place of Pow(d, 2) in some. Rooted at the Div, this pass
// matches the chain (both reductions over the same trailing axes with
// keepdims, a constant scalar eps, either Add operand order) and replaces it
// with one LayerNormalization (axis = the first reduced axis counted from
// the end, epsilon = eps), taking a following Mul and Add by constants that
// broadcast over the normalized axes as Scale and B (else Scale is ones).
// It declines, counting why, when a piece is missing, the axes differ or
// are not trailing, eps or the exponent is not a constant, or an
// intermediate value has other consumers (or is a graph output).
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

#include <algorithm>

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// The producer of V when it is op K, else null.
ir::Node *producedBy(const ir::Value *V, OpKind K) {
  ir::Node *P = V ? V->producer() : nullptr;
  return P && P->op() == K ? P : nullptr;
}

/// The first reduced axis of a keepdims ReduceMean over trailing axes of a
/// rank-Rank input, or -1.
int64_t trailingAxis(const ir::Node &RM, int64_t Rank) {
  if (RM.attrInt("keepdims") != 1)
    return -1;
  std::vector<int64_t> Axes = RM.attrInts("axes");
  if (Axes.empty())
    return 0;
  for (int64_t &A : Axes) {
    if (A < -Rank || A >= Rank)
      return -1;
    A = A < 0 ? A + Rank : A;
  }
  std::sort(Axes.begin(), Axes.end());
  for (size_t I = 0; I < Axes.size(); ++I)
    if (Axes[I] != Rank - static_cast<int64_t>(Axes.size() - I))
      return -1;
  return Axes.front();
}

/// The element count of S.
int64_t shapeNumel(const Shape &S) { return S.numel(); }

/// The constant other operand of N (whose one operand is V) when it
/// broadcasts over the normalized axes without changing V's shape.
Tensor affineOperand(const ir::Node &N, const ir::Value *V, int64_t Axis) {
  ir::Value *C = otherOperand(N, V);
  const Tensor *T = C ? ir::constantValue(C) : nullptr;
  if (!T || !T->defined() || T->dtype() != V->type().dtype() ||
      !(N.output()->type() == V->type()))
    return {};
  const ir::TensorType &VT = V->type();
  if (static_cast<int64_t>(T->rank()) > VT.rank() - Axis)
    return {};
  for (size_t I = 0; I < T->rank(); ++I) {
    const ir::Dim &D = VT.dim(VT.rank() - T->rank() + I);
    if (T->size(I) != 1 && !(D.isStatic() && D.value() == T->size(I)))
      return {};
  }
  return *T;
}

/// The rule at the Div that ends the chain.
bool recoverLayerNorm(ir::Node &Div, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  ir::Value *D = Div.input(0);
  ir::Node *Sqrt = producedBy(Div.input(1), OpKind::Sqrt);
  ir::Node *Sub = producedBy(D, OpKind::Sub);
  if (!Sqrt || !Sub)
    return R.decline(Div, "not (x - mean) / Sqrt(...)");
  ir::Node *AddEps = producedBy(Sqrt->input(0), OpKind::Add);
  if (!AddEps)
    return R.decline(Div, "Sqrt operand is not var + eps");
  ir::Value *Var = nullptr;
  std::optional<double> Eps;
  for (size_t I = 0; I < 2 && !Eps; ++I)
    if ((Eps = constantScalar(AddEps->input(I))))
      Var = AddEps->input(1 - I);
  if (!Eps)
    return R.decline(Div, "epsilon is not a constant scalar");
  ir::Node *VarRM = producedBy(Var, OpKind::ReduceMean);
  if (!VarRM)
    return R.decline(Div, "variance is not a ReduceMean");
  ir::Node *Sq = VarRM->input(0)->producer();
  bool SqIsMul =
      Sq && Sq->op() == OpKind::Mul && Sq->input(0) == D && Sq->input(1) == D;
  bool SqIsPow = Sq && Sq->op() == OpKind::Pow && Sq->input(0) == D;
  if (SqIsPow) {
    std::optional<double> E = constantScalar(Sq->input(1));
    if (!E || *E != 2.0)
      return R.decline(Div, "Pow exponent is not the constant 2");
  } else if (!SqIsMul) {
    return R.decline(Div, "variance is not of Pow(x - mean, 2) or "
                          "Mul(x - mean, x - mean)");
  }
  ir::Value *X = Sub->input(0);
  ir::Node *MeanRM = producedBy(Sub->input(1), OpKind::ReduceMean);
  if (!MeanRM || MeanRM->input(0) != X)
    return R.decline(Div, "subtrahend is not ReduceMean of the minuend");
  const ir::TensorType &XT = X->type();
  if (!XT.hasRank() || XT.rank() == 0 || !isFloatingPoint(XT.dtype()) ||
      !(Div.output()->type() == XT))
    return R.decline(Div, "input is not floating point of known rank");
  int64_t Rank = XT.rank();
  int64_t Axis = trailingAxis(*MeanRM, Rank);
  if (Axis < 0 || trailingAxis(*VarRM, Rank) != Axis ||
      MeanRM->attrInts("axes").size() != VarRM->attrInts("axes").size())
    return R.decline(Div, "reductions are not over the same trailing axes "
                          "with keepdims");
  // Every intermediate value feeds only the chain.
  size_t DUses = SqIsMul ? 3 : 2;
  if (!hasSingleUse(G, Sub->input(1)) || D->uses().size() != DUses ||
      G.isOutput(D) || !hasSingleUse(G, Sq->output()) ||
      !hasSingleUse(G, Var) || !hasSingleUse(G, AddEps->output()) ||
      !hasSingleUse(G, Sqrt->output()))
    return R.decline(Div, "an intermediate value has other consumers");

  // Optional affine tail: Mul by a constant scale, Add of a constant bias.
  Shape NormShape;
  bool StaticNorm = true;
  for (int64_t I = Axis; I < Rank; ++I) {
    StaticNorm = StaticNorm && XT.dim(I).isStatic();
    NormShape.push_back(StaticNorm ? XT.dim(I).value() : 1);
  }
  ir::Value *Out = Div.output();
  Tensor Scale, Bias;
  if (ir::Node *M = singleUser(G, Out); M && M->op() == OpKind::Mul)
    if ((Scale = affineOperand(*M, Out, Axis)).defined())
      Out = M->output();
  if (ir::Node *A = singleUser(G, Out); A && A->op() == OpKind::Add)
    if ((Bias = affineOperand(*A, Out, Axis)).defined())
      Out = A->output();
  if (!Scale.defined())
    Scale = makeTensor(
        std::vector<double>(StaticNorm ? shapeNumel(NormShape) : 1, 1.0),
        StaticNorm ? NormShape : Shape{1}, XT.dtype());
  if (StaticNorm) {
    Scale = Scale.broadcastTo(NormShape).contiguous();
    if (Bias.defined())
      Bias = Bias.broadcastTo(NormShape).contiguous();
  }
  std::vector<ir::Value *> Ins{X,
                               R.addConstant(X->name() + ".ln_scale", Scale)};
  if (Bias.defined())
    Ins.push_back(R.addConstant(X->name() + ".ln_bias", Bias));
  ir::AttrMap Attrs;
  if (Axis - Rank != -1) // Counted from the end, as exporters write it.
    Attrs.set("axis", ir::Attribute(Axis - Rank));
  Attrs.set("epsilon", ir::Attribute(static_cast<float>(*Eps)));
  ir::Node *LN =
      R.create(OpKind::LayerNormalization, Ins,
               {G.uniqueName(Out->name() + ".ln")}, Attrs, Out->producer());
  LN->setName(Div.name());
  LN->setScope(Div.scope());
  R.replaceWithNewValue(Out, LN->output());
  return true;
}

} // namespace

std::unique_ptr<Pass> createRecoverLayerNormPass() {
  return std::make_unique<RulePass>(
      "recover-layernorm",
      "replace ReduceMean/Sub/Pow/Sqrt/Div chains by LayerNormalization",
      RewritePatternList{
          // (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* s + b]
          //   -> LayerNormalization(x, s, b){epsilon = eps}
          {OpKind::Div, "recover-layernorm", recoverLayerNorm},
      });
}

} // namespace nng::passes
