//===- DerivativesNN.cpp - Backward of activations and layer ops ----------===//
//
// Backward formulas of the activation ops (Relu, LeakyRelu, Gelu), Conv
// (input gradient: ConvTranspose with the same weight and the
// output_padding that reaches the input size; weight gradient:
// nng.ConvGradWeight; bias: a sum), ConvTranspose (the adjoint pair the
// other way round), MaxPool / AveragePool (nng.MaxPoolGrad /
// nng.AveragePoolGrad), GlobalAveragePool, BatchNormalization in
// inference mode, nng.BatchNormTraining (nng.BatchNormTrainingGrad) and
// LayerNormalization. Relu's gradient is one nng.ReluGrad.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "Derivatives.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/WindowGeometry.h"

#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::autograd {

using ir::OpKind;

namespace {

using Grads = std::vector<Tensor>;

const Tensor &in(const BackwardContext &C, size_t I) { return C.Inputs[I]; }
const Tensor &gout(const BackwardContext &C) { return C.GradOutputs[0]; }
Tensor zeroOf(const Tensor &T) { return detail::scalarOf(T.dtype(), 0.0); }

Grads reluBackward(const BackwardContext &C) {
  const Tensor &Y = C.Outputs[0], &G = gout(C);
  if (G.dtype() == Y.dtype() && G.sizes() == Y.sizes())
    return {dispatch::call1(OpKind::ReluGrad, {Y, G})};
  return {where(gt(Y, zeroOf(G)), G, zeroOf(G))};
}

Grads leakyReluBackward(const BackwardContext &C) {
  const ir::Attribute *A = C.Attrs.find("alpha");
  double Alpha = A ? A->f() : 0.01;
  const Tensor &G = gout(C);
  return {where(gt(in(C, 0), zeroOf(G)), G, G * Alpha)};
}

Grads geluBackward(const BackwardContext &C) {
  const ir::Attribute *A = C.Attrs.find("approximate");
  const Tensor &X = in(C, 0), &G = gout(C);
  if (A && A->s() == "tanh") {
    // y = x/2 (1 + tanh(u)), u = k (x + c x^3).
    const double K = ir::GeluTanhScale, Cc = ir::GeluTanhCubic;
    Tensor X2 = X * X;
    Tensor T = (X * K + X * X2 * (K * Cc)).tanh();
    Tensor DU = (X2 * (3.0 * Cc) + 1.0) * K;
    Tensor D = (T + 1.0) * 0.5 + X * 0.5 * (1.0 - T * T) * DU;
    return {G * D};
  }
  // Phi(x) + x phi(x).
  Tensor Cdf = (erf(X * (1.0 / ir::GeluSqrt2)) + 1.0) * 0.5;
  Tensor Pdf = exp(X * X * -0.5) * (1.0 / std::sqrt(2.0 * M_PI));
  return {G * (Cdf + X * Pdf)};
}

/// The window attributes of a conv call over R spatial axes with kernel
/// extents Kernel, the op table's defaults filled in (ir/WindowGeometry.h).
ir::WindowAttrs convWindow(const BackwardContext &C, size_t R,
                           std::vector<int64_t> Kernel) {
  ir::WindowAttrs A = ir::readWindowAttrs(ir::getOpSchema(C.Op), C.Attrs, R,
                                          std::move(Kernel));
  if (!A.ok())
    fail(ErrorKind::InvalidArgument, "the derivative of ",
         ir::getOpSchema(C.Op).Name, ": ", A.Error);
  return A;
}

/// Integer attribute Name of a call, or Default.
int64_t intAttr(const BackwardContext &C, ir::IntAttrName Name,
                int64_t Default) {
  const ir::Attribute *A = C.Attrs.find(Name);
  return A ? A->i() : Default;
}

/// The group attribute of a conv call, or the op table's default.
int64_t groupOf(const BackwardContext &C) {
  if (const ir::Attribute *A = C.Attrs.find("group"))
    return A->i();
  return ir::getOpSchema(C.Op).findAttr("group")->Default->i();
}

void requireExplicitPads(const BackwardContext &C, const char *Op) {
  if (const ir::Attribute *A = C.Attrs.find("auto_pad"))
    if (A->s() != "NOTSET")
      fail(ErrorKind::Unsupported, "the derivative of ", Op,
           " with auto_pad=", A->s(),
           " is not implemented; use explicit pads");
}

/// Sum over every axis but 1 (the channel axis).
Tensor channelSum(const Tensor &G) {
  std::vector<int64_t> Axes;
  for (int64_t D = 0; D < G.dim(); ++D)
    if (D != 1)
      Axes.push_back(D);
  return sum(G, Axes);
}

Grads convBackward(const BackwardContext &C) {
  requireExplicitPads(C, "Conv");
  const Tensor &X = in(C, 0), &W = in(C, 1), &G = gout(C);
  size_t R = static_cast<size_t>(X.dim()) - 2;
  std::vector<int64_t> WS = W.sizes();
  std::vector<int64_t> Kernel(WS.begin() + 2, WS.end());
  ir::WindowAttrs A = convWindow(C, R, Kernel);
  int64_t Group = groupOf(C);
  Grads Out(C.Inputs.size());
  if (C.needs(0)) {
    // ConvTranspose(G) reaches the extents of X up to the rows the forward
    // strides skipped at the end: output_padding adds them back.
    std::vector<int64_t> GExt(R), OutPad(R);
    for (size_t D = 0; D < R; ++D)
      GExt[D] = G.size(2 + D);
    ir::WindowGeometry Back = ir::transposedWindow(A, GExt);
    for (size_t D = 0; D < R; ++D)
      OutPad[D] = X.size(2 + D) - Back.Out[D];
    Out[0] = dispatch::call1(ir::OpKind::ConvTranspose, {G, W},
                             dispatch::attrs({{"dilations", A.Dilations},
                                              {"group", Group},
                                              {"kernel_shape", Kernel},
                                              {"output_padding", OutPad},
                                              {"pads", A.Pads},
                                              {"strides", A.Strides}}));
  }
  if (C.needs(1))
    Out[1] = dispatch::call1(ir::OpKind::ConvGradWeight, {X, G},
                             dispatch::attrs({{"dilations", A.Dilations},
                                              {"group", Group},
                                              {"kernel_shape", Kernel},
                                              {"pads", A.Pads},
                                              {"strides", A.Strides}}));
  if (C.Inputs.size() > 2 && C.needs(2))
    Out[2] = channelSum(G);
  return Out;
}

Grads convTransposeBackward(const BackwardContext &C) {
  requireExplicitPads(C, "ConvTranspose");
  if (const ir::Attribute *A = C.Attrs.find("output_shape"))
    if (!A->ints().empty())
      fail(ErrorKind::Unsupported, "the derivative of ConvTranspose with "
                                   "output_shape is not implemented; use "
                                   "pads and output_padding");
  const Tensor &X = in(C, 0), &W = in(C, 1), &G = gout(C);
  size_t R = static_cast<size_t>(X.dim()) - 2;
  std::vector<int64_t> WS = W.sizes();
  std::vector<int64_t> Kernel(WS.begin() + 2, WS.end());
  ir::WindowAttrs Win = convWindow(C, R, Kernel);
  ir::AttrMap A = dispatch::attrs({{"dilations", Win.Dilations},
                                   {"group", groupOf(C)},
                                   {"kernel_shape", Kernel},
                                   {"pads", Win.Pads},
                                   {"strides", Win.Strides}});
  Grads Out(C.Inputs.size());
  // <G, ConvT(X, W)> = <Conv(G, W), X>.
  if (C.needs(0))
    Out[0] = dispatch::call1(ir::OpKind::Conv, {G, W}, A);
  if (C.needs(1))
    Out[1] = dispatch::call1(ir::OpKind::ConvGradWeight, {G, X}, A);
  if (C.Inputs.size() > 2 && C.needs(2))
    Out[2] = channelSum(G);
  return Out;
}

/// MaxPool / AveragePool: the nng grad op with the forward attributes.
Grads poolBackward(const BackwardContext &C) {
  ir::AttrMap A;
  for (const auto &[Name, V] : C.Attrs)
    if (Name != "storage_order")
      A.setByName(Name, V);
  ir::OpKind K = C.Op == ir::OpKind::MaxPool ? ir::OpKind::MaxPoolGrad
                                             : ir::OpKind::AveragePoolGrad;
  return {dispatch::call1(K, {in(C, 0), gout(C)}, A)};
}

Grads globalAveragePoolBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  int64_t N = 1;
  for (int64_t D = 2; D < X.dim(); ++D)
    N *= X.size(D);
  return {expand(gout(C), X.sizes()) / static_cast<double>(N)};
}

