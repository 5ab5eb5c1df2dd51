//===- Conv.cpp - nng::F linear, conv1d, conv2d, conv_transpose2d ----------===//
//
// linear on MatMul + Add (Gemm for 2-D inputs), the convolutions on ONNX
// Conv and ConvTranspose with PyTorch's argument conventions (symmetric
// padding, one value or one per spatial axis). Shapes are checked first so
// a mismatch names the op, the input and weight shapes and the channel
// counts that disagree. Also the helpers of FunctionalInternal.h.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;
using ir::OpKind;

namespace detail {

std::vector<int64_t> expandArg(const char *Op, const char *What,
                               const std::vector<int64_t> &V, size_t N) {
  if (V.size() == N)
    return V;
  if (V.size() == 1)
    return std::vector<int64_t>(N, V[0]);
  fail(ErrorKind::InvalidArgument, Op, ": ", What, " ",
       Shape(V).toString(), " must have 1 or ", N, " values");
}

std::vector<int64_t> onnxPads(const std::vector<int64_t> &P) {
  std::vector<int64_t> R(P);
  R.insert(R.end(), P.begin(), P.end());
  return R;
}

void requireFloat(const char *Op, const char *What, const Tensor &X) {
  if (!X.defined())
    fail(ErrorKind::InvalidArgument, Op, ": ", What, " is undefined");
  if (!X.is_floating_point())
    fail(ErrorKind::InvalidArgument, Op, ": ", What,
         " must be floating point, got ", describe(X));
}

void checkReduction(const char *Op, const std::string &R) {
  if (R != "mean" && R != "sum" && R != "none")
    fail(ErrorKind::InvalidArgument, Op, ": reduction must be 'mean', 'sum' "
                                         "or 'none', got '",
         R, "'");
}

Tensor reduceLoss(const char *Op, const Tensor &L, const std::string &R) {
  checkReduction(Op, R);
  if (R == "mean")
    return mean(L);
  if (R == "sum")
    return sum(L);
  return L;
}

} // namespace detail

