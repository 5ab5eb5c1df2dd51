//===- ResNet.cpp - torchvision's ResNet-18/34/50 --------------------------===//
//
// The blocks, _make_layer and the stem/head of torchvision's resnet.py,
// registered in torchvision's attribute order so state_dict keys and
// printing follow it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/ResNet.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/zoo/Blocks.h"
#include "nngraph/runtime/Error.h"

namespace nng::zoo {

namespace {

std::shared_ptr<nn::Conv2d> conv3x3(int64_t In, int64_t Out, int64_t Stride,
                                    int64_t Groups = 1, int64_t Dilation = 1) {
  return nn::make<nn::Conv2d>(In, Out, 3, Stride, Dilation, Dilation, Groups,
                              /*bias=*/false);
}

std::shared_ptr<nn::Conv2d> conv1x1(int64_t In, int64_t Out, int64_t Stride) {
  return nn::make<nn::Conv2d>(In, Out, 1, Stride, 0, 1, 1, /*bias=*/false);
}

} // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Sequential> downsample)
    : stride(stride) {
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", nn::make<nn::BatchNorm2d>(planes));
  relu = register_module("relu", nn::make<nn::ReLU>(true));
  conv2 = register_module("conv2", conv3x3(planes, planes, 1));
  bn2 = register_module("bn2", nn::make<nn::BatchNorm2d>(planes));
  if (downsample)
    this->downsample = register_module("downsample", std::move(downsample));
}

Tensor BasicBlock::forward(const Tensor &x) {
  Tensor Out = (*relu)((*bn1)((*conv1)(x)));
  Out = (*bn2)((*conv2)(Out));
  Tensor Identity = downsample ? Tensor((*downsample)(x)) : x;
  return (*relu)(Out + Identity);
}

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Sequential> downsample,
                       int64_t groups, int64_t base_width)
    : stride(stride) {
  int64_t Width = planes * base_width / 64 * groups;
  conv1 = register_module("conv1", conv1x1(inplanes, Width, 1));
  bn1 = register_module("bn1", nn::make<nn::BatchNorm2d>(Width));
  conv2 = register_module("conv2", conv3x3(Width, Width, stride, groups));
  bn2 = register_module("bn2", nn::make<nn::BatchNorm2d>(Width));
  conv3 = register_module("conv3", conv1x1(Width, planes * expansion, 1));
  bn3 = register_module("bn3", nn::make<nn::BatchNorm2d>(planes * expansion));
  relu = register_module("relu", nn::make<nn::ReLU>(true));
  if (downsample)
    this->downsample = register_module("downsample", std::move(downsample));
}

Tensor Bottleneck::forward(const Tensor &x) {
  Tensor Out = (*relu)((*bn1)((*conv1)(x)));
  Out = (*relu)((*bn2)((*conv2)(Out)));
  Out = (*bn3)((*conv3)(Out));
  Tensor Identity = downsample ? Tensor((*downsample)(x)) : x;
  return (*relu)(Out + Identity);
}

ResNet::ResNet(ResNetBlock block, std::vector<int64_t> layers,
               int64_t num_classes, bool zero_init_residual)
    : Block(block) {
  if (layers.size() != 4)
    fail(ErrorKind::InvalidArgument,
         "ResNet: layers needs 4 block counts (one per stage), got ",
         layers.size());
  if (num_classes <= 0)
    fail(ErrorKind::InvalidArgument,
         "ResNet: num_classes must be positive, got ", num_classes);
  int64_t Expansion =
      block == ResNetBlock::Basic ? BasicBlock::expansion : Bottleneck::expansion;
  conv1 = register_module(
      "conv1", nn::make<nn::Conv2d>(3, Inplanes, 7, 2, 3, 1, 1, false));
  bn1 = register_module("bn1", nn::make<nn::BatchNorm2d>(Inplanes));
  relu = register_module("relu", nn::make<nn::ReLU>(true));
  maxpool = register_module("maxpool", nn::make<nn::MaxPool2d>(3, 2, 1));
  layer1 = register_module("layer1", makeLayer(64, layers[0], 1));
  layer2 = register_module("layer2", makeLayer(128, layers[1], 2));
  layer3 = register_module("layer3", makeLayer(256, layers[2], 2));
  layer4 = register_module("layer4", makeLayer(512, layers[3], 2));
  avgpool = register_module(
      "avgpool", nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{1, 1}));
  fc = register_module("fc",
                       nn::make<nn::Linear>(512 * Expansion, num_classes));

  initVisionWeights(*this, LinearInit::Default);
  if (zero_init_residual) {
    for (const nn::ModulePtr &M : modules()) {
      if (auto *B = M->as<Bottleneck>())
        nn::init::zeros_(B->bn3->weight);
      else if (auto *B2 = M->as<BasicBlock>())
        nn::init::zeros_(B2->bn2->weight);
    }
  }
}

std::shared_ptr<nn::Sequential>
ResNet::makeLayer(int64_t planes, int64_t blocks, int64_t stride) {
  int64_t Expansion =
      Block == ResNetBlock::Basic ? BasicBlock::expansion : Bottleneck::expansion;
  std::shared_ptr<nn::Sequential> Downsample;
  if (stride != 1 || Inplanes != planes * Expansion)
    Downsample = nn::make<nn::Sequential>(
        conv1x1(Inplanes, planes * Expansion, stride),
        nn::make<nn::BatchNorm2d>(planes * Expansion));
  auto Layer = nn::make<nn::Sequential>();
  auto MakeBlock = [&](int64_t Stride, std::shared_ptr<nn::Sequential> D) {
    if (Block == ResNetBlock::Basic)
      return nn::ModulePtr(
          nn::make<BasicBlock>(Inplanes, planes, Stride, std::move(D)));
    return nn::ModulePtr(
        nn::make<Bottleneck>(Inplanes, planes, Stride, std::move(D)));
  };
  Layer->append(MakeBlock(stride, Downsample));
  Inplanes = planes * Expansion;
  for (int64_t I = 1; I < blocks; ++I)
    Layer->append(MakeBlock(1, nullptr));
  return Layer;
}

Tensor ResNet::forward(const Tensor &x) {
  Tensor Y = (*maxpool)((*relu)((*bn1)((*conv1)(x))));
  Y = (*layer1)(Y);
  Y = (*layer2)(Y);
  Y = (*layer3)(Y);
  Y = (*layer4)(Y);
  Y = (*avgpool)(Y);
  return (*fc)(flatten(Y, 1));
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes) {
  return nn::make<ResNet>(ResNetBlock::Basic, std::vector<int64_t>{2, 2, 2, 2},
                          num_classes);
}

std::shared_ptr<ResNet> resnet34(int64_t num_classes) {
  return nn::make<ResNet>(ResNetBlock::Basic, std::vector<int64_t>{3, 4, 6, 3},
                          num_classes);
}

std::shared_ptr<ResNet> resnet50(int64_t num_classes) {
  return nn::make<ResNet>(ResNetBlock::Bottleneck,
                          std::vector<int64_t>{3, 4, 6, 3}, num_classes);
}

} // namespace nng::zoo