/// Inference-mode BatchNormalization: y = (x - mean) * s / sqrt(var + eps)
/// + b with constant statistics.
Grads batchNormBackward(const BackwardContext &C) {
  if (intAttr(C, "training_mode", 0) != 0)
    fail(ErrorKind::Unsupported,
         "the derivative of BatchNormalization with training_mode=1 is not "
         "implemented; F::batch_norm composes the training form from "
         "differentiable ops");
  const Tensor &X = in(C, 0), &G = gout(C);
  const ir::Attribute *E = C.Attrs.find("epsilon");
  double Eps = E ? E->f() : 1e-5;
  std::vector<int64_t> CS(X.dim(), 1);
  CS[1] = X.size(1);
  Tensor InvStd = reshape(rsqrt(in(C, 4) + Eps), CS);
  Grads Out(5);
  if (C.needs(0))
    Out[0] = G * reshape(in(C, 1), CS) * InvStd;
  if (C.needs(1))
    Out[1] = channelSum(G * (X - reshape(in(C, 3), CS)) * InvStd);
  if (C.needs(2))
    Out[2] = channelSum(G);
  return Out;
}

/// nng.BatchNormTraining: one nng.BatchNormTrainingGrad from the saved batch
/// statistics. The statistics outputs are not differentiated (F::batch_norm
/// reads them only to update the running statistics, under NoGradGuard).
Grads batchNormTrainingBackward(const BackwardContext &C) {
  const ir::Attribute *E = C.Attrs.find("epsilon");
  float Eps = E ? E->f() : 1e-5f;
  bool HasScale = C.Inputs.size() > 1 && in(C, 1).defined();
  std::vector<Tensor> R = dispatch::call(
      OpKind::BatchNormTrainingGrad,
      {gout(C), in(C, 0), C.Outputs[1], C.Outputs[2],
       HasScale ? in(C, 1) : Tensor()},
      dispatch::attrs({{"epsilon", Eps}}), 3);
  Grads Out(C.Inputs.size());
  for (size_t I = 0; I < Out.size() && I < 3; ++I)
    if (C.needs(I))
      Out[I] = R[I];
  return Out;
}

