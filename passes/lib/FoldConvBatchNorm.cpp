//===- FoldConvBatchNorm.cpp - fold-conv-bn: BatchNorm into weights ------===//
//
// An inference-mode BatchNormalization is an affine map per channel,
// y = s * (x - mean) + beta with s = scale / sqrt(var + epsilon), so when its
// input comes from a Conv, a ConvTranspose, a Gemm or a 2-D MatMul with
// constant weights, it folds into them: the weights of output channel m are
// multiplied by s[m] and the bias becomes s * (bias - mean) + beta (added
// when absent; a MatMul becomes a Gemm). ConvTranspose weights are
// [C_in, M/group, k...], so output channel m of group g is W[g*C_in/group +
// i, m - g*M/group] for every i. The pass declines, counting why, when the
// BN trains, its parameters or the weights are not constant (computed
// from constants alone counts as constant: such a subgraph, which
// canonicalize leaves when its results exceed its size cap, is evaluated
// and replaced by the folded data), the producer's
// result has other consumers, or a Gemm's bias varies per row. When the BN
// result is a graph output, the folded value takes its name.
//
//===----------------------------------------------------------------------===//

#include "ConstantCone.h"
#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

#include <cmath>

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// The most nodes of a constant subgraph evaluated for one operand.
constexpr size_t MaxConeNodes = 64;

/// V's data as f64 when V is a floating-point constant or is computed from
/// constants alone: a subgraph canonicalize left unfolded (its results
/// exceed max-folded-elements, e.g. a ConstantOfShape). The fold replaces
/// the operand, so that subgraph dies with it. Undefined otherwise.
Tensor foldableF64(const ir::Value *V) {
  Tensor T = detail::constantOrConeValue(V, MaxConeNodes);
  if (!T.defined() || !isFloatingPoint(T.dtype()))
    return {};
  return T.to(DType::F64);
}

/// The per-channel affine map of a BatchNormalization.
struct Affine {
  std::vector<double> Scale, Shift; ///< y = Scale * x + Shift.
};

/// Scale and shift from constant BN parameters, or nullopt.
std::optional<Affine> affineOf(const ir::Node &BN) {
  Tensor Gamma = foldableF64(BN.input(1)), Beta = foldableF64(BN.input(2));
  Tensor Mean = foldableF64(BN.input(3)), Var = foldableF64(BN.input(4));
  if (!Gamma.defined() || !Beta.defined() || !Mean.defined() || !Var.defined())
    return std::nullopt;
  int64_t C = Gamma.numel();
  if (Beta.numel() != C || Mean.numel() != C || Var.numel() != C)
    return std::nullopt;
  double Eps = BN.attrFloat("epsilon");
  Affine A;
  for (int64_t I = 0; I < C; ++I) {
    double S = Gamma.getFlat(I) / std::sqrt(Var.getFlat(I) + Eps);
    A.Scale.push_back(S);
    A.Shift.push_back(Beta.getFlat(I) - S * Mean.getFlat(I));
  }
  return A;
}

/// Puts the folded bias (OldBias scaled, plus the shift) at input 2 of P.
void setBias(PatternRewriter &R, ir::Node &P, const Affine &A,
             const Tensor &OldBias, DType T) {
  size_t M = A.Scale.size();
  std::vector<double> B(M);
  for (size_t I = 0; I < M; ++I)
    B[I] = A.Shift[I] +
           A.Scale[I] * (OldBias.defined() ? OldBias.getFlat(I) : 0.0);
  ir::Value *Old = P.hasInput(2) ? P.input(2) : nullptr;
  Tensor Data = makeTensor(B, Shape{static_cast<int64_t>(M)}, T);
  ir::Value *New =
      foldedConstant(R, Old, P, std::move(Data), biasNameFor(P.input(1)));
  if (P.numInputs() < 3)
    P.addInput(New);
  else
    P.setInput(2, New);
}

/// Replaces the BN's result by P's and counts the fold.
void finish(ir::Node &BN, ir::Node &P, PatternRewriter &R,
            std::string_view Stat) {
  R.replaceWithNewValue(BN.output(0), P.output(0));
  R.eraseNode(&BN);
  R.owner().bumpStatistic(Stat);
}

