//===- Pooling.cpp - nng::F max_pool2d, avg_pool2d, adaptive_avg_pool2d ----===//
//
// Pooling with PyTorch's conventions on ONNX MaxPool / AveragePool (their
// gradients are the nng.MaxPoolGrad / nng.AveragePoolGrad ops) and
// GlobalAveragePool. adaptive_avg_pool2d picks GlobalAveragePool for a 1x1
// output, an AveragePool when the input divides evenly, and otherwise the
// exact composition of PyTorch's windows (start floor(i*In/Out), end
// ceil((i+1)*In/Out)), separably per axis.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/WindowGeometry.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;
using ir::OpKind;

namespace {

/// Checks a 3-D/4-D input; returns the 4-D form.
Tensor batched(const char *Op, const Tensor &X) {
  detail::requireFloat(Op, "input", X);
  if (X.dim() != 3 && X.dim() != 4)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected a 3-D or 4-D input (batch, channels, H, W), got ",
         describe(X));
  return X.dim() == 3 ? unsqueeze(X, 0) : X;
}

struct PoolArgs {
  std::vector<int64_t> Kernel, Stride, Padding, Dilation;
};

PoolArgs poolArgs(const char *Op, const Tensor &X, std::vector<int64_t> K,
                  std::vector<int64_t> S, std::vector<int64_t> P,
                  std::vector<int64_t> D, bool CeilMode) {
  PoolArgs A;
  A.Kernel = detail::expandArg(Op, "kernel_size", K, 2);
  A.Stride = S.empty() ? A.Kernel : detail::expandArg(Op, "stride", S, 2);
  A.Padding = detail::expandArg(Op, "padding", P, 2);
  A.Dilation = detail::expandArg(Op, "dilation", D, 2);
  for (size_t I = 0; I < 2; ++I) {
    if (A.Kernel[I] <= 0 || A.Stride[I] <= 0 || A.Dilation[I] <= 0)
      fail(ErrorKind::InvalidArgument, Op, ": kernel_size ",
           Shape(A.Kernel).toString(), ", stride ", Shape(A.Stride).toString(),
           " and dilation ", Shape(A.Dilation).toString(),
           " must be positive");
    if (A.Padding[I] < 0 || A.Padding[I] > A.Kernel[I] / 2)
      fail(ErrorKind::InvalidArgument, Op, ": padding ",
           Shape(A.Padding).toString(),
           " should be non-negative and at most half of the kernel size ",
           Shape(A.Kernel).toString());
  }
  // The output extents as the op's shape inference computes them.
  ir::WindowAttrs W;
  W.Kernel = A.Kernel;
  W.Strides = A.Stride;
  W.Dilations = A.Dilation;
  W.Pads = {A.Padding[0], A.Padding[1], A.Padding[0], A.Padding[1]};
  W.CeilMode = CeilMode;
  ir::WindowGeometry G =
      ir::forwardWindow(W, {X.size(2).example(), X.size(3).example()});
  for (size_t I = 0; I < 2; ++I)
    if (!G.ok() || G.Out[I] <= 0)
      fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(X),
           " is too small for kernel_size ", Shape(A.Kernel).toString(),
           " (dilation ", Shape(A.Dilation).toString(), ", padding ",
           Shape(A.Padding).toString(), ") on spatial axis ", I);
  return A;
}

} // namespace

Tensor max_pool2d(const Tensor &XIn, std::vector<int64_t> KernelSize,
                  std::vector<int64_t> Stride, std::vector<int64_t> Padding,
                  std::vector<int64_t> Dilation, bool CeilMode) {
  Tensor X = batched("max_pool2d", XIn);
  PoolArgs A = poolArgs("max_pool2d", X, KernelSize, Stride, Padding,
                        Dilation, CeilMode);
  Tensor Y = dispatch::call1(
      OpKind::MaxPool, {X},
      dispatch::attrs({{"ceil_mode", CeilMode ? 1 : 0},
                       {"dilations", A.Dilation},
                       {"kernel_shape", A.Kernel},
                       {"pads", detail::onnxPads(A.Padding)},
                       {"strides", A.Stride}}));
  return XIn.dim() == 3 ? squeeze(Y, 0) : Y;
}

Tensor avg_pool2d(const Tensor &XIn, std::vector<int64_t> KernelSize,
                  std::vector<int64_t> Stride, std::vector<int64_t> Padding,
                  bool CeilMode, bool CountIncludePad) {
  Tensor X = batched("avg_pool2d", XIn);
  PoolArgs A = poolArgs("avg_pool2d", X, KernelSize, Stride, Padding, {1},
                        CeilMode);
  Tensor Y = dispatch::call1(
      OpKind::AveragePool, {X},
      dispatch::attrs({{"ceil_mode", CeilMode ? 1 : 0},
                       {"count_include_pad", CountIncludePad ? 1 : 0},
                       {"kernel_shape", A.Kernel},
                       {"pads", detail::onnxPads(A.Padding)},
                       {"strides", A.Stride}}));
  return XIn.dim() == 3 ? squeeze(Y, 0) : Y;
}

namespace {

/// Adaptive average pooling of axis Axis from In to Out windows.
Tensor adaptiveAxis(const Tensor &X, int64_t Axis, int64_t Out) {
  int64_t In = X.size(Axis);
  if (In == Out)
    return X;
  std::vector<Tensor> Parts;
  for (int64_t I = 0; I < Out; ++I) {
    int64_t S = (I * In) / Out;
    int64_t E = ((I + 1) * In + Out - 1) / Out;
    Parts.push_back(mean(slice(X, Axis, S, E), {Axis}, /*KeepDim=*/true));
  }
  return cat(Parts, Axis);
}

} // namespace

Tensor adaptive_avg_pool2d(const Tensor &XIn,
                           std::vector<int64_t> OutputSize) {
  const char *Op = "adaptive_avg_pool2d";
  Tensor X = batched(Op, XIn);
  std::vector<int64_t> Out = detail::expandArg(Op, "output_size", OutputSize, 2);
  for (size_t I = 0; I < 2; ++I) {
    if (Out[I] == -1) // None in PyTorch: keep the input extent.
      Out[I] = X.size(2 + I);
    if (Out[I] <= 0)
      fail(ErrorKind::InvalidArgument, Op, ": output_size ",
           Shape(OutputSize).toString(), " must be positive");
  }
  int64_t H = X.size(2), W = X.size(3);
  if (H == 0 || W == 0)
    fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(XIn),
         " has an empty spatial axis");
  Tensor Y;
  if (Out[0] == 1 && Out[1] == 1) {
    Y = dispatch::call1(OpKind::GlobalAveragePool, {X});
  } else if (H % Out[0] == 0 && W % Out[1] == 0) {
    std::vector<int64_t> K = {H / Out[0], W / Out[1]};
    if (K[0] == 1 && K[1] == 1)
      Y = X;
    else
      Y = dispatch::call1(OpKind::AveragePool, {X},
                          dispatch::attrs({{"kernel_shape", K},
                                           {"strides", K}}));
  } else {
    Y = adaptiveAxis(adaptiveAxis(X, 2, Out[0]), 3, Out[1]);
  }
  return XIn.dim() == 3 ? squeeze(Y, 0) : Y;
}

} // namespace nng::F