Grads layerNormBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0), &G = gout(C);
  int64_t Axis = intAttr(C, "axis", -1);
  if (Axis < 0)
    Axis += X.dim();
  const ir::Attribute *E = C.Attrs.find("epsilon");
  double Eps = E ? E->f() : 1e-5;
  std::vector<int64_t> Norm, Lead;
  for (int64_t D = 0; D < X.dim(); ++D)
    (D < Axis ? Lead : Norm).push_back(D);
  Tensor Mean = mean(X, Norm, /*KeepDim=*/true);
  Tensor Centered = X - Mean;
  Tensor InvStd = rsqrt(mean(Centered * Centered, Norm, true) + Eps);
  Tensor XHat = Centered * InvStd;
  Grads Out(C.Inputs.size());
  if (C.needs(0)) {
    Tensor GX = G * in(C, 1);
    Out[0] = InvStd * (GX - mean(GX, Norm, true) -
                       XHat * mean(GX * XHat, Norm, true));
  }
  if (C.needs(1))
    Out[1] = detail::sumToShape(G * XHat, in(C, 1).shape());
  if (C.Inputs.size() > 2 && C.needs(2))
    Out[2] = detail::sumToShape(G, in(C, 2).shape());
  return Out;
}

} // namespace

void registerNNDerivatives() {
  setBackward(OpKind::Conv, convBackward);
  setBackward(OpKind::ConvTranspose, convTransposeBackward);
  setBackward(OpKind::MaxPool, poolBackward);
  setBackward(OpKind::AveragePool, poolBackward);
  setBackward(OpKind::GlobalAveragePool, globalAveragePoolBackward);
  setBackward(OpKind::BatchNormalization, batchNormBackward);
  setBackward(OpKind::BatchNormTraining, batchNormTrainingBackward);
  setBackward(OpKind::LayerNormalization, layerNormBackward);
  setBackward(OpKind::Relu, reluBackward);
  setBackward(OpKind::LeakyRelu, leakyReluBackward);
  setBackward(OpKind::Gelu, geluBackward);
}

} // namespace nng::autograd