namespace {

void checkPositive(const char *Op, const char *What,
                   const std::vector<int64_t> &V, bool AllowZero) {
  for (int64_t X : V)
    if (X < 0 || (X == 0 && !AllowZero))
      fail(ErrorKind::InvalidArgument, Op, ": ", What, " ",
           Shape(V).toString(), " must be ",
           AllowZero ? "non-negative" : "positive");
}

/// Shared by conv1d/conv2d: Rank spatial axes.
Tensor convNd(const char *Op, size_t Rank, const Tensor &XIn, const Tensor &W,
              const Tensor &B, std::vector<int64_t> Stride,
              std::vector<int64_t> Padding, std::vector<int64_t> Dilation,
              int64_t Groups) {
  detail::requireFloat(Op, "input", XIn);
  detail::requireFloat(Op, "weight", W);
  bool Unbatched = XIn.dim() == static_cast<int64_t>(Rank) + 1;
  if (!Unbatched && XIn.dim() != static_cast<int64_t>(Rank) + 2)
    fail(ErrorKind::ShapeMismatch, Op, ": expected a ", Rank + 1, "-D or ",
         Rank + 2, "-D input (batch, channels, spatial...), got ",
         describe(XIn));
  Tensor X = Unbatched ? unsqueeze(XIn, 0) : XIn;
  if (W.dim() != static_cast<int64_t>(Rank) + 2)
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(W), " must be ",
         Rank + 2, "-D [out_channels, in_channels/groups, kernel...]");
  if (Groups <= 0)
    fail(ErrorKind::InvalidArgument, Op, ": groups must be positive, got ",
         Groups);
  if (X.size(1) != W.size(1) * Groups)
    fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(XIn),
         " and weight ", describe(W), ": expected input to have ",
         W.size(1) * Groups, " channels (weight.size(1) * groups = ",
         W.size(1), " * ", Groups, "), but got ", X.size(1), " channels");
  if (W.size(0) % Groups != 0)
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(W),
         ": out_channels ", W.size(0), " is not divisible by groups ", Groups);
  if (B.defined() && (B.dim() != 1 || B.size(0) != W.size(0)))
    fail(ErrorKind::ShapeMismatch, Op, ": bias ", describe(B),
         " must have shape [", W.size(0), "] for weight ", describe(W));
  Stride = detail::expandArg(Op, "stride", Stride, Rank);
  Padding = detail::expandArg(Op, "padding", Padding, Rank);
  Dilation = detail::expandArg(Op, "dilation", Dilation, Rank);
  checkPositive(Op, "stride", Stride, false);
  checkPositive(Op, "padding", Padding, true);
  checkPositive(Op, "dilation", Dilation, false);
  std::vector<int64_t> Kernel;
  for (size_t D = 0; D < Rank; ++D) {
    int64_t K = W.size(2 + D);
    Kernel.push_back(K);
    int64_t Eff = (K - 1) * Dilation[D] + 1;
    if (X.size(2 + D) + 2 * Padding[D] < Eff)
      fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(XIn),
           " (padded size ", X.size(2 + D) + 2 * Padding[D],
           " on spatial axis ", D, ") is smaller than the dilated kernel ",
           Eff, " of weight ", describe(W));
  }
  DType T = promote_types(X.dtype(), W.dtype());
  std::vector<Tensor> In = {X.to(T), W.to(T)};
  if (B.defined())
    In.push_back(B.to(T));
  Tensor Y = dispatch::call1(OpKind::Conv, In,
                             dispatch::attrs({{"dilations", Dilation},
                                              {"group", Groups},
                                              {"kernel_shape", Kernel},
                                              {"pads", detail::onnxPads(Padding)},
                                              {"strides", Stride}}));
  return Unbatched ? squeeze(Y, 0) : Y;
}

} // namespace

Tensor linear(const Tensor &X, const Tensor &W, const Tensor &B) {
  detail::requireFloat("linear", "input", X);
  detail::requireFloat("linear", "weight", W);
  if (W.dim() != 2 && W.dim() != 1)
    fail(ErrorKind::ShapeMismatch, "linear: weight ", describe(W),
         " must be 2-D [out_features, in_features]");
  if (X.dim() == 0 || X.size(-1) != W.size(-1))
    fail(ErrorKind::ShapeMismatch, "linear: input ", describe(X),
         " and weight ", describe(W), ": in_features ",
         X.dim() ? X.size(-1) : SymInt(0), " and ", W.size(-1), " differ");
  if (B.defined() && W.dim() == 2 &&
      !(B.dim() == 1 && B.size(0) == W.size(0)) && B.numel() != 1)
    fail(ErrorKind::ShapeMismatch, "linear: bias ", describe(B),
         " must have shape [", W.size(0), "] for weight ", describe(W));
  if (X.dim() == 2 && W.dim() == 2 && X.dtype() == W.dtype() &&
      (!B.defined() || B.dtype() == X.dtype())) {
    std::vector<Tensor> In = {X, W};
    if (B.defined())
      In.push_back(B);
    return dispatch::call1(OpKind::Gemm, In,
                           dispatch::attrs({{"transB", int64_t(1)}}));
  }
  Tensor Y = matmul(X, W.dim() == 2 ? W.t() : W);
  return B.defined() ? Y + B : Y;
}

Tensor conv1d(const Tensor &X, const Tensor &W, const Tensor &B,
              int64_t Stride, int64_t Padding, int64_t Dilation,
              int64_t Groups) {
  return convNd("conv1d", 1, X, W, B, {Stride}, {Padding}, {Dilation},
                Groups);
}

Tensor conv2d(const Tensor &X, const Tensor &W, const Tensor &B,
              std::vector<int64_t> Stride, std::vector<int64_t> Padding,
              std::vector<int64_t> Dilation, int64_t Groups) {
  return convNd("conv2d", 2, X, W, B, std::move(Stride), std::move(Padding),
                std::move(Dilation), Groups);
}

