//===- Model.h - The Fashion-MNIST models -----------------------*- C++ -*-===//
//
// The two networks fashion-mnist-train trains (--model cnn, the default,
// and --model residual), written as a PyTorch user would write them.
//
// FashionCnn, also timed by the eager benchmark (bench/EagerBench.cpp):
//
//   conv(1->32, 3x3, pad 1) - bn - relu - maxpool 2      28x28 -> 14x14
//   conv(32->64, 3x3, pad 1) - bn - relu - maxpool 2     14x14 -> 7x7
//   flatten - linear(64*7*7 -> 128) - relu - dropout(0.25) - linear(128 -> 10)
//
// 421,738 parameters. The convolutions have no bias (the batch norm that
// follows has one). Its state_dict keys ("conv1.weight", "bn1.running_mean",
// ...) equal those of the same PyTorch module.
//
// FashionResNet, a small residual network:
//
//   stem: conv(1->32, 3x3, pad 1) - bn - relu - maxpool 2   28x28 -> 14x14
//   block1: ResidualBlock(32 -> 32), identity shortcut      14x14
//   block2: ResidualBlock(32 -> 64, stride 2), shortcut a   14x14 -> 7x7
//           strided 1x1 conv - bn projection
//   global average pool - flatten - linear(64 -> 10)
//
// 77,290 parameters; keys "stem.0.weight", "block2.shortcut.1.running_var",
// "fc.bias", ... as in PyTorch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"

#include <cstdint>
#include <memory>

namespace fmnist {

struct FashionCnn : nng::nn::Module<FashionCnn> {
  std::shared_ptr<nng::nn::Conv2d> conv1 =
      register_module("conv1", nng::nn::make<nng::nn::Conv2d>(
                                   nng::nn::Conv2dOptions{.in_channels = 1,
                                                          .out_channels = 32,
                                                          .kernel_size = 3,
                                                          .padding = 1,
                                                          .bias = false}));
  std::shared_ptr<nng::nn::BatchNorm2d> bn1 =
      register_module("bn1", nng::nn::make<nng::nn::BatchNorm2d>(32));
  std::shared_ptr<nng::nn::Conv2d> conv2 =
      register_module("conv2", nng::nn::make<nng::nn::Conv2d>(
                                   nng::nn::Conv2dOptions{.in_channels = 32,
                                                          .out_channels = 64,
                                                          .kernel_size = 3,
                                                          .padding = 1,
                                                          .bias = false}));
  std::shared_ptr<nng::nn::BatchNorm2d> bn2 =
      register_module("bn2", nng::nn::make<nng::nn::BatchNorm2d>(64));
  std::shared_ptr<nng::nn::MaxPool2d> pool =
      register_module("pool", nng::nn::make<nng::nn::MaxPool2d>(2));
  std::shared_ptr<nng::nn::ReLU> relu =
      register_module("relu", nng::nn::make<nng::nn::ReLU>());
  std::shared_ptr<nng::nn::Flatten> flatten =
      register_module("flatten", nng::nn::make<nng::nn::Flatten>());
  std::shared_ptr<nng::nn::Linear> fc1 =
      register_module("fc1", nng::nn::make<nng::nn::Linear>(64 * 7 * 7, 128));
  std::shared_ptr<nng::nn::Dropout> dropout =
      register_module("dropout", nng::nn::make<nng::nn::Dropout>(0.25));
  std::shared_ptr<nng::nn::Linear> fc2 =
      register_module("fc2", nng::nn::make<nng::nn::Linear>(128, 10));

