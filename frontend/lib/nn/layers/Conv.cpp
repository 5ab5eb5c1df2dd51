//===- Conv.cpp - Convolution layers --------------------------------------===//
//
// Conv1d, Conv2d and ConvTranspose2d: argument validation as in PyTorch's
// _ConvNd.__init__, registration of weight/bias, reset_parameters, the
// extra_repr of _ConvNd, and forward through nng::F. Unbatched inputs get a
// batch axis for the call; padding="same" with an even total padding pads
// the end of the input with zeros first (what PyTorch does internally).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"

#include <cmath>

namespace nng::nn {

namespace detail {

void ConvNd::setUp(ModuleBase &Self, const std::string &Name,
                   size_t SpatialDims, int64_t InChannels, int64_t OutChannels,
                   const IntOrTuple &KernelSize, const IntOrTuple &Stride,
                   const ConvPadding &Padding, const IntOrTuple &Dilation,
                   bool Transposed, const IntOrTuple &OutputPadding,
                   int64_t Groups, bool Bias, const std::string &PaddingMode) {
  if (InChannels < 0 || OutChannels < 0)
    fail(ErrorKind::InvalidArgument, Name,
         ": in_channels and out_channels "
         "are required and must be non-negative, got in_channels=",
         InChannels, ", out_channels=", OutChannels);
  if (Groups <= 0)
    fail(ErrorKind::InvalidArgument, Name,
         ": groups must be a positive integer, got ", Groups);
  if (InChannels % Groups != 0)
    fail(ErrorKind::InvalidArgument, Name, ": in_channels (", InChannels,
         ") must be divisible by groups (", Groups, ")");
  if (OutChannels % Groups != 0)
    fail(ErrorKind::InvalidArgument, Name, ": out_channels (", OutChannels,
         ") must be divisible by groups (", Groups, ")");
  in_channels = InChannels;
  out_channels = OutChannels;
  kernel_size = KernelSize.expand(SpatialDims, Name + " kernel_size");
  for (int64_t K : kernel_size)
    if (K <= 0)
      fail(ErrorKind::InvalidArgument, Name,
           ": kernel_size is required and "
           "must be positive, got ",
           KernelSize.repr());
  stride = Stride.expand(SpatialDims, Name + " stride");
  dilation = Dilation.expand(SpatialDims, Name + " dilation");
  for (size_t I = 0; I < SpatialDims; ++I)
    if (stride[I] <= 0 || dilation[I] <= 0)
      fail(ErrorKind::InvalidArgument, Name,
           ": stride and dilation must be "
           "positive, got stride=",
           Stride.repr(), ", dilation=", Dilation.repr());
  if (Padding.isString()) {
    if (Padding.mode() != "same" && Padding.mode() != "valid")
      fail(ErrorKind::InvalidArgument, Name, ": invalid padding string '",
           Padding.mode(), "', should be one of 'same', 'valid'");
    if (Transposed)
      fail(ErrorKind::InvalidArgument, Name,
           ": padding strings are not supported for transposed convolutions");
    if (Padding.mode() == "same")
      for (int64_t S : stride)
        if (S != 1)
          fail(ErrorKind::InvalidArgument, Name,
               ": padding='same' is not "
               "supported for strided convolutions (stride=",
               Stride.repr(), ")");
    padding_string = Padding.mode();
    padding.assign(SpatialDims, 0);
  } else {
    padding = Padding.sizes().expand(SpatialDims, Name + " padding");
    for (int64_t P : padding)
      if (P < 0)
        fail(ErrorKind::InvalidArgument, Name,
             ": padding must be non-negative, got ", Padding.sizes().repr());
  }
  transposed = Transposed;
  output_padding = OutputPadding.expand(SpatialDims, Name + " output_padding");
  groups = Groups;
  if (PaddingMode != "zeros" && PaddingMode != "reflect" &&
      PaddingMode != "replicate" && PaddingMode != "circular")
    fail(ErrorKind::InvalidArgument, Name,
         ": padding_mode must be one of "
         "'zeros', 'reflect', 'replicate', 'circular', but got padding_mode='",
         PaddingMode, "'");
  if (PaddingMode != "zeros")
    fail(ErrorKind::Unsupported, Name, ": padding_mode='", PaddingMode,
         "' is not supported in nngraph; only 'zeros' is (pad the input "
         "yourself and use padding=0)");
  padding_mode = PaddingMode;

  std::vector<int64_t> WShape =
      Transposed ? std::vector<int64_t>{InChannels, OutChannels / Groups}
                 : std::vector<int64_t>{OutChannels, InChannels / Groups};
  WShape.insert(WShape.end(), kernel_size.begin(), kernel_size.end());
  weight = Self.register_parameter("weight", empty(WShape));
  bias =
      Self.register_parameter("bias", Bias ? empty({OutChannels}) : Tensor());
  reset_parameters();
}

void ConvNd::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t FanIn = init::calculate_fan_in_and_fan_out(weight).first;
    if (FanIn != 0) {
      double Bound = 1.0 / std::sqrt(static_cast<double>(FanIn));
      init::uniform_(bias, -Bound, Bound);
    }
  }
}

