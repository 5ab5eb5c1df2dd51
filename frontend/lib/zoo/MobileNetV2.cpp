//===- MobileNetV2.cpp - torchvision's MobileNetV2 -------------------------===//
//
// The inverted residual setting, _make_divisible and the layer order of
// torchvision's mobilenetv2.py.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/MobileNetV2.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/zoo/Blocks.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>

namespace nng::zoo {

namespace {

/// torchvision's _make_divisible: V rounded to a multiple of Divisor, not
/// below MinValue (Divisor when absent) and not more than 10% below V.
int64_t makeDivisible(double V, int64_t Divisor) {
  int64_t NewV = std::max<int64_t>(
      Divisor, static_cast<int64_t>(V + Divisor / 2.0) / Divisor * Divisor);
  if (static_cast<double>(NewV) < 0.9 * V)
    NewV += Divisor;
  return NewV;
}

} // namespace

InvertedResidual::InvertedResidual(int64_t inp, int64_t oup, int64_t stride,
                                   int64_t expand_ratio)
    : stride(stride), out_channels(oup) {
  if (stride != 1 && stride != 2)
    fail(ErrorKind::InvalidArgument,
         "InvertedResidual: stride should be 1 or 2, got ", stride);
  int64_t Hidden = static_cast<int64_t>(
      std::llround(static_cast<double>(inp) * static_cast<double>(expand_ratio)));
  use_res_connect = stride == 1 && inp == oup;
  auto Layers = nn::make<nn::Sequential>();
  if (expand_ratio != 1)
    Layers->append(nn::make<Conv2dNormActivation>(inp, Hidden, 1, 1, 1, true,
                                                  Activation::ReLU6));
  Layers->append(nn::make<Conv2dNormActivation>(Hidden, Hidden, 3, stride,
                                                Hidden, true, Activation::ReLU6));
  Layers->append(nn::make<nn::Conv2d>(Hidden, oup, 1, 1, 0, 1, 1, false));
  Layers->append(nn::make<nn::BatchNorm2d>(oup));
  conv = register_module("conv", Layers);
}

Tensor InvertedResidual::forward(const Tensor &x) {
  Tensor Y = (*conv)(x);
  return use_res_connect ? x + Y : Y;
}

MobileNetV2::MobileNetV2(int64_t num_classes, double width_mult,
                         int64_t round_nearest, double dropout) {
  if (num_classes <= 0)
    fail(ErrorKind::InvalidArgument,
         "MobileNetV2: num_classes must be positive, got ", num_classes);
  if (!(width_mult > 0) || round_nearest <= 0)
    fail(ErrorKind::InvalidArgument,
         "MobileNetV2: width_mult and round_nearest must be positive, got ",
         width_mult, " and ", round_nearest);
  // t (expansion), c (channels), n (repeats), s (first stride).
  static const int64_t Setting[][4] = {{1, 16, 1, 1},  {6, 24, 2, 2},
                                       {6, 32, 3, 2},  {6, 64, 4, 2},
                                       {6, 96, 3, 1},  {6, 160, 3, 2},
                                       {6, 320, 1, 1}};
  int64_t InputChannel = makeDivisible(32 * width_mult, round_nearest);
  last_channel =
      makeDivisible(1280 * std::max(1.0, width_mult), round_nearest);
  auto Features = nn::make<nn::Sequential>();
  Features->append(nn::make<Conv2dNormActivation>(3, InputChannel, 3, 2, 1,
                                                  true, Activation::ReLU6));
  for (const auto &Row : Setting) {
    int64_t OutputChannel =
        makeDivisible(static_cast<double>(Row[1]) * width_mult, round_nearest);
    for (int64_t I = 0; I < Row[2]; ++I) {
      Features->append(nn::make<InvertedResidual>(
          InputChannel, OutputChannel, I == 0 ? Row[3] : 1, Row[0]));
      InputChannel = OutputChannel;
    }
  }
  Features->append(nn::make<Conv2dNormActivation>(
      InputChannel, last_channel, 1, 1, 1, true, Activation::ReLU6));
  features = register_module("features", Features);
  classifier = register_module(
      "classifier",
      nn::make<nn::Sequential>(nn::make<nn::Dropout>(dropout),
                               nn::make<nn::Linear>(last_channel, num_classes)));
  initVisionWeights(*this, LinearInit::Normal001);
}

Tensor MobileNetV2::forward(const Tensor &x) {
  Tensor Y = (*features)(x);
  Y = F::adaptive_avg_pool2d(Y, {1, 1});
  return (*classifier)(flatten(Y, 1));
}

std::shared_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes) {
  return nn::make<MobileNetV2>(num_classes);
}

} // namespace nng::zoo