  /// Images [N, 1, 28, 28] (normalized) -> logits [N, 10].
  nng::Tensor forward(const nng::Tensor &X) {
    nng::Tensor H = (*pool)((*relu)((*bn1)((*conv1)(X))));
    H = (*pool)((*relu)((*bn2)((*conv2)(H))));
    H = (*dropout)((*relu)((*fc1)((*flatten)(H))));
    return (*fc2)(H);
  }
};

/// A 3x3 conv without bias (a batch norm follows).
inline std::shared_ptr<nng::nn::Conv2d> conv3x3(int64_t In, int64_t Out,
                                                int64_t Stride = 1) {
  return nng::nn::make<nng::nn::Conv2d>(
      nng::nn::Conv2dOptions{.in_channels = In,
                             .out_channels = Out,
                             .kernel_size = 3,
                             .stride = Stride,
                             .padding = 1,
                             .bias = false});
}

/// conv3x3(stride) - bn - relu - conv3x3 - bn, plus the shortcut, then relu
/// (torchvision's BasicBlock). The shortcut is the identity when the shape
/// stays, else a strided 1x1 conv - bn projection ("shortcut.0",
/// "shortcut.1").
struct ResidualBlock : nng::nn::Module<ResidualBlock> {
  ResidualBlock(int64_t In, int64_t Out, int64_t Stride = 1) {
    conv1 = register_module("conv1", conv3x3(In, Out, Stride));
    bn1 = register_module("bn1", nng::nn::make<nng::nn::BatchNorm2d>(Out));
    conv2 = register_module("conv2", conv3x3(Out, Out));
    bn2 = register_module("bn2", nng::nn::make<nng::nn::BatchNorm2d>(Out));
    relu = register_module("relu", nng::nn::make<nng::nn::ReLU>());
    if (Stride != 1 || In != Out)
      shortcut = register_module(
          "shortcut",
          nng::nn::make<nng::nn::Sequential>(
              nng::nn::make<nng::nn::Conv2d>(
                  nng::nn::Conv2dOptions{.in_channels = In,
                                         .out_channels = Out,
                                         .kernel_size = 1,
                                         .stride = Stride,
                                         .bias = false}),
              nng::nn::make<nng::nn::BatchNorm2d>(Out)));
  }

  nng::Tensor forward(const nng::Tensor &X) {
    nng::Tensor H = (*relu)((*bn1)((*conv1)(X)));
    H = (*bn2)((*conv2)(H));
    nng::Tensor Skip = shortcut ? nng::Tensor((*shortcut)(X)) : X;
    return (*relu)(H + Skip);
  }

  std::shared_ptr<nng::nn::Conv2d> conv1;
  std::shared_ptr<nng::nn::BatchNorm2d> bn1;
  std::shared_ptr<nng::nn::Conv2d> conv2;
  std::shared_ptr<nng::nn::BatchNorm2d> bn2;
  std::shared_ptr<nng::nn::ReLU> relu;
  /// Null for the identity shortcut.
  std::shared_ptr<nng::nn::Sequential> shortcut;
};

/// The small residual network of --model residual (file comment).
struct FashionResNet : nng::nn::Module<FashionResNet> {
  static constexpr int64_t Width1 = 32;
  static constexpr int64_t Width2 = 64;

  std::shared_ptr<nng::nn::Sequential> stem =
      register_module("stem", nng::nn::make<nng::nn::Sequential>(
                                  conv3x3(1, Width1),
                                  nng::nn::make<nng::nn::BatchNorm2d>(Width1),
                                  nng::nn::make<nng::nn::ReLU>(),
                                  nng::nn::make<nng::nn::MaxPool2d>(2)));
  std::shared_ptr<ResidualBlock> block1 =
      register_module("block1", nng::nn::make<ResidualBlock>(Width1, Width1));
  std::shared_ptr<ResidualBlock> block2 = register_module(
      "block2", nng::nn::make<ResidualBlock>(Width1, Width2, 2));
  std::shared_ptr<nng::nn::AdaptiveAvgPool2d> pool =
      register_module("pool", nng::nn::make<nng::nn::AdaptiveAvgPool2d>(1));
  std::shared_ptr<nng::nn::Flatten> flatten =
      register_module("flatten", nng::nn::make<nng::nn::Flatten>());
  std::shared_ptr<nng::nn::Linear> fc =
      register_module("fc", nng::nn::make<nng::nn::Linear>(Width2, 10));

  /// Images [N, 1, 28, 28] (normalized) -> logits [N, 10].
  nng::Tensor forward(const nng::Tensor &X) {
    nng::Tensor H = (*stem)(X);
    H = (*block2)((*block1)(H));
    return (*fc)((*flatten)((*pool)(H)));
  }
};

} // namespace fmnist
