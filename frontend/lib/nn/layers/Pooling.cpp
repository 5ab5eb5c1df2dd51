//===- Pooling.cpp - Pooling layers ---------------------------------------===//
//
// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over nng::F (which also takes
// unbatched [C, H, W] inputs), with PyTorch's argument checks and
// extra_repr; AvgPool2d's divisor_override is the window sum (the average
// with count_include_pad times the window size) divided by the override.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Pooling.h"
#include "nngraph/frontend/Functional.h"

namespace nng::nn {

namespace {

void checkPoolInput(const Tensor &X, const char *Name) {
  if (!X.defined())
    fail(ErrorKind::InvalidArgument, Name, ": the input is undefined");
  if (X.dim() != 3 && X.dim() != 4)
    fail(ErrorKind::ShapeMismatch, Name,
         ": expected 3D (unbatched) or 4D "
         "(batched) input, got input of shape ",
         X.shape().toString());
}

void checkSizes(const char *Name, const IntOrTuple &Kernel,
                const IntOrTuple &Stride, const IntOrTuple &Padding) {
  std::vector<int64_t> K = Kernel.expand(2, std::string(Name) + " kernel_size");
  std::vector<int64_t> S = Stride.expand(2, std::string(Name) + " stride");
  std::vector<int64_t> P = Padding.expand(2, std::string(Name) + " padding");
  for (size_t I = 0; I < 2; ++I) {
    if (K[I] <= 0)
      fail(ErrorKind::InvalidArgument, Name,
           ": kernel_size is required and "
           "must be positive, got ",
           Kernel.repr());
    if (S[I] <= 0)
      fail(ErrorKind::InvalidArgument, Name, ": stride must be positive, got ",
           Stride.repr());
    if (P[I] < 0 || P[I] > K[I] / 2)
      fail(ErrorKind::InvalidArgument, Name,
           ": pad should be at most half "
           "of the kernel size, but got padding=",
           Padding.repr(), " and kernel_size=", Kernel.repr());
  }
}

} // namespace

MaxPool2d::MaxPool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                     IntOrTuple padding, IntOrTuple dilation,
                     bool return_indices, bool ceil_mode)
    : kernel_size(kernel_size), stride(stride ? *stride : kernel_size),
      padding(padding), dilation(dilation), return_indices(return_indices),
      ceil_mode(ceil_mode) {
  checkSizes("MaxPool2d", this->kernel_size, this->stride, this->padding);
  for (int64_t D : dilation.expand(2, "MaxPool2d dilation"))
    if (D <= 0)
      fail(ErrorKind::InvalidArgument,
           "MaxPool2d: dilation must be positive, got ", dilation.repr());
  if (return_indices)
    fail(ErrorKind::Unsupported,
         "MaxPool2d: return_indices=True is not "
         "supported (nng::F::max_pool2d returns no indices)");
}

MaxPool2d::MaxPool2d(const MaxPool2dOptions &O)
    : MaxPool2d(O.kernel_size, O.stride, O.padding, O.dilation,
                O.return_indices, O.ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor &input) {
  checkPoolInput(input, "MaxPool2d");
  return F::max_pool2d(input, kernel_size.expand(2, "kernel_size"),
                       stride.expand(2, "stride"), padding.expand(2, "padding"),
                       dilation.expand(2, "dilation"), ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + kernel_size.repr() + ", stride=" + stride.repr() +
         ", padding=" + padding.repr() + ", dilation=" + dilation.repr() +
         ", ceil_mode=" + repr::pyBool(ceil_mode);
}

AvgPool2d::AvgPool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                     IntOrTuple padding, bool ceil_mode, bool count_include_pad,
                     std::optional<int64_t> divisor_override)
    : kernel_size(kernel_size), stride(stride ? *stride : kernel_size),
      padding(padding), ceil_mode(ceil_mode),
      count_include_pad(count_include_pad), divisor_override(divisor_override) {
  checkSizes("AvgPool2d", this->kernel_size, this->stride, this->padding);
  if (divisor_override && *divisor_override == 0)
    fail(ErrorKind::InvalidArgument,
         "AvgPool2d: divisor_override must not be zero");
  if (divisor_override && ceil_mode)
    fail(ErrorKind::Unsupported, "AvgPool2d: divisor_override together with "
                                 "ceil_mode=True is not supported");
}

AvgPool2d::AvgPool2d(const AvgPool2dOptions &O)
    : AvgPool2d(O.kernel_size, O.stride, O.padding, O.ceil_mode,
                O.count_include_pad, O.divisor_override) {}

Tensor AvgPool2d::forward(const Tensor &input) {
  checkPoolInput(input, "AvgPool2d");
  std::vector<int64_t> K = kernel_size.expand(2, "kernel_size");
  if (divisor_override) {
    // Without ceil_mode every window lies inside the padded input, so the
    // count_include_pad average times the window size is the window sum.
    Tensor Avg = F::avg_pool2d(input, K, stride.expand(2, "stride"),
                               padding.expand(2, "padding"), false, true);
    return Avg * (static_cast<double>(K[0] * K[1]) /
                  static_cast<double>(*divisor_override));
  }
  return F::avg_pool2d(input, K, stride.expand(2, "stride"),
                       padding.expand(2, "padding"), ceil_mode,
                       count_include_pad);
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + kernel_size.repr() + ", stride=" + stride.repr() +
         ", padding=" + padding.repr();
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(IntOrTuple output_size)
    : output_size(output_size) {
  for (int64_t S : output_size.expand(2, "AdaptiveAvgPool2d output_size"))
    if (S <= 0)
      fail(ErrorKind::InvalidArgument,
           "AdaptiveAvgPool2d: output_size must "
           "be positive, got ",
           output_size.repr());
}

Tensor AdaptiveAvgPool2d::forward(const Tensor &input) {
  checkPoolInput(input, "AdaptiveAvgPool2d");
  return F::adaptive_avg_pool2d(input, output_size.expand(2, "output_size"));
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + output_size.repr();
}

} // namespace nng::nn