Tensor conv_transpose2d(const Tensor &XIn, const Tensor &W, const Tensor &B,
                        std::vector<int64_t> Stride,
                        std::vector<int64_t> Padding,
                        std::vector<int64_t> OutputPadding, int64_t Groups,
                        std::vector<int64_t> Dilation) {
  const char *Op = "conv_transpose2d";
  detail::requireFloat(Op, "input", XIn);
  detail::requireFloat(Op, "weight", W);
  bool Unbatched = XIn.dim() == 3;
  if (!Unbatched && XIn.dim() != 4)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected a 3-D or 4-D input (batch, channels, H, W), got ",
         describe(XIn));
  Tensor X = Unbatched ? unsqueeze(XIn, 0) : XIn;
  if (W.dim() != 4)
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(W),
         " must be 4-D [in_channels, out_channels/groups, kH, kW]");
  if (Groups <= 0)
    fail(ErrorKind::InvalidArgument, Op, ": groups must be positive, got ",
         Groups);
  if (X.size(1) != W.size(0))
    fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(XIn),
         " and weight ", describe(W), ": expected input to have ", W.size(0),
         " channels (weight.size(0)), but got ", X.size(1), " channels");
  if (W.size(0) % Groups != 0)
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(W),
         ": in_channels ", W.size(0), " is not divisible by groups ", Groups);
  int64_t OutC = W.size(1) * Groups;
  if (B.defined() && (B.dim() != 1 || B.size(0) != OutC))
    fail(ErrorKind::ShapeMismatch, Op, ": bias ", describe(B),
         " must have shape [", OutC, "] for weight ", describe(W),
         " and groups ", Groups);
  Stride = detail::expandArg(Op, "stride", Stride, 2);
  Padding = detail::expandArg(Op, "padding", Padding, 2);
  OutputPadding = detail::expandArg(Op, "output_padding", OutputPadding, 2);
  Dilation = detail::expandArg(Op, "dilation", Dilation, 2);
  checkPositive(Op, "stride", Stride, false);
  checkPositive(Op, "padding", Padding, true);
  checkPositive(Op, "output_padding", OutputPadding, true);
  checkPositive(Op, "dilation", Dilation, false);
  for (size_t D = 0; D < 2; ++D)
    if (OutputPadding[D] >= Stride[D] && OutputPadding[D] >= Dilation[D])
      fail(ErrorKind::InvalidArgument, Op, ": output padding ",
           Shape(OutputPadding).toString(),
           " must be smaller than either stride ", Shape(Stride).toString(),
           " or dilation ", Shape(Dilation).toString());
  std::vector<int64_t> Kernel = {W.size(2), W.size(3)};
  for (size_t D = 0; D < 2; ++D) {
    int64_t Out = (X.size(2 + D) - 1) * Stride[D] - 2 * Padding[D] +
                  Dilation[D] * (Kernel[D] - 1) + OutputPadding[D] + 1;
    if (Out <= 0)
      fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(XIn),
           " with weight ", describe(W), " gives a non-positive output "
                                         "size ",
           Out, " on spatial axis ", D);
  }
  DType T = promote_types(X.dtype(), W.dtype());
  std::vector<Tensor> In = {X.to(T), W.to(T)};
  if (B.defined())
    In.push_back(B.to(T));
  Tensor Y = dispatch::call1(
      OpKind::ConvTranspose, In,
      dispatch::attrs({{"dilations", Dilation},
                       {"group", Groups},
                       {"kernel_shape", Kernel},
                       {"output_padding", OutputPadding},
                       {"pads", detail::onnxPads(Padding)},
                       {"strides", Stride}}));
  return Unbatched ? squeeze(Y, 0) : Y;
}

} // namespace nng::F