/// Folds A into Conv or ConvTranspose P (weights per output channel, bias).
bool foldConv(ir::Node &BN, ir::Node &P, const Affine &A, PatternRewriter &R) {
  bool Transposed = P.op() == OpKind::ConvTranspose;
  Tensor W = foldableF64(P.input(1));
  if (!W.defined())
    return R.decline(BN, "weights are not constant");
  if (W.numel() == 0)
    return R.decline(BN, "weights are empty");
  Tensor Bias = foldableF64(P.hasInput(2) ? P.input(2) : nullptr);
  if (P.hasInput(2) && !Bias.defined())
    return R.decline(BN, "bias is not constant");
  int64_t Group = P.attrInt("group");
  int64_t M = Transposed ? W.size(1) * Group : W.size(0);
  if (static_cast<int64_t>(A.Scale.size()) != M ||
      (Bias.defined() && Bias.numel() != M))
    return R.decline(BN, "channel counts of the weights and the "
                         "BatchNormalization differ");
  // Scale every weight by the scale of its output channel.
  int64_t D0 = W.size(0), D1 = W.size(1), Inner = W.numel() / (D0 * D1);
  std::vector<double> NewW(static_cast<size_t>(W.numel()));
  for (int64_t I = 0; I < D0; ++I)
    for (int64_t J = 0; J < D1; ++J) {
      int64_t Out = Transposed ? (I / (D0 / Group)) * D1 + J : I;
      for (int64_t K = 0; K < Inner; ++K) {
        int64_t Flat = (I * D1 + J) * Inner + K;
        NewW[Flat] = W.getFlat(Flat) * A.Scale[Out];
      }
    }
  DType T = BN.output(0)->type().dtype();
  P.setInput(1, foldedConstant(R, P.input(1), P, makeTensor(NewW, W.shape(), T),
                               P.input(1)->name()));
  setBias(R, P, A, Bias, T);
  finish(BN, P, R,
         Transposed ? "folded-into-conv-transpose" : "folded-into-conv");
  return true;
}

