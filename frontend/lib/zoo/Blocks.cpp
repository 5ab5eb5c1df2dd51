//===- Blocks.cpp - Building blocks shared by the zoo models ---------------===//
//
// ReLU6 through nng::clamp, Conv2dNormActivation as a renamed Sequential
// built like torchvision's, and the torchvision init loop.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/Blocks.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/runtime/Error.h"

namespace nng::zoo {

Tensor ReLU6::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "ReLU6: the input is undefined");
  return clamp(input, Scalar(0.0), Scalar(6.0));
}

std::string ReLU6::extra_repr() const { return inplace ? "inplace=True" : ""; }

Conv2dNormActivation::Conv2dNormActivation(int64_t in_channels,
                                           int64_t out_channels,
                                           int64_t kernel_size, int64_t stride,
                                           int64_t groups, bool norm,
                                           Activation activation,
                                           int64_t dilation)
    : out_channels(out_channels) {
  set_type_name("Conv2dNormActivation");
  int64_t Padding = (kernel_size - 1) / 2 * dilation;
  append(nn::make<nn::Conv2d>(in_channels, out_channels, kernel_size, stride,
                              Padding, dilation, groups, /*bias=*/!norm));
  if (norm)
    append(nn::make<nn::BatchNorm2d>(out_channels));
  if (activation == Activation::ReLU)
    append(nn::make<nn::ReLU>(/*inplace=*/true));
  else if (activation == Activation::ReLU6)
    append(nn::make<ReLU6>(/*inplace=*/true));
}

void initVisionWeights(nn::ModuleBase &M, LinearInit LinearMode) {
  for (const nn::ModulePtr &Sub : M.modules()) {
    if (auto *C = Sub->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(C->weight, 0.0, "fan_out", "relu");
      if (C->bias.defined())
        nn::init::zeros_(C->bias);
    } else if (auto *B = Sub->as<nn::BatchNorm2d>()) {
      if (B->weight.defined())
        nn::init::ones_(B->weight);
      if (B->bias.defined())
        nn::init::zeros_(B->bias);
    } else if (auto *G = Sub->as<nn::GroupNorm>()) {
      if (G->weight.defined())
        nn::init::ones_(G->weight);
      if (G->bias.defined())
        nn::init::zeros_(G->bias);
    } else if (auto *L = Sub->as<nn::Linear>();
               L && LinearMode == LinearInit::Normal001) {
      nn::init::normal_(L->weight, 0.0, 0.01);
      if (L->bias.defined())
        nn::init::zeros_(L->bias);
    }
  }
}

} // namespace nng::zoo
