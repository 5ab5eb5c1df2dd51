//===- VGG.h - torchvision's VGG-11 with batch norm --------------*- C++ -*-===//
//
// torchvision.models.vgg11_bn (0.14) in C++ with torchvision's names:
// features.N (Conv2d 3x3 pad 1, BatchNorm2d, ReLU per conv; MaxPool2d 2/2
// per "M" of config A), avgpool (AdaptiveAvgPool2d 7x7), classifier.0/3/6
// (Linear 25088-4096-4096-num_classes with ReLU and Dropout between).
// Initialization as torchvision: convs kaiming_normal_(fan_out, relu) with
// zero bias, BatchNorm 1 / 0, Linear normal_(0, 0.01) with zero bias.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Pooling.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nng::zoo {

class VGG : public nn::Module<VGG> {
public:
  /// Features: torchvision's make_layers output.
  VGG(std::shared_ptr<nn::Sequential> features, int64_t num_classes = 1000,
      double dropout = 0.5);
  /// x [N, 3, H, W] -> logits [N, num_classes].
  Tensor forward(const Tensor &x);

  std::shared_ptr<nn::Sequential> features;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Sequential> classifier;
};

/// torchvision's make_layers: Config holds channel counts, with -1 for a
/// max-pool ("M").
std::shared_ptr<nn::Sequential> makeVggLayers(const std::vector<int64_t> &Config,
                                              bool batch_norm);

/// torchvision.models.vgg11_bn(weights=None, num_classes=...).
std::shared_ptr<VGG> vgg11_bn(int64_t num_classes = 1000);

} // namespace nng::zoo