/// Scales the columns of the (K x M, or M x K when TransB) matrix B.
Tensor scaleColumns(const Tensor &B, bool TransB, const Affine &A, DType T) {
  std::vector<double> V(static_cast<size_t>(B.numel()));
  int64_t Rows = B.size(0), Cols = B.size(1);
  for (int64_t I = 0; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      V[I * Cols + J] = B.getFlat(I * Cols + J) * A.Scale[TransB ? I : J];
  return makeTensor(V, B.shape(), T);
}

/// Folds A into Gemm P (columns of B, alpha and beta folded too).
bool foldGemm(ir::Node &BN, ir::Node &P, const Affine &A, PatternRewriter &R) {
  bool TransB = P.attrInt("transB") != 0;
  Tensor B = foldableF64(P.input(1));
  if (!B.defined())
    return R.decline(BN, "weights are not constant");
  int64_t M = B.size(TransB ? 0 : 1);
  if (static_cast<int64_t>(A.Scale.size()) != M)
    return R.decline(BN, "channel counts of the weights and the "
                         "BatchNormalization differ");
  Tensor Bias;
  if (P.hasInput(2)) {
    Tensor C = foldableF64(P.input(2));
    if (!C.defined())
      return R.decline(BN, "bias is not constant");
    auto PerCol = perChannel(C, 2, M);
    if (!PerCol)
      return R.decline(BN, "Gemm bias varies per row");
    double Beta = P.attrFloat("beta");
    for (double &V : *PerCol)
      V *= Beta;
    Bias = makeTensor(*PerCol, Shape{M}, DType::F64);
  }
  double Alpha = P.attrFloat("alpha");
  DType T = BN.output(0)->type().dtype();
  Affine Scaled = A;
  for (double &S : Scaled.Scale)
    S *= Alpha;
  P.setInput(1, foldedConstant(R, P.input(1), P,
                               scaleColumns(B, TransB, Scaled, T),
                               P.input(1)->name()));
  if (P.hasInput(2) &&
      P.input(2)->type().staticShape() != std::optional<Shape>(Shape{M}))
    P.setInput(2, nullptr); // Replaced by a fresh [M] bias below.
  setBias(R, P, A, Bias, T);
  P.attrs().erase("alpha"); // Both folded: the defaults (1) hold.
  P.attrs().erase("beta");
  finish(BN, P, R, "folded-into-gemm");
  return true;
}

/// Replaces 2-D MatMul P by a Gemm with A folded into B and a new bias.
bool foldMatMul(ir::Node &BN, ir::Node &P, const Affine &A,
                PatternRewriter &R) {
  const ir::TensorType &TA = P.input(0)->type();
  if (!TA.hasRank() || TA.rank() != 2)
    return R.decline(BN, "MatMul input A is not 2-D");
  Tensor B = foldableF64(P.input(1));
  if (!B.defined())
    return R.decline(BN, "weights are not constant");
  if (B.rank() != 2 || static_cast<int64_t>(A.Scale.size()) != B.size(1))
    return R.decline(BN, "channel counts of the weights and the "
                         "BatchNormalization differ");
  DType T = BN.output(0)->type().dtype();
  ir::Graph &G = R.graph();
  // The Gemm replacing the MatMul is the only user of the new weights.
  ir::Value *W = P.input(1);
  Tensor NewB = scaleColumns(B, false, A, T);
  bool Reuse = W->isInitializer() && W->uses().size() == 1 && !G.isOutput(W);
  if (Reuse)
    W->setData(NewB);
  else
    W = R.addConstant(W->name(), NewB);
  ir::Value *C = R.addConstant(
      biasNameFor(P.input(1)),
      makeTensor(A.Shift, Shape{static_cast<int64_t>(A.Shift.size())}, T));
  ir::Node *Gemm =
      R.create(OpKind::Gemm, {P.input(0), W, C},
               {G.uniqueName(P.output()->name() + ".gemm")}, {}, &BN);
  Gemm->setName(P.name());
  Gemm->setScope(P.scope());
  R.eraseNode(&P);
  finish(BN, *Gemm, R, "folded-into-matmul");
  return true;
}

/// The rule: an inference BN whose input only its producer P reads.
bool foldBatchNorm(ir::Node &BN, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  if (BN.attrInt("training_mode") != 0)
    return R.decline(BN, "BatchNormalization is in training mode");
  for (size_t I = 1; I < BN.numOutputs(); ++I)
    if (BN.output(I)->hasUses() || G.isOutput(BN.output(I)))
      return R.decline(BN, "running statistics outputs are used");
  ir::Value *X = BN.input(0);
  ir::Node *P = X->producer();
  if (!P || (P->op() != OpKind::Conv && P->op() != OpKind::ConvTranspose &&
             P->op() != OpKind::Gemm && P->op() != OpKind::MatMul))
    return R.decline(BN, "input is not produced by Conv, ConvTranspose, "
                         "Gemm or MatMul");
  if (!hasSingleUse(G, X))
    return R.decline(BN, "producer's result has other consumers");
  if (!isFloatingPoint(X->type().dtype()))
    return R.decline(BN, "not floating point");
  std::optional<Affine> A = affineOf(BN);
  if (!A)
    return R.decline(BN, "BatchNormalization parameters are not constant");
  switch (P->op()) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
    return foldConv(BN, *P, *A, R);
  case OpKind::Gemm:
    return foldGemm(BN, *P, *A, R);
  default:
    return foldMatMul(BN, *P, *A, R);
  }
}

} // namespace

std::unique_ptr<Pass> createFoldConvBatchNormPass() {
  return std::make_unique<RulePass>(
      "fold-conv-bn",
      "fold inference BatchNormalization into the preceding Conv, "
      "ConvTranspose, Gemm or MatMul",
      RewritePatternList{
          // BN(Conv(x, W, b)) -> Conv(x, W * s, s * (b - mean) + beta), with
          // s = scale / sqrt(var + eps); likewise ConvTranspose, Gemm, MatMul
          {OpKind::BatchNormalization, "fold-bn", foldBatchNorm},
      });
}

} // namespace nng::passes
