//===- FoldConvMulAdd.cpp - fold-conv-mul-add: affine ops into a Conv ----===//
//
// Mul(Conv(x, W, b), c) with a constant c that varies along the channel axis
// only (shape [M, 1, 1], [1, M, 1, 1], [1] or a scalar for a 2-d Conv) is a
// Conv with W[m] * c[m] and b[m] * c[m]; Add(Conv(x, W, b), c) is a Conv
// with b[m] + c[m] (a bias is added when absent). Either operand order
// works. The pass declines, counting why, when the other operand is not a
// constant, does not broadcast per output channel (it would change the
// result's shape or vary along spatial axes), when the Conv's result has
// other consumers, or when the weights or bias it must change are not
// constant.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// The rule at a Mul or Add one of whose operands is a single-use Conv.
bool foldConvAffine(ir::Node &N, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  std::optional<size_t> ConvIdx = operandProducedBy(N, OpKind::Conv);
  if (!ConvIdx)
    return R.decline(N, "no operand is produced by a Conv");
  ir::Value *Y = N.input(*ConvIdx);
  ir::Node &Conv = *Y->producer();
  if (!hasSingleUse(G, Y))
    return R.decline(N, "Conv result has other consumers");
  Tensor C = constantF64(N.input(1 - *ConvIdx));
  if (!C.defined())
    return R.decline(N, "other operand is not a floating-point constant");
  if (!isFloatingPoint(Y->type().dtype()) || !Y->type().hasRank())
    return R.decline(N, "Conv result is not floating point of known rank");
  const ir::TensorType &WT = Conv.input(1)->type();
  if (!WT.hasRank() || !WT.dim(0).isStatic())
    return R.decline(N, "Conv output channel count is unknown");
  int64_t M = WT.dim(0).value();
  std::optional<std::vector<double>> PerCh = perChannel(C, Y->type().rank(), M);
  if (!PerCh)
    return R.decline(N, "constant does not broadcast per output channel");
  Tensor Bias = constantF64(Conv.hasInput(2) ? Conv.input(2) : nullptr);
  if (Conv.hasInput(2) && !Bias.defined())
    return R.decline(N, "Conv bias is not constant");
  DType T = Y->type().dtype();
  bool IsMul = N.op() == OpKind::Mul;
  if (IsMul) {
    Tensor W = constantF64(Conv.input(1));
    if (!W.defined())
      return R.decline(N, "Conv weights are not constant");
    int64_t Inner = M == 0 ? 0 : W.numel() / M;
    std::vector<double> NewW(static_cast<size_t>(W.numel()));
    for (int64_t I = 0; I < W.numel(); ++I)
      NewW[I] = W.getFlat(I) * (*PerCh)[I / Inner];
    Conv.setInput(1, foldedConstant(R, Conv.input(1), Conv,
                                    makeTensor(NewW, W.shape(), T),
                                    Conv.input(1)->name()));
  }
  if (IsMul && !Bias.defined()) {
    // A scaled absent bias stays absent.
  } else {
    std::vector<double> B(static_cast<size_t>(M));
    for (int64_t I = 0; I < M; ++I) {
      double Old = Bias.defined() ? Bias.getFlat(I) : 0.0;
      B[I] = IsMul ? Old * (*PerCh)[I] : Old + (*PerCh)[I];
    }
    ir::Value *New =
        foldedConstant(R, Conv.hasInput(2) ? Conv.input(2) : nullptr, Conv,
                       makeTensor(B, Shape{M}, T), biasNameFor(Conv.input(1)));
    if (Conv.numInputs() < 3)
      Conv.addInput(New);
    else
      Conv.setInput(2, New);
  }
  R.replaceWithNewValue(N.output(), Y);
  R.eraseNode(&N);
  return true;
}

} // namespace

std::unique_ptr<Pass> createFoldConvMulAddPass() {
  return std::make_unique<RulePass>(
      "fold-conv-mul-add",
      "fold per-channel constant Mul and Add after a Conv into its weights "
      "and bias",
      RewritePatternList{
          // Mul(Conv(x, W, b), c) -> Conv(x, W * c, b * c), c per channel
          {OpKind::Mul, "fold-mul", foldConvAffine},
          // Add(Conv(x, W, b), c) -> Conv(x, W, b + c), c per channel
          {OpKind::Add, "fold-add", foldConvAffine},
      });
}

} // namespace nng::passes
