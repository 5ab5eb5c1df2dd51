//===- Normalization.cpp - nng::F batch_norm, layer_norm, group_norm -------===//
//
// batch_norm in training mode normalizes with the batch mean and biased
// variance, then updates the running statistics in place under
// NoGradGuard with the unbiased variance. Eagerly it is one
// nng.BatchNormTraining (whose backward is nng.BatchNormTrainingGrad); in a
// trace it is a composition of reductions and elementwise ops, which
// exports to standard ONNX. In eval mode it is one ONNX BatchNormalization
// (the node that conv+bn folding looks for). layer_norm is one
// LayerNormalization; group_norm composes reductions over [N, G, -1].
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;
using ir::OpKind;

namespace {

/// [1, C, 1, ...] for broadcasting a per-channel vector against X.
std::vector<int64_t> channelShape(const Tensor &X) {
  std::vector<int64_t> S(X.dim(), 1);
  S[1] = X.size(1);
  return S;
}

void checkChannelVector(const char *Op, const char *What, const Tensor &V,
                        const Tensor &X, int64_t C) {
  if (V.defined() && (V.dim() != 1 || V.size(0) != C))
    fail(ErrorKind::ShapeMismatch, Op, ": ", What, " ", describe(V),
         " must have shape [", C, "] for input ", describe(X));
}

} // namespace

Tensor batch_norm(const Tensor &X, const Tensor &RunningMean,
                  const Tensor &RunningVar, const Tensor &Weight,
                  const Tensor &Bias, bool Training, double Momentum,
                  double Eps) {
  const char *Op = "batch_norm";
  detail::requireFloat(Op, "input", X);
  if (X.dim() < 2)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected an input of at least 2 dimensions (N, C, ...), got ",
         describe(X));
  int64_t C = X.size(1);
  checkChannelVector(Op, "running_mean", RunningMean, X, C);
  checkChannelVector(Op, "running_var", RunningVar, X, C);
  checkChannelVector(Op, "weight", Weight, X, C);
  checkChannelVector(Op, "bias", Bias, X, C);
  if (RunningMean.defined() != RunningVar.defined())
    fail(ErrorKind::InvalidArgument, Op,
         ": running_mean and running_var must both be given or both absent");
  std::vector<int64_t> Axes;
  for (int64_t D = 0; D < X.dim(); ++D)
    if (D != 1)
      Axes.push_back(D);
  std::vector<int64_t> CS = channelShape(X);

  if (!Training) {
    if (!RunningMean.defined())
      fail(ErrorKind::InvalidArgument, Op,
           ": running_mean and running_var are needed in eval mode");
    Tensor Scale = Weight.defined() ? Weight : ones({C}, X.dtype());
    Tensor B = Bias.defined() ? Bias : zeros({C}, X.dtype());
    return dispatch::call1(
        OpKind::BatchNormalization,
        {X, Scale.to(X.dtype()), B.to(X.dtype()), RunningMean.to(X.dtype()),
         RunningVar.to(X.dtype())},
        dispatch::attrs({{"epsilon", static_cast<float>(Eps)},
                         {"momentum", static_cast<float>(1.0 - Momentum)},
                         {"training_mode", int64_t(0)}}));
  }

  int64_t Count = X.numel() / std::max<int64_t>(C, 1);
  if (Count <= 1)
    fail(ErrorKind::InvalidArgument, Op,
         ": expected more than 1 value per channel when training, got input ",
         describe(X));
  // Running statistics are a side effect outside the graph: a trace skips
  // them (docs/fx.md).
  auto updateRunning = [&](const Tensor &BatchMean, const Tensor &BatchVar) {
    if (!RunningMean.defined() || nng::detail::isTracing())
      return;
    NoGradGuard NoGrad;
    Tensor RM = RunningMean, RV = RunningVar;
    Tensor Unbiased = reshape(BatchVar.detach(), {C}) *
                      (static_cast<double>(Count) / double(Count - 1));
    RM.mul_(1.0 - Momentum).add_(reshape(BatchMean.detach(), {C}), Momentum);
    RV.mul_(1.0 - Momentum).add_(Unbiased, Momentum);
  };
  if (!nng::detail::isTracing()) {
    // Eagerly: one fused op (statistics and normalization) whose backward is
    // one fused gradient op. A trace keeps the composition below, which
    // exports to standard ONNX.
    DType T = X.dtype();
    std::vector<Tensor> Outs = dispatch::call(
        OpKind::BatchNormTraining,
        {X, Weight.defined() ? Weight.to(T) : Tensor(),
         Bias.defined() ? Bias.to(T) : Tensor()},
        dispatch::attrs({{"epsilon", static_cast<float>(Eps)}}), 3);
    updateRunning(Outs[1], Outs[2]);
    return Outs[0];
  }
  Tensor Mean = mean(X, Axes, /*KeepDim=*/true);
  Tensor Centered = X - Mean;
  Tensor Var = mean(Centered * Centered, Axes, /*KeepDim=*/true);
  Tensor Y = Centered * rsqrt(Var + Eps);
  updateRunning(Mean, Var);
  if (Weight.defined())
    Y = Y * reshape(Weight, CS);
  if (Bias.defined())
    Y = Y + reshape(Bias, CS);
  return Y;
}

