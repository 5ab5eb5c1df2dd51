//===- VGG.cpp - torchvision's VGG-11 with batch norm ----------------------===//
//
// make_layers, the classifier and the init of torchvision's vgg.py.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/VGG.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/zoo/Blocks.h"
#include "nngraph/runtime/Error.h"

namespace nng::zoo {

VGG::VGG(std::shared_ptr<nn::Sequential> features, int64_t num_classes,
         double dropout) {
  if (!features)
    fail(ErrorKind::InvalidArgument, "VGG: features is null");
  if (num_classes <= 0)
    fail(ErrorKind::InvalidArgument, "VGG: num_classes must be positive, got ",
         num_classes);
  this->features = register_module("features", std::move(features));
  avgpool = register_module(
      "avgpool", nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{7, 7}));
  classifier = register_module(
      "classifier",
      nn::make<nn::Sequential>(
          nn::make<nn::Linear>(512 * 7 * 7, 4096), nn::make<nn::ReLU>(true),
          nn::make<nn::Dropout>(dropout), nn::make<nn::Linear>(4096, 4096),
          nn::make<nn::ReLU>(true), nn::make<nn::Dropout>(dropout),
          nn::make<nn::Linear>(4096, num_classes)));
  initVisionWeights(*this, LinearInit::Normal001);
}

Tensor VGG::forward(const Tensor &x) {
  Tensor Y = (*features)(x);
  Y = (*avgpool)(Y);
  return (*classifier)(flatten(Y, 1));
}

std::shared_ptr<nn::Sequential> makeVggLayers(const std::vector<int64_t> &Config,
                                              bool batch_norm) {
  auto Layers = nn::make<nn::Sequential>();
  int64_t InChannels = 3;
  for (int64_t V : Config) {
    if (V == -1) {
      Layers->append(nn::make<nn::MaxPool2d>(2, 2));
      continue;
    }
    if (V <= 0)
      fail(ErrorKind::InvalidArgument,
           "makeVggLayers: channel counts must be positive (-1 marks a "
           "max-pool), got ",
           V);
    Layers->append(nn::make<nn::Conv2d>(InChannels, V, 3, 1, 1));
    if (batch_norm)
      Layers->append(nn::make<nn::BatchNorm2d>(V));
    Layers->append(nn::make<nn::ReLU>(true));
    InChannels = V;
  }
  return Layers;
}

std::shared_ptr<VGG> vgg11_bn(int64_t num_classes) {
  // Config "A": 64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M.
  static const std::vector<int64_t> A = {64,  -1,  128, -1, 256, 256, -1,
                                         512, 512, -1,  512, 512, -1};
  return nn::make<VGG>(makeVggLayers(A, true), num_classes);
}

} // namespace nng::zoo
