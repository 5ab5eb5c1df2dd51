//===- FuseAttention.cpp - fuse-attention: one nng.Attention --------------===//
//
// Transformer exports compute scaled dot-product attention as
//   MatMul(Q, Kt) -> Div or Mul by a constant scalar -> [Add mask] ->
//   Softmax(last axis) -> MatMul(P, V)
// (torch's nn.MultiheadAttention scales Q instead: Div/Mul(Q) -> MatMul).
// Rooted at the Softmax, this pass matches that chain and replaces it by
// one nng.Attention(Q, K, V, mask?) {scale, k_transposed}, which the cpu
// backend runs as one kernel whose scores never reach memory. Kt is read
// as it comes: a Transpose of the last two axes of some K is absorbed (the
// op reads K as [.., N, D]); any other Kt stays an operand given as
// [.., D, N] (k_transposed = 1). The mask may be of any shape that
// broadcasts to the scores without growing their last two axes. The pass
// declines, counting why, when an intermediate value has other consumers
// or is a graph output, the scale is not a constant scalar, the softmax is
// over another axis, or shapes do not fit.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// When V is Mul(x, c) or Mul(c, x) or Div(x, c) with c a constant scalar
/// whose rank does not exceed x's, x and the factor it is multiplied by
/// (1/c for Div); else nullopt.
std::optional<std::pair<ir::Value *, double>> scaledValue(const ir::Value *V) {
  const ir::Node *N = V ? V->producer() : nullptr;
  if (!N || (N->op() != OpKind::Mul && N->op() != OpKind::Div) ||
      N->numInputs() != 2)
    return std::nullopt;
  bool IsDiv = N->op() == OpKind::Div;
  for (size_t C = IsDiv ? 1 : 0; C < 2; ++C) {
    ir::Value *X = N->input(1 - C), *K = N->input(C);
    std::optional<double> S = constantScalar(K);
    if (!S || !*S || !K->type().hasRank() || !X->type().hasRank() ||
        K->type().rank() > X->type().rank())
      continue;
    return std::make_pair(X, IsDiv ? 1.0 / *S : *S);
  }
  return std::nullopt;
}

/// True when T is a Transpose swapping only the last two axes.
bool swapsLastTwo(const ir::Node &T) {
  if (T.op() != OpKind::Transpose || !T.attrs().has("perm"))
    return false;
  std::vector<int64_t> P = T.attrInts("perm");
  int64_t R = static_cast<int64_t>(P.size());
  if (R < 2)
    return false;
  for (int64_t I = 0; I < R; ++I)
    if (P[I] != (I < R - 2 ? I : 2 * R - 3 - I))
      return false;
  return true;
}

/// True when a mask of type M broadcast against scores of type S may keep
/// the scores' last two extents: each of M's is a static 1, the scores'
/// own, or unknown on either side (exported graphs often lose them; a
/// mask that grows the scores at run time then fails nng.Attention's
/// inference there, never computes something else).
bool maskFits(const ir::TensorType &M, const ir::TensorType &S) {
  if (!M.hasRank() || !S.hasRank())
    return false;
  for (int64_t I = 1; I <= 2; ++I) {
    if (M.rank() < I)
      continue;
    const ir::Dim &D = M.dim(M.rank() - I), &SD = S.dim(S.rank() - I);
    bool One = D.isStatic() && D.value() == 1;
    bool Same = D == SD;
    if (!One && !Same && !D.isUnknown() && !SD.isUnknown())
      return false;
  }
  return true;
}

