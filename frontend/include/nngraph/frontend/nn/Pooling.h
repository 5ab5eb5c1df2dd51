//===- Pooling.h - Pooling layers ----------------------------- -*- C++ -*-===//
//
// torch.nn.MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over [N, C, H, W]
// (or unbatched [C, H, W]) with PyTorch 1.13's arguments and extra_repr;
// sizes print in the form given (kernel_size=2 or kernel_size=(2, 2)), and
// stride defaults to kernel_size. MaxPool2d's return_indices=true is
// refused (nng::F::max_pool2d returns no indices).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nng::nn {

/// MaxPool2d arguments by name (PyTorch's order).
struct MaxPool2dOptions {
  IntOrTuple kernel_size = -1;
  std::optional<IntOrTuple> stride = std::nullopt;
  IntOrTuple padding = 0;
  IntOrTuple dilation = 1;
  bool return_indices = false;
  bool ceil_mode = false;
};

class MaxPool2d : public Module<MaxPool2d> {
public:
  explicit MaxPool2d(IntOrTuple kernel_size,
                     std::optional<IntOrTuple> stride = std::nullopt,
                     IntOrTuple padding = 0, IntOrTuple dilation = 1,
                     bool return_indices = false, bool ceil_mode = false);
  explicit MaxPool2d(const MaxPool2dOptions &O);
  Tensor forward(const Tensor &input);
  /// "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False".
  std::string extra_repr() const override;

  IntOrTuple kernel_size;
  IntOrTuple stride;
  IntOrTuple padding;
  IntOrTuple dilation;
  bool return_indices;
  bool ceil_mode;
};

/// AvgPool2d arguments by name (PyTorch's order).
struct AvgPool2dOptions {
  IntOrTuple kernel_size = -1;
  std::optional<IntOrTuple> stride = std::nullopt;
  IntOrTuple padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override = std::nullopt;
};

class AvgPool2d : public Module<AvgPool2d> {
public:
  explicit AvgPool2d(IntOrTuple kernel_size,
                     std::optional<IntOrTuple> stride = std::nullopt,
                     IntOrTuple padding = 0, bool ceil_mode = false,
                     bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt);
  explicit AvgPool2d(const AvgPool2dOptions &O);
  Tensor forward(const Tensor &input);
  /// "kernel_size=2, stride=2, padding=0".
  std::string extra_repr() const override;

  IntOrTuple kernel_size;
  IntOrTuple stride;
  IntOrTuple padding;
  bool ceil_mode;
  bool count_include_pad;
  /// Divides each window sum by this instead of the window size (needs
  /// ceil_mode=false).
  std::optional<int64_t> divisor_override;
};

/// Averages each channel into output_size bins.
class AdaptiveAvgPool2d : public Module<AdaptiveAvgPool2d> {
public:
  explicit AdaptiveAvgPool2d(IntOrTuple output_size);
  Tensor forward(const Tensor &input);
  /// "output_size=(1, 1)" or "output_size=7".
  std::string extra_repr() const override;
  IntOrTuple output_size;
};

} // namespace nng::nn