Tensor layer_norm(const Tensor &X, const std::vector<int64_t> &NormalizedShape,
                  const Tensor &Weight, const Tensor &Bias, double Eps) {
  const char *Op = "layer_norm";
  detail::requireFloat(Op, "input", X);
  int64_t K = static_cast<int64_t>(NormalizedShape.size());
  bool Ok = K >= 1 && K <= X.dim();
  for (int64_t I = 0; Ok && I < K; ++I)
    Ok = X.size(X.dim() - K + I) == NormalizedShape[I];
  if (!Ok)
    fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(X),
         " does not end with normalized_shape ",
         Shape(NormalizedShape).toString());
  for (const auto &[T, What] : {std::pair{Weight, "weight"}, {Bias, "bias"}})
    if (T.defined() && T.sizes() != NormalizedShape)
      fail(ErrorKind::ShapeMismatch, Op, ": ", What, " ", describe(T),
           " must have normalized_shape ", Shape(NormalizedShape).toString());
  Tensor Scale = Weight.defined() ? Weight.to(X.dtype())
                                  : ones(NormalizedShape, X.dtype());
  std::vector<Tensor> In = {X, Scale};
  if (Bias.defined())
    In.push_back(Bias.to(X.dtype()));
  return dispatch::call1(
      OpKind::LayerNormalization, In,
      dispatch::attrs({{"axis", X.dim() - K},
                       {"epsilon", static_cast<float>(Eps)}}));
}

Tensor group_norm(const Tensor &X, int64_t NumGroups, const Tensor &Weight,
                  const Tensor &Bias, double Eps) {
  const char *Op = "group_norm";
  detail::requireFloat(Op, "input", X);
  if (X.dim() < 2)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected an input of at least 2 dimensions (N, C, ...), got ",
         describe(X));
  int64_t C = X.size(1);
  if (NumGroups <= 0 || C % NumGroups != 0)
    fail(ErrorKind::ShapeMismatch, Op, ": expected the number of channels ",
         C, " of input ", describe(X), " to be divisible by num_groups ",
         NumGroups);
  checkChannelVector(Op, "weight", Weight, X, C);
  checkChannelVector(Op, "bias", Bias, X, C);
  Tensor G = reshape(X, {X.size(0), NumGroups, -1});
  Tensor Mean = mean(G, {2}, /*KeepDim=*/true);
  Tensor Centered = G - Mean;
  Tensor Var = mean(Centered * Centered, {2}, /*KeepDim=*/true);
  Tensor Y = reshape(Centered * rsqrt(Var + Eps), X.sym_sizes());
  std::vector<int64_t> CS = channelShape(X);
  if (Weight.defined())
    Y = Y * reshape(Weight, CS);
  if (Bias.defined())
    Y = Y + reshape(Bias, CS);
  return Y;
}

} // namespace nng::F