std::string ConvNd::convRepr() const {
  auto AllEqual = [](const std::vector<int64_t> &V, int64_t X) {
    for (int64_t E : V)
      if (E != X)
        return false;
    return true;
  };
  std::string S = std::to_string(in_channels) + ", " +
                  std::to_string(out_channels) +
                  ", kernel_size=" + repr::pyTuple(kernel_size) +
                  ", stride=" + repr::pyTuple(stride);
  // A padding string never equals the zero tuple, so PyTorch prints it.
  if (padding_string)
    S += ", padding=" + *padding_string;
  else if (!AllEqual(padding, 0))
    S += ", padding=" + repr::pyTuple(padding);
  if (!AllEqual(dilation, 1))
    S += ", dilation=" + repr::pyTuple(dilation);
  if (!AllEqual(output_padding, 0))
    S += ", output_padding=" + repr::pyTuple(output_padding);
  if (groups != 1)
    S += ", groups=" + std::to_string(groups);
  if (!bias.defined())
    S += ", bias=False";
  if (padding_mode != "zeros")
    S += ", padding_mode=" + padding_mode;
  return S;
}

Tensor ConvNd::batched(const Tensor &Input, const std::string &Name,
                       bool &Unbatched) const {
  if (!Input.defined())
    fail(ErrorKind::InvalidArgument, Name, ": the input is undefined");
  int64_t Spatial = static_cast<int64_t>(kernel_size.size());
  if (Input.dim() != Spatial + 1 && Input.dim() != Spatial + 2)
    fail(ErrorKind::ShapeMismatch, Name, ": expected ", Spatial + 1,
         "D (unbatched) or ", Spatial + 2,
         "D (batched) input, but got input "
         "of shape ",
         Input.shape().toString(), " (weight of shape ",
         weight.shape().toString(), ")");
  Unbatched = Input.dim() == Spatial + 1;
  Tensor X = Unbatched ? Input.unsqueeze(0) : Input;
  if (X.size(1) != in_channels)
    fail(ErrorKind::ShapeMismatch, Name, ": expected input with ", in_channels,
         " channels (in_channels=", in_channels, ", groups=", groups,
         "), but got input of shape ", Input.shape().toString(),
         " (weight of shape ", weight.shape().toString(), ")");
  return X;
}

void ConvNd::samePadding(std::vector<int64_t> &Symmetric,
                         std::vector<int64_t> &ExtraEnd) const {
  size_t N = kernel_size.size();
  Symmetric.assign(N, 0);
  ExtraEnd.assign(N, 0);
  if (!padding_string || *padding_string == "valid")
    return;
  for (size_t I = 0; I < N; ++I) {
    int64_t Total = dilation[I] * (kernel_size[I] - 1);
    int64_t Left = Total / 2;
    Symmetric[I] = Left;
    ExtraEnd[I] = Total - 2 * Left;
  }
}

} // namespace detail

namespace {

/// The explicit padding for F and the input, padded at the end of each
/// spatial axis where "same" needs an odd total.
Tensor applyPadding(const detail::ConvNd &C, Tensor X,
                    std::vector<int64_t> &Pad) {
  if (!C.padding_string) {
    Pad = C.padding;
    return X;
  }
  std::vector<int64_t> Extra;
  C.samePadding(Pad, Extra);
  for (size_t I = 0; I < Extra.size(); ++I) {
    if (Extra[I] == 0)
      continue;
    int64_t Axis = static_cast<int64_t>(2 + I);
    std::vector<int64_t> ZShape = X.sizes();
    ZShape[Axis] = Extra[I];
    X = cat({X, zeros(ZShape, X.dtype())}, Axis);
  }
  return X;
}

} // namespace

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels,
               IntOrTuple kernel_size, IntOrTuple stride, ConvPadding padding,
               IntOrTuple dilation, int64_t groups, bool bias,
               const std::string &padding_mode, FactoryKwargs factory) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  setUp(*this, "Conv1d", 1, in_channels, out_channels, kernel_size, stride,
        padding, dilation, false, 0, groups, bias, padding_mode);
}

