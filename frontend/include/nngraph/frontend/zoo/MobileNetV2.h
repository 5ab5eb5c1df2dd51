//===- MobileNetV2.h - torchvision's MobileNetV2 -----------------*- C++ -*-===//
//
// torchvision.models.mobilenet_v2 (0.14) in C++ with torchvision's names:
// features.0 is a Conv2dNormActivation (keys features.0.0.weight,
// features.0.1.running_mean, ...), features.1..17 are InvertedResidual
// blocks whose layers sit in a Sequential "conv" (features.1.conv.0.0.weight
// for the depthwise Conv2dNormActivation, features.2.conv.3.weight for the
// last BatchNorm of an expanding block), features.18 the last 1x1
// Conv2dNormActivation; classifier.0 is Dropout, classifier.1 Linear.
// Initialization as torchvision: convs kaiming_normal_(fan_out), BatchNorm
// 1 / 0, Linear normal_(0, 0.01) and zero bias.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <memory>

namespace nng::zoo {

/// An inverted residual block: optional 1x1 expansion (ReLU6), 3x3
/// depthwise (ReLU6), 1x1 linear projection and BatchNorm; the input is
/// added when stride is 1 and the channel count is kept.
class InvertedResidual : public nn::Module<InvertedResidual> {
public:
  InvertedResidual(int64_t inp, int64_t oup, int64_t stride,
                   int64_t expand_ratio);
  Tensor forward(const Tensor &x);

  int64_t stride;
  bool use_res_connect;
  int64_t out_channels;
  std::shared_ptr<nn::Sequential> conv;
};

/// torchvision's MobileNetV2 with width_mult and round_nearest.
class MobileNetV2 : public nn::Module<MobileNetV2> {
public:
  explicit MobileNetV2(int64_t num_classes = 1000, double width_mult = 1.0,
                       int64_t round_nearest = 8, double dropout = 0.2);
  /// x [N, 3, H, W] -> logits [N, num_classes].
  Tensor forward(const Tensor &x);

  int64_t last_channel;
  std::shared_ptr<nn::Sequential> features;
  std::shared_ptr<nn::Sequential> classifier;
};

/// torchvision.models.mobilenet_v2(weights=None, num_classes=...).
std::shared_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes = 1000);

} // namespace nng::zoo
