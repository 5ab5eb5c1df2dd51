//===- ResNet.h - torchvision's ResNet-18/34/50 ------------------*- C++ -*-===//
//
// torchvision.models.resnet (0.14) in C++, with the same module names, so
// state_dict keys equal torchvision's ("conv1.weight", "bn1.running_mean",
// "layer1.0.conv1.weight", "layer2.0.downsample.0.weight", "fc.bias", ...)
// in the same order, and the same printing. BasicBlock (resnet18/34) and
// Bottleneck (resnet50, the v1.5 variant: the stride sits on the 3x3
// conv). Initialization as torchvision: convs kaiming_normal_(fan_out,
// relu), BatchNorm weight 1 / bias 0, fc keeps Linear's default init;
// zero_init_residual zeroes the last BN weight of each block.
//
// The forward ends with flatten(1) rather than a view on the batch size,
// so a traced graph keeps the batch dimension symbolic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nng::zoo {

/// Two 3x3 convs with a residual connection (expansion 1).
class BasicBlock : public nn::Module<BasicBlock> {
public:
  static constexpr int64_t expansion = 1;
  /// Downsample may be null (identity shortcut).
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Sequential> downsample = nullptr);
  Tensor forward(const Tensor &x);

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Conv2d> conv2;
  std::shared_ptr<nn::BatchNorm2d> bn2;
  std::shared_ptr<nn::Sequential> downsample;
  int64_t stride;
};

/// 1x1 reduce, 3x3 (strided), 1x1 expand (expansion 4), residual.
class Bottleneck : public nn::Module<Bottleneck> {
public:
  static constexpr int64_t expansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Sequential> downsample = nullptr,
             int64_t groups = 1, int64_t base_width = 64);
  Tensor forward(const Tensor &x);

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::Conv2d> conv2;
  std::shared_ptr<nn::BatchNorm2d> bn2;
  std::shared_ptr<nn::Conv2d> conv3;
  std::shared_ptr<nn::BatchNorm2d> bn3;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> downsample;
  int64_t stride;
};

/// Which residual block a ResNet stacks.
enum class ResNetBlock { Basic, Bottleneck };

/// torchvision's ResNet: conv1 (7x7/2), bn1, relu, maxpool (3x3/2), layer1..4
/// (Layers[i] blocks each), avgpool (1x1), fc.
class ResNet : public nn::Module<ResNet> {
public:
  ResNet(ResNetBlock block, std::vector<int64_t> layers,
         int64_t num_classes = 1000, bool zero_init_residual = false);
  /// x [N, 3, H, W] -> logits [N, num_classes].
  Tensor forward(const Tensor &x);

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::MaxPool2d> maxpool;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;

private:
  std::shared_ptr<nn::Sequential> makeLayer(int64_t planes, int64_t blocks,
                                            int64_t stride);
  ResNetBlock Block;
  int64_t Inplanes = 64;
};

/// torchvision.models.resnet18/34/50(weights=None, num_classes=...).
std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000);

} // namespace nng::zoo
