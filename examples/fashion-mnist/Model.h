//===- Model.h - The Fashion-MNIST CNN ---------------------------*- C++ -*-===//
//
// The small conv-bn-relu network that fashion-mnist-train trains and that
// the eager benchmark (bench/EagerBench.cpp) times, written as a PyTorch
// user would write it:
//
//   conv(1->32, 3x3, pad 1) - bn - relu - maxpool 2      28x28 -> 14x14
//   conv(32->64, 3x3, pad 1) - bn - relu - maxpool 2     14x14 -> 7x7
//   flatten - linear(64*7*7 -> 128) - relu - dropout(0.25) - linear(128 -> 10)
//
// 421,738 parameters. The convolutions have no bias (the batch norm that
// follows has one). Its state_dict keys ("conv1.weight", "bn1.running_mean",
// ...) equal those of the same PyTorch module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"

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

} // namespace fmnist