Conv1d::Conv1d(const Conv1dOptions &O)
    : Conv1d(O.in_channels, O.out_channels, O.kernel_size, O.stride, O.padding,
             O.dilation, O.groups, O.bias, O.padding_mode,
             {O.device, O.dtype}) {}

Tensor Conv1d::forward(const Tensor &input) {
  bool Unbatched = false;
  Tensor X = batched(input, "Conv1d", Unbatched);
  std::vector<int64_t> Pad;
  X = applyPadding(*this, X, Pad);
  Tensor Y = F::conv1d(X, weight, bias, stride[0], Pad[0], dilation[0], groups);
  return Unbatched ? Y.squeeze(0) : Y;
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels,
               IntOrTuple kernel_size, IntOrTuple stride, ConvPadding padding,
               IntOrTuple dilation, int64_t groups, bool bias,
               const std::string &padding_mode, FactoryKwargs factory) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  setUp(*this, "Conv2d", 2, in_channels, out_channels, kernel_size, stride,
        padding, dilation, false, 0, groups, bias, padding_mode);
}

Conv2d::Conv2d(const Conv2dOptions &O)
    : Conv2d(O.in_channels, O.out_channels, O.kernel_size, O.stride, O.padding,
             O.dilation, O.groups, O.bias, O.padding_mode,
             {O.device, O.dtype}) {}

Tensor Conv2d::forward(const Tensor &input) {
  bool Unbatched = false;
  Tensor X = batched(input, "Conv2d", Unbatched);
  std::vector<int64_t> Pad;
  X = applyPadding(*this, X, Pad);
  Tensor Y = F::conv2d(X, weight, bias, stride, Pad, dilation, groups);
  return Unbatched ? Y.squeeze(0) : Y;
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels,
                                 IntOrTuple kernel_size, IntOrTuple stride,
                                 IntOrTuple padding, IntOrTuple output_padding,
                                 int64_t groups, bool bias, IntOrTuple dilation,
                                 const std::string &padding_mode,
                                 FactoryKwargs factory) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (padding_mode != "zeros")
    fail(ErrorKind::InvalidArgument,
         "ConvTranspose2d: only \"zeros\" "
         "padding mode is supported, got '",
         padding_mode, "'");
  setUp(*this, "ConvTranspose2d", 2, in_channels, out_channels, kernel_size,
        stride, padding, dilation, true, output_padding, groups, bias,
        padding_mode);
}

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions &O)
    : ConvTranspose2d(O.in_channels, O.out_channels, O.kernel_size, O.stride,
                      O.padding, O.output_padding, O.groups, O.bias, O.dilation,
                      O.padding_mode, {O.device, O.dtype}) {}

Tensor
ConvTranspose2d::forward(const Tensor &input,
                         std::optional<std::vector<int64_t>> output_size) {
  bool Unbatched = false;
  Tensor X = batched(input, "ConvTranspose2d", Unbatched);
  std::vector<int64_t> OutPad = output_padding;
  if (output_size) {
    // PyTorch's _ConvTransposeNd._output_padding.
    std::vector<int64_t> Size = *output_size;
    size_t NonSpatial = Unbatched ? 1 : 2;
    if (Size.size() == NonSpatial + 2)
      Size.erase(Size.begin(), Size.begin() + NonSpatial);
    if (Size.size() != 2)
      fail(ErrorKind::InvalidArgument, "ConvTranspose2d: for ", input.dim(),
           "D input, output_size must have 2 or ", NonSpatial + 2,
           " elements (got ", output_size->size(), ")");
    std::vector<int64_t> Min(2), Max(2);
    for (size_t D = 0; D < 2; ++D) {
      Min[D] = (X.size(D + 2) - 1) * stride[D] - 2 * padding[D] +
               dilation[D] * (kernel_size[D] - 1) + 1;
      Max[D] = Min[D] + stride[D] - 1;
    }
    for (size_t D = 0; D < 2; ++D)
      if (Size[D] < Min[D] || Size[D] > Max[D])
        fail(ErrorKind::InvalidArgument,
             "ConvTranspose2d: requested an "
             "output size of ",
             repr::pyTuple(Size),
             ", but valid sizes range "
             "from ",
             repr::pyTuple(Min), " to ", repr::pyTuple(Max),
             " (for an input of shape ", input.shape().toString(), ")");
    for (size_t D = 0; D < 2; ++D)
      OutPad[D] = Size[D] - Min[D];
  }
  Tensor Y = F::conv_transpose2d(X, weight, bias, stride, padding, OutPad,
                                 groups, dilation);
  return Unbatched ? Y.squeeze(0) : Y;
}

} // namespace nng::nn