/// The rule at the Softmax of an attention.
bool fuseAttention(ir::Node &Sm, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  ir::Value *S = Sm.input(0);
  const ir::TensorType &ST = S->type();
  if (!ST.hasRank() || ST.rank() < 2 || !isFloatingPoint(ST.dtype()))
    return R.decline(Sm, "scores are not floating point of rank >= 2");
  int64_t Axis = Sm.attrInt("axis");
  if (Axis != -1 && Axis != ST.rank() - 1)
    return R.decline(Sm, "softmax is not over the last axis");
  ir::Node *PV = singleUser(G, Sm.output());
  if (!PV || PV->op() != OpKind::MatMul || PV->input(0) != Sm.output())
    return R.decline(Sm, "probabilities do not feed only a MatMul's left "
                         "operand");
  if (!hasSingleUse(G, S))
    return R.decline(Sm, "scores have other consumers");

  // [Add(scores, mask)], either operand order.
  ir::Value *X = S, *Mask = nullptr;
  ir::Node *AddN = nullptr;
  if (S->producer() && S->producer()->op() == OpKind::Add) {
    AddN = S->producer();
    for (size_t I = 0; I < 2 && !Mask; ++I) {
      ir::Value *A = AddN->input(I);
      const ir::Node *P = A->producer();
      if (P && (P->op() == OpKind::MatMul || scaledValue(A)) &&
          hasSingleUse(G, A)) {
        X = A;
        Mask = AddN->input(1 - I);
      }
    }
    if (!Mask)
      return R.decline(Sm, "scores are an Add of no product");
    if (!maskFits(Mask->type(), X->type()))
      return R.decline(Sm, "mask may grow the scores' last two axes");
  }
  // Scale after the product, or on Q before it.
  double Scale = 1;
  ir::Node *ScaleN = nullptr, *QScaleN = nullptr;
  if (auto Sc = scaledValue(X)) {
    ScaleN = X->producer();
    X = Sc->first;
    Scale = Sc->second;
    if (!hasSingleUse(G, X))
      return R.decline(Sm, "unscaled scores have other consumers");
  }
  ir::Node *MM = X->producer();
  if (!MM || MM->op() != OpKind::MatMul)
    return R.decline(Sm, "scores are not a MatMul (scaled by a constant)");
  ir::Value *Q = MM->input(0), *Kt = MM->input(1), *V = PV->input(1);
  if (!ScaleN)
    if (auto Sc = scaledValue(Q); Sc && hasSingleUse(G, Q)) {
      QScaleN = Q->producer();
      Q = Sc->first;
      Scale = Sc->second;
    }
  for (const ir::Value *Op : {Q, Kt, V})
    if (!Op->type().hasRank() || Op->type().rank() < 2 ||
        Op->type().dtype() != ST.dtype())
      return R.decline(Sm, "Q, K or V is not of rank >= 2 or of the "
                           "scores' dtype");
  if (Mask && Mask->type().dtype() != ST.dtype())
    return R.decline(Sm, "mask is not of the scores' dtype");
  // K: read through a Transpose of its last two axes.
  ir::Value *K = Kt;
  int64_t KTransposed = 1;
  ir::Node *TN = Kt->producer();
  if (TN && swapsLastTwo(*TN) && hasSingleUse(G, Kt)) {
    K = TN->input(0);
    KTransposed = 0;
  } else {
    TN = nullptr;
  }

  ir::AttrMap Attrs;
  Attrs.set("k_transposed", ir::Attribute(KTransposed));
  Attrs.set("scale", ir::Attribute(static_cast<float>(Scale)));
  std::vector<ir::Value *> Ins = {Q, K, V};
  if (Mask)
    Ins.push_back(Mask);
  ir::Node *Att =
      R.create(OpKind::Attention, Ins,
               {G.uniqueName(PV->output()->name() + ".attention")}, Attrs, PV);
  Att->setName(PV->name());
  Att->setScope(PV->scope());
  R.replaceWithNewValue(PV->output(), Att->output());
  for (ir::Node *N : {PV, &Sm, AddN, ScaleN, MM, QScaleN, TN})
    if (N)
      R.eraseNode(N);
  return true;
}

} // namespace

std::unique_ptr<Pass> createFuseAttentionPass() {
  return std::make_unique<RulePass>(
      "fuse-attention",
      "replace MatMul, scale, mask Add, Softmax and MatMul of scaled "
      "dot-product attention by nng.Attention",
      RewritePatternList{
          // MatMul(Softmax(MatMul(Q, Kt) * c [+ mask]), V)
          //   -> nng.Attention(Q, K, V, mask?){scale = c}
          {OpKind::Softmax, "fuse-attention", fuseAttention},
      });
}

} // namespace nng::passes
