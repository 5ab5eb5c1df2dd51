//===- Conv.h - Convolution layers ---------------------------- -*- C++ -*-===//
//
// torch.nn.Conv1d, Conv2d and ConvTranspose2d with PyTorch 1.13's
// arguments (kernel_size, stride, padding incl. the strings "same" and
// "valid", dilation, groups, bias, padding_mode), parameter shapes
// (weight [out, in/groups, k...], transposed [in, out/groups, k...]),
// default initialization (kaiming_uniform_(a=sqrt(5)), bias
// U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and extra_repr. Only
// padding_mode="zeros" runs; the other PyTorch modes are refused at
// construction with a clear error.
//
// Arguments are positional in PyTorch's order, or named through an options
// struct with C++20 designated initializers:
//   nn::Conv2d(1, 32, 3, /*stride=*/1, /*padding=*/1)
//   nn::Conv2d({.in_channels = 1, .out_channels = 32, .kernel_size = 3,
//               .padding = "same", .bias = false})
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nng::nn {

/// Conv1d / Conv2d arguments by name (in PyTorch's order). in_channels,
/// out_channels and kernel_size are required.
struct ConvOptions {
  int64_t in_channels = -1;
  int64_t out_channels = -1;
  IntOrTuple kernel_size = -1;
  IntOrTuple stride = 1;
  ConvPadding padding = 0;
  IntOrTuple dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  std::string padding_mode = "zeros";
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};
using Conv1dOptions = ConvOptions;
using Conv2dOptions = ConvOptions;

/// ConvTranspose2d arguments by name (PyTorch's order differs from Conv's:
/// output_padding, groups, bias, then dilation).
struct ConvTransposeOptions {
  int64_t in_channels = -1;
  int64_t out_channels = -1;
  IntOrTuple kernel_size = -1;
  IntOrTuple stride = 1;
  IntOrTuple padding = 0;
  IntOrTuple output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  IntOrTuple dilation = 1;
  std::string padding_mode = "zeros";
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};
using ConvTranspose2dOptions = ConvTransposeOptions;

namespace detail {

/// The state PyTorch's _ConvNd keeps, shared by the convolution layers:
/// sizes expanded to one value per spatial axis, as PyTorch stores them.
class ConvNd {
public:
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::vector<int64_t> kernel_size;
  std::vector<int64_t> stride;
  /// Explicit padding (zeros when padding_string is set).
  std::vector<int64_t> padding;
  /// "same" or "valid" when padding was given as a string.
  std::optional<std::string> padding_string;
  std::vector<int64_t> dilation;
  bool transposed = false;
  std::vector<int64_t> output_padding;
  int64_t groups = 1;
  std::string padding_mode = "zeros";
  Tensor weight;
  /// Undefined when constructed with bias=false.
  Tensor bias;

  /// kaiming_uniform_(weight, a=sqrt(5)); bias from U(-1/sqrt(fan_in), ..).
  void reset_parameters();
  /// For padding="same"/"valid": the symmetric padding to pass to F and
  /// the extra zeros to add at the end of each spatial axis first ("same"
  /// with an odd total padding, as PyTorch does).
  void samePadding(std::vector<int64_t> &Symmetric,
                   std::vector<int64_t> &ExtraEnd) const;

protected:
  ConvNd() = default;
  /// Validates the arguments like _ConvNd.__init__ and registers weight
  /// and bias on Self. Name is the layer type for messages.
  void setUp(ModuleBase &Self, const std::string &Name, size_t SpatialDims,
             int64_t InChannels, int64_t OutChannels,
             const IntOrTuple &KernelSize, const IntOrTuple &Stride,
             const ConvPadding &Padding, const IntOrTuple &Dilation,
             bool Transposed, const IntOrTuple &OutputPadding, int64_t Groups,
             bool Bias, const std::string &PaddingMode);
  /// PyTorch's _ConvNd.extra_repr.
  std::string convRepr() const;
  /// Checks rank and channels; returns the input with a batch axis (and
  /// whether one was added). Name is the layer type.
  Tensor batched(const Tensor &Input, const std::string &Name,
                 bool &Unbatched) const;
};

} // namespace detail

/// 1-D convolution over [N, C, L] (or unbatched [C, L]).
class Conv1d : public Module<Conv1d>, public detail::ConvNd {
public:
  Conv1d(int64_t in_channels, int64_t out_channels, IntOrTuple kernel_size,
         IntOrTuple stride = 1, ConvPadding padding = 0,
         IntOrTuple dilation = 1, int64_t groups = 1, bool bias = true,
         const std::string &padding_mode = "zeros",
         FactoryKwargs factory = {});
  explicit Conv1d(const Conv1dOptions &O);
  Tensor forward(const Tensor &input);
  using ConvNd::reset_parameters;
  /// "16, 33, kernel_size=(3,), stride=(2,)".
  std::string extra_repr() const override { return convRepr(); }
};

/// 2-D convolution over [N, C, H, W] (or unbatched [C, H, W]).
class Conv2d : public Module<Conv2d>, public detail::ConvNd {
public:
  Conv2d(int64_t in_channels, int64_t out_channels, IntOrTuple kernel_size,
         IntOrTuple stride = 1, ConvPadding padding = 0,
         IntOrTuple dilation = 1, int64_t groups = 1, bool bias = true,
         const std::string &padding_mode = "zeros",
         FactoryKwargs factory = {});
  explicit Conv2d(const Conv2dOptions &O);
  Tensor forward(const Tensor &input);
  using ConvNd::reset_parameters;
  /// "1, 32, kernel_size=(3, 3), stride=(1, 1)".
  std::string extra_repr() const override { return convRepr(); }
};

/// 2-D transposed convolution (the gradient of Conv2d with respect to its
/// input); weight [in_channels, out_channels / groups, kH, kW].
class ConvTranspose2d : public Module<ConvTranspose2d>, public detail::ConvNd {
public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels,
                  IntOrTuple kernel_size, IntOrTuple stride = 1,
                  IntOrTuple padding = 0, IntOrTuple output_padding = 0,
                  int64_t groups = 1, bool bias = true, IntOrTuple dilation = 1,
                  const std::string &padding_mode = "zeros",
                  FactoryKwargs factory = {});
  explicit ConvTranspose2d(const ConvTranspose2dOptions &O);
  /// output_size (spatial [H, W], or [N, C, H, W]) picks output_padding
  /// among the valid sizes, as in PyTorch.
  Tensor
  forward(const Tensor &input,
          std::optional<std::vector<int64_t>> output_size = std::nullopt);
  using ConvNd::reset_parameters;
  std::string extra_repr() const override { return convRepr(); }
};

} // namespace nng::nn
