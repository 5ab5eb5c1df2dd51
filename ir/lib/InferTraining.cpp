//===- InferTraining.cpp - Inference for the fused training ops ----------===//
//
// nng.BatchNormTraining(X[N, C, ...], scale?[C], B?[C]) gives Y with X's
// type and the batch statistics mean[C] and var[C];
// nng.BatchNormTrainingGrad(dY, X, mean, var, scale?) gives dX with X's type
// and dscale[C], dB[C]; nng.ReluGrad(Y, dY) gives dY's type. Each checks
// that the operands share X's dtype and that the per-channel vectors have
// X's channel count.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

namespace {

/// The channel dim of input XIdx ([N, C, ...], rank >= 2), after checking
/// that the present inputs among PerChannel are [C] of X's dtype.
Dim channelDim(InferContext &C, size_t XIdx,
               std::initializer_list<size_t> PerChannel) {
  const TensorType &X = C.inputType(XIdx);
  checkFloatDType(C, XIdx);
  requireMinRank(C, XIdx, 2, "([N, C, ...])");
  Dim Channels = X.hasRank() ? X.dim(1) : Dim::unknown();
  for (size_t I : PerChannel) {
    if (!C.hasInput(I))
      continue;
    checkSameDType(C, XIdx, I);
    requireRank(C, I, 1, "([C])");
    const TensorType &T = C.inputType(I);
    if (T.hasRank() && !dimsCompatible(T.dim(0), Channels))
      C.fail("operand ", operandName(C, I), " ", T.toString(), " has ",
             T.dim(0).toString(), " entries but X ", X.toString(), " has ",
             Channels.toString(), " channels");
    if (T.hasRank() && !Channels.isStatic() && T.dim(0).isStatic())
      Channels = T.dim(0);
  }
  return Channels;
}

} // namespace

/// BatchNormTraining(X, scale?, B?) -> Y (X's type), mean[C], var[C].
void inferBatchNormTraining(InferContext &C) {
  Dim Channels = channelDim(C, 0, {1, 2});
  const TensorType &X = C.inputType(0);
  C.setOutputType(0, X);
  C.setOutputType(1, TensorType(X.dtype(), {Channels}));
  C.setOutputType(2, TensorType(X.dtype(), {Channels}));
}

/// BatchNormTrainingGrad(dY, X, mean, var, scale?) -> dX (X's type),
/// dscale[C], dB[C].
void inferBatchNormTrainingGrad(InferContext &C) {
  Dim Channels = channelDim(C, 1, {2, 3, 4});
  const TensorType &X = C.inputType(1), &DY = C.inputType(0);
  checkSameDType(C, 1, 0);
  if (!shapesCompatible(X, DY))
    C.fail("dY ", DY.toString(), " must have the shape of X ", X.toString());
  C.setOutputType(0, X);
  C.setOutputType(1, TensorType(X.dtype(), {Channels}));
  C.setOutputType(2, TensorType(X.dtype(), {Channels}));
}

/// ReluGrad(Y, dY) -> dX with dY's type; Y and dY have one shape.
void inferReluGrad(InferContext &C) {
  const TensorType &Y = C.inputType(0), &DY = C.inputType(1);
  checkFloatDType(C, 1);
  checkSameDType(C, 0, 1);
  if (!shapesCompatible(Y, DY))
    C.fail("dY ", DY.toString(), " must have the shape of Y ", Y.toString());
  C.setOutputType(0, DY);
}

} // namespace nng::ir
