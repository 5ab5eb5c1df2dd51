//===- Blocks.h - Building blocks shared by the zoo models -------*- C++ -*-===//
//
// The small pieces torchvision's models are made of that the nn layer set
// lacks: ReLU6 (torch.nn.ReLU6, min(max(0, x), 6)) and
// Conv2dNormActivation (torchvision.ops.misc.Conv2dNormActivation: a
// Sequential of Conv2d, an optional BatchNorm2d and an optional
// activation, entries "0", "1", "2", printed under its own type name), plus
// the weight initialization loop the torchvision classifiers run at the end
// of their constructors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <string>

namespace nng::zoo {

/// torch.nn.ReLU6: min(max(0, x), 6). inplace only changes the printing
/// (the result is computed out of place, which gives the same values).
class ReLU6 : public nn::Module<ReLU6> {
public:
  explicit ReLU6(bool inplace = false) : inplace(inplace) {}
  Tensor forward(const Tensor &input);
  /// "" or "inplace=True", as PyTorch prints it.
  std::string extra_repr() const override;
  bool inplace;
};

/// Which activation a Conv2dNormActivation appends.
enum class Activation { None, ReLU, ReLU6 };

/// torchvision's Conv2dNormActivation: Conv2d (padding (k - 1) / 2 *
/// dilation, bias only without a norm layer), BatchNorm2d when Norm, then
/// the activation (inplace=True, as torchvision builds it).
class Conv2dNormActivation : public nn::Sequential {
public:
  Conv2dNormActivation(int64_t in_channels, int64_t out_channels,
                       int64_t kernel_size = 3, int64_t stride = 1,
                       int64_t groups = 1, bool norm = true,
                       Activation activation = Activation::ReLU,
                       int64_t dilation = 1);
  int64_t out_channels;
};

/// How initVisionWeights draws a Linear's weight.
enum class LinearInit {
  /// Leave Linear layers as constructed (PyTorch's default init; ResNet).
  Default,
  /// normal_(0, 0.01) weight, zero bias (MobileNetV2, VGG).
  Normal001,
};

/// The torchvision classifiers' init loop over M.modules(): Conv2d weight
/// kaiming_normal_(mode="fan_out", nonlinearity="relu") and zero bias;
/// BatchNorm2d / GroupNorm weight 1, bias 0; Linear per LinearMode.
void initVisionWeights(nn::ModuleBase &M, LinearInit LinearMode);

} // namespace nng::zoo
