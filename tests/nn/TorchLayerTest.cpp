//===- TorchLayerTest.cpp - Every nn layer against PyTorch -----------------===//
//
// Each layer of nn:: in several configurations (strides, padding, dilation,
// groups, bias on and off, train and eval, ...) against the same torch.nn
// layer through TorchOracle.h: the torch layer loads the C++ layer's
// state_dict (keys and their order must be PyTorch's), both run forward on
// the same inputs and backward with the same upstream gradient, and
// outputs, input gradients, parameter gradients, buffers after the forward
// (running statistics) and print(layer) must agree (atol 1e-5, rtol 1e-5).
// Norm layers get random affine parameters and running statistics first,
// so eval mode is not the identity. One Python run per test. Attention and
// transformer layers are in TorchAttentionTest.cpp, default initialization
// in TorchInitTest.cpp. SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace nng;
using namespace nng::test;

namespace {

std::string shapeName(const std::vector<int64_t> &Shape) {
  std::string S = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    S += (I ? ", " : "") + std::to_string(Shape[I]);
  return S + "]";
}

/// A case calling Mod on one standard-normal input of shape Shape.
template <typename M>
OracleCase unary(const std::string &Torch, std::shared_ptr<M> Mod,
                 const std::vector<int64_t> &Shape, bool Train = false) {
  OracleCase C;
  C.Name = Torch + " on " + shapeName(Shape);
  C.Module = Mod;
  C.TorchModule = Torch;
  C.Inputs = {randn(Shape)};
  C.Train = Train;
  C.Forward = [Mod](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*Mod)(X[0])};
  };
  return C;
}

/// Gives a norm layer random affine parameters and running statistics.
template <typename M> std::shared_ptr<M> randomized(std::shared_ptr<M> Mod) {
  NoGradGuard G;
  for (const auto &[Name, P] : Mod->named_parameters()) {
    Tensor T = P;
    T.copy_(randn(T.sizes()) * 0.5 + 1.0);
  }
  for (const auto &[Name, B] : Mod->named_buffers()) {
    Tensor T = B;
    if (Name == "running_mean")
      T.copy_(randn(T.sizes()) * 0.3);
    else if (Name == "running_var")
      T.copy_(rand(T.sizes()) + 0.5);
    else if (Name == "num_batches_tracked")
      T.fill_(3);
  }
  return Mod;
}

} // namespace

TEST(TorchLayer, Linear) {
  manual_seed(1);
  TorchOracle O;
  O.add(unary("nn.Linear(4, 3)", nn::make<nn::Linear>(4, 3), {5, 4}));
  O.add(unary("nn.Linear(5, 2, bias=False)",
              nn::make<nn::Linear>(5, 2, false), {3, 5}));
  O.add(unary("nn.Linear(6, 7)", nn::make<nn::Linear>(6, 7), {2, 3, 6}));
  O.add(unary("nn.Linear(4, 3)", nn::make<nn::Linear>(4, 3), {4}));
  O.add(unary("nn.Linear(64, 32)", nn::make<nn::Linear>(64, 32), {8, 64},
              true));
  // Double precision: module.to(f64) and m.double().
  auto D = nn::make<nn::Linear>(6, 5);
  D->to(DType::F64);
  OracleCase C = unary("nn.Linear(6, 5)", D, {3, 6});
  C.Inputs[0] = C.Inputs[0].to(DType::F64);
  C.TorchSetup = {"m = m.double()"};
  C.Name += " f64";
  C.Atol = C.Rtol = 1e-12;
  O.add(std::move(C));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Conv1d) {
  manual_seed(2);
  TorchOracle O;
  O.add(unary("nn.Conv1d(3, 4, 3)", nn::make<nn::Conv1d>(3, 4, 3), {2, 3, 10}));
  O.add(unary("nn.Conv1d(4, 6, 5, stride=2, padding=2, groups=2, bias=False)",
              nn::make<nn::Conv1d>(4, 6, 5, 2, 2, 1, 2, false), {2, 4, 11}));
  O.add(unary("nn.Conv1d(2, 4, 3, dilation=2, padding='same')",
              nn::make<nn::Conv1d>(2, 4, 3, 1, "same", 2), {1, 2, 9}));
  O.add(unary("nn.Conv1d(2, 3, 4, padding='same')",
              nn::make<nn::Conv1d>(2, 3, 4, 1, "same"), {2, 2, 7}));
  O.add(unary("nn.Conv1d(3, 3, 2, padding='valid')",
              nn::make<nn::Conv1d>(3, 3, 2, 1, "valid"), {2, 3, 6}));
  O.add(unary("nn.Conv1d(3, 4, 3, padding=1)",
              nn::make<nn::Conv1d>(3, 4, 3, 1, 1), {3, 8}));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Conv2d) {
  manual_seed(3);
  TorchOracle O;
  O.add(unary("nn.Conv2d(3, 4, 3)", nn::make<nn::Conv2d>(3, 4, 3),
              {2, 3, 8, 8}));
  O.add(unary("nn.Conv2d(4, 8, (3, 5), stride=(2, 1), padding=(1, 2), "
              "bias=False)",
              nn::make<nn::Conv2d>(4, 8, nn::IntOrTuple{3, 5},
                                   nn::IntOrTuple{2, 1}, nn::IntOrTuple{1, 2},
                                   1, 1, false),
              {2, 4, 9, 7}));
  O.add(unary("nn.Conv2d(6, 6, 3, padding=2, dilation=2, groups=3)",
              nn::make<nn::Conv2d>(6, 6, 3, 1, 2, 2, 3), {2, 6, 7, 7}));
  O.add(unary("nn.Conv2d(4, 4, 3, padding=1, groups=4)",
              nn::make<nn::Conv2d>(4, 4, 3, 1, 1, 1, 4), {1, 4, 6, 5}));
  O.add(unary("nn.Conv2d(3, 5, 1)", nn::make<nn::Conv2d>(3, 5, 1),
              {2, 3, 4, 4}));
  O.add(unary("nn.Conv2d(2, 3, 4, padding='same')",
              nn::make<nn::Conv2d>(2, 3, 4, 1, "same"), {1, 2, 6, 7}));
  O.add(unary("nn.Conv2d(3, 4, 3, stride=2, padding=1)",
              nn::make<nn::Conv2d>(3, 4, 3, 2, 1), {3, 9, 9}));
  auto D = nn::make<nn::Conv2d>(3, 4, 3, 2, 1, 1, 1);
  D->to(DType::F64);
  OracleCase C = unary("nn.Conv2d(3, 4, 3, stride=2, padding=1)", D,
                       {2, 3, 7, 7});
  C.Inputs[0] = C.Inputs[0].to(DType::F64);
  C.TorchSetup = {"m = m.double()"};
  C.Name += " f64";
  C.Atol = C.Rtol = 1e-12;
  O.add(std::move(C));
  O.add(unary("nn.Conv2d(16, 32, 3, padding=1)",
              nn::make<nn::Conv2d>(16, 32, 3, 1, 1), {2, 16, 12, 12}, true));
  NNG_RUN_TORCH_ORACLE(O);
}

/// Non-zero padding modes: computed like PyTorch, or refused with an error
/// naming padding_mode (never silently zero-padded).
TEST(TorchLayer, Conv2dPaddingModes) {
  manual_seed(31);
  TorchOracle O;
  for (const char *Mode : {"reflect", "replicate", "circular"}) {
    std::shared_ptr<nn::Conv2d> M;
    try {
      M = nn::make<nn::Conv2d>(3, 4, 3, 1, 1, 1, 1, true, Mode);
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("padding_mode"), std::string::npos)
          << E.what();
      std::cout << "note: Conv2d padding_mode='" << Mode
                << "' is refused: " << E.what() << "\n";
      continue;
    }
    O.add(unary(std::string("nn.Conv2d(3, 4, 3, padding=1, padding_mode='") +
                    Mode + "')",
                M, {2, 3, 6, 6}));
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, ConvTranspose2d) {
  manual_seed(4);
  TorchOracle O;
  O.add(unary("nn.ConvTranspose2d(3, 4, 3)",
              nn::make<nn::ConvTranspose2d>(3, 4, 3), {2, 3, 5, 5}));
  O.add(unary("nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, "
              "output_padding=1)",
              nn::make<nn::ConvTranspose2d>(4, 2, 3, 2, 1, 1), {2, 4, 4, 5}));
  O.add(unary("nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), groups=2, "
              "bias=False, dilation=(1, 2))",
              nn::make<nn::ConvTranspose2d>(
                  4, 6, nn::IntOrTuple{3, 2}, nn::IntOrTuple{2, 3}, 0, 0, 2,
                  false, nn::IntOrTuple{1, 2}),
              {1, 4, 3, 4}));
  O.add(unary("nn.ConvTranspose2d(4, 4, 3, stride=3, padding=2, "
              "output_padding=2, groups=2, dilation=2)",
              nn::make<nn::ConvTranspose2d>(4, 4, 3, 3, 2, 2, 2, true, 2),
              {2, 4, 4, 3}));
  O.add(unary("nn.ConvTranspose2d(2, 3, 4, stride=2, padding=1)",
              nn::make<nn::ConvTranspose2d>(2, 3, 4, 2, 1), {2, 6, 6}));
  // output_size picks the output padding.
  manual_seed(41);
  auto T = nn::make<nn::ConvTranspose2d>(3, 2, 3, 2, 1);
  OracleCase C;
  C.Name = "ConvTranspose2d(3, 2, 3, stride=2, padding=1) output_size [8, 9]";
  C.Module = T;
  C.TorchModule = "nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)";
  C.TorchCall = "m(x[0], output_size=[8, 9])";
  C.Inputs = {randn({2, 3, 4, 5})};
  C.Forward = [T](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*T)(X[0], std::vector<int64_t>{8, 9})};
  };
  O.add(std::move(C));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, BatchNorm) {
  manual_seed(5);
  TorchOracle O;
  for (bool Train : {true, false}) {
    O.add(unary("nn.BatchNorm1d(4)", randomized(nn::make<nn::BatchNorm1d>(4)),
                {6, 4}, Train));
    O.add(unary("nn.BatchNorm1d(3)", randomized(nn::make<nn::BatchNorm1d>(3)),
                {4, 3, 5}, Train));
    O.add(unary("nn.BatchNorm2d(3)", randomized(nn::make<nn::BatchNorm2d>(3)),
                {2, 3, 4, 5}, Train));
    O.add(unary("nn.BatchNorm2d(4, eps=0.001, momentum=0.3, affine=False)",
                randomized(nn::make<nn::BatchNorm2d>(4, 1e-3, 0.3, false)),
                {3, 4, 3, 3}, Train));
    O.add(unary("nn.BatchNorm2d(2, track_running_stats=False)",
                randomized(nn::make<nn::BatchNorm2d>(2, 1e-5, 0.1, true,
                                                     false)),
                {4, 2, 3, 3}, Train));
    O.add(unary("nn.BatchNorm1d(3, affine=False, track_running_stats=False)",
                nn::make<nn::BatchNorm1d>(3, 1e-5, 0.1, false, false), {5, 3},
                Train));
  }
  // Several training steps: running statistics keep moving (and with
  // momentum=None they are cumulative averages).
  OracleCase Steps =
      unary("nn.BatchNorm2d(3)", randomized(nn::make<nn::BatchNorm2d>(3)),
            {2, 3, 4, 4}, true);
  Steps.Name += " x3 steps";
  Steps.Steps = 3;
  O.add(std::move(Steps));
  OracleCase Cma = unary("nn.BatchNorm2d(3, momentum=None)",
                         randomized(nn::make<nn::BatchNorm2d>(3, 1e-5,
                                                              std::nullopt)),
                         {2, 3, 4, 4}, true);
  Cma.Name += " x3 steps";
  Cma.Steps = 3;
  O.add(std::move(Cma));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, LayerNormAndGroupNorm) {
  manual_seed(6);
  TorchOracle O;
  O.add(unary("nn.LayerNorm(8)", randomized(nn::make<nn::LayerNorm>(8)),
              {3, 8}));
  O.add(unary("nn.LayerNorm([4, 5])",
              randomized(nn::make<nn::LayerNorm>(nn::IntOrTuple{4, 5})),
              {2, 3, 4, 5}));
  O.add(unary("nn.LayerNorm(6, eps=0.001, elementwise_affine=False)",
              nn::make<nn::LayerNorm>(6, 1e-3, false), {2, 5, 6}, true));
  O.add(unary("nn.GroupNorm(2, 6)", randomized(nn::make<nn::GroupNorm>(2, 6)),
              {2, 6, 4, 4}));
  O.add(unary("nn.GroupNorm(3, 6, affine=False)",
              nn::make<nn::GroupNorm>(3, 6, 1e-5, false), {2, 6, 3}, true));
  O.add(unary("nn.GroupNorm(1, 4, eps=0.01)",
              randomized(nn::make<nn::GroupNorm>(1, 4, 1e-2)), {3, 4, 5}));
  O.add(unary("nn.GroupNorm(6, 6)", randomized(nn::make<nn::GroupNorm>(6, 6)),
              {2, 6, 2, 3}, true));
  // Inputs far from zero: the variance must not lose precision (E[x^2] -
  // E[x]^2 would be off by ~1e-4 here; +30 keeps float32's own resolution
  // of the input below the tolerance).
  for (auto C : {unary("nn.LayerNorm(16)", nn::make<nn::LayerNorm>(16),
                       {4, 16}),
                 unary("nn.GroupNorm(2, 4)", nn::make<nn::GroupNorm>(2, 4),
                       {2, 4, 3, 3}),
                 unary("nn.BatchNorm1d(4)", nn::make<nn::BatchNorm1d>(4),
                       {8, 4}, true)}) {
    C.Inputs[0] = C.Inputs[0] + 30.0;
    C.Name += " + 30";
    O.add(std::move(C));
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Dropout) {
  manual_seed(7);
  TorchOracle O;
  O.add(unary("nn.Dropout()", nn::make<nn::Dropout>(), {4, 5}));
  O.add(unary("nn.Dropout(0.3)", nn::make<nn::Dropout>(0.3), {2, 3, 4}));
  O.add(unary("nn.Dropout(0.0)", nn::make<nn::Dropout>(0.0), {4, 5}, true));
  O.add(unary("nn.Dropout(1.0)", nn::make<nn::Dropout>(1.0), {4, 5}, true));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Activations) {
  manual_seed(8);
  TorchOracle O;
  for (bool Train : {false, true}) {
    O.add(unary("nn.ReLU()", nn::make<nn::ReLU>(), {4, 6}, Train));
    O.add(unary("nn.GELU()", nn::make<nn::GELU>(), {4, 6}, Train));
    O.add(unary("nn.GELU(approximate='tanh')", nn::make<nn::GELU>("tanh"),
                {4, 6}, Train));
    O.add(unary("nn.SiLU()", nn::make<nn::SiLU>(), {4, 6}, Train));
    O.add(unary("nn.LeakyReLU()", nn::make<nn::LeakyReLU>(), {4, 6}, Train));
    O.add(unary("nn.LeakyReLU(0.2)", nn::make<nn::LeakyReLU>(0.2), {2, 3, 4},
                Train));
    O.add(unary("nn.Sigmoid()", nn::make<nn::Sigmoid>(), {4, 6}, Train));
    O.add(unary("nn.Tanh()", nn::make<nn::Tanh>(), {4, 6}, Train));
  }
  O.add(unary("nn.Softmax(dim=1)", nn::make<nn::Softmax>(1), {3, 5}));
  O.add(unary("nn.Softmax(dim=-1)", nn::make<nn::Softmax>(-1), {2, 3, 4}));
  O.add(unary("nn.Softmax(dim=0)", nn::make<nn::Softmax>(0), {3, 4}));
  // dim=None: PyTorch's legacy choice (0 for 0-, 1- and 3-d inputs, else 1).
  O.add(unary("nn.Softmax()", nn::make<nn::Softmax>(), {2, 3, 4}));
  O.add(unary("nn.Softmax()", nn::make<nn::Softmax>(), {2, 3, 4, 2}));
  // Large inputs: softmax must stay stable.
  OracleCase Big = unary("nn.Softmax(dim=1)", nn::make<nn::Softmax>(1), {2, 6});
  Big.Inputs[0] = Big.Inputs[0] * 60.0;
  Big.Name += " x60";
  O.add(std::move(Big));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, FlattenAndIdentity) {
  manual_seed(9);
  TorchOracle O;
  O.add(unary("nn.Flatten()", nn::make<nn::Flatten>(), {2, 3, 4, 5}));
  O.add(unary("nn.Flatten(0, -1)", nn::make<nn::Flatten>(0, -1), {2, 3, 4}));
  O.add(unary("nn.Flatten(1, 2)", nn::make<nn::Flatten>(1, 2), {2, 3, 4, 5}));
  O.add(unary("nn.Flatten(-3, -2)", nn::make<nn::Flatten>(-3, -2),
              {2, 3, 4, 5}));
  O.add(unary("nn.Identity()", nn::make<nn::Identity>(), {3, 4}));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Pooling) {
  manual_seed(10);
  TorchOracle O;
  O.add(unary("nn.MaxPool2d(2)", nn::make<nn::MaxPool2d>(2), {2, 3, 8, 8}));
  O.add(unary("nn.MaxPool2d(3, stride=2, padding=1)",
              nn::make<nn::MaxPool2d>(3, 2, 1), {2, 3, 9, 7}));
  O.add(unary("nn.MaxPool2d(3, stride=1, dilation=2)",
              nn::make<nn::MaxPool2d>(3, 1, 0, 2), {1, 2, 8, 8}));
  O.add(unary("nn.MaxPool2d(3, stride=2, ceil_mode=True)",
              nn::make<nn::MaxPool2d>(3, 2, 0, 1, false, true), {2, 2, 8, 8}));
  O.add(unary("nn.MaxPool2d((2, 3))",
              nn::make<nn::MaxPool2d>(nn::IntOrTuple{2, 3}), {3, 6, 9}));
  O.add(unary("nn.AvgPool2d(2)", nn::make<nn::AvgPool2d>(2), {2, 3, 8, 8}));
  O.add(unary("nn.AvgPool2d(3, stride=2, padding=1)",
              nn::make<nn::AvgPool2d>(3, 2, 1), {2, 3, 9, 7}));
  O.add(unary("nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)",
              nn::make<nn::AvgPool2d>(3, 2, 1, false, false), {2, 3, 9, 7}));
  O.add(unary("nn.AvgPool2d(3, stride=2, ceil_mode=True)",
              nn::make<nn::AvgPool2d>(3, 2, 0, true), {1, 2, 8, 8}));
  O.add(unary("nn.AvgPool2d(2, divisor_override=3)",
              nn::make<nn::AvgPool2d>(2, std::nullopt, 0, false, true, 3),
              {1, 2, 4, 6}));
  O.add(unary("nn.AdaptiveAvgPool2d(1)", nn::make<nn::AdaptiveAvgPool2d>(1),
              {2, 3, 5, 5}));
  O.add(unary("nn.AdaptiveAvgPool2d((2, 3))",
              nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{2, 3}),
              {2, 3, 7, 5}));
  O.add(unary("nn.AdaptiveAvgPool2d(4)", nn::make<nn::AdaptiveAvgPool2d>(4),
              {1, 2, 8, 8}));
  O.add(unary("nn.AdaptiveAvgPool2d(3)", nn::make<nn::AdaptiveAvgPool2d>(3),
              {3, 4, 7}));
  // Edge cases: ceil_mode windows starting in the padding are dropped;
  // adaptive output larger than the input.
  O.add(unary("nn.MaxPool2d(2, stride=2, padding=1, ceil_mode=True)",
              nn::make<nn::MaxPool2d>(2, 2, 1, 1, false, true), {1, 2, 7, 7}));
  O.add(unary("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)",
              nn::make<nn::AvgPool2d>(3, 2, 1, true), {1, 2, 8, 8}));
  O.add(unary("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, "
              "count_include_pad=False)",
              nn::make<nn::AvgPool2d>(3, 2, 1, true, false), {1, 2, 8, 7}));
  O.add(unary("nn.AdaptiveAvgPool2d((5, 6))",
              nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{5, 6}),
              {1, 2, 3, 4}));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLayer, Embedding) {
  manual_seed(11);
  TorchOracle O;
  // Repeated indices accumulate into one row's gradient.
  Tensor Idx = tensor({1, 3, 0, 3, 9, 1, 0, 0}, std::vector<int64_t>{2, 4},
                      DType::I64);
  auto Add = [&](const std::string &Torch, std::shared_ptr<nn::Embedding> E) {
    OracleCase C;
    C.Name = Torch;
    C.Module = E;
    C.TorchModule = Torch;
    C.Inputs = {Idx};
    C.Train = true;
    C.Forward = [E](const std::vector<Tensor> &X) {
      return std::vector<Tensor>{(*E)(X[0])};
    };
    O.add(std::move(C));
  };
  Add("nn.Embedding(10, 3)", nn::make<nn::Embedding>(10, 3));
  Add("nn.Embedding(10, 4, padding_idx=0)",
      nn::make<nn::Embedding>(10, 4, 0));
  Add("nn.Embedding(10, 2, padding_idx=-1)",
      nn::make<nn::Embedding>(10, 2, -1));
  // max_norm renormalizes the looked-up rows in place.
  Add("nn.Embedding(10, 3, max_norm=1.0)",
      nn::make<nn::Embedding>(10, 3, std::nullopt, 1.0));
  // scale_grad_by_freq: computed like PyTorch, or refused loudly.
  try {
    Add("nn.Embedding(10, 3, scale_grad_by_freq=True)",
        nn::make<nn::Embedding>(10, 3, std::nullopt, std::nullopt, 2.0, true));
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("scale_grad_by_freq"),
              std::string::npos)
        << E.what();
    std::cout << "note: " << E.what() << "\n";
  }
  Add("nn.Embedding(10, 3, padding_idx=3, max_norm=0.5, norm_type=1.0)",
      nn::make<nn::Embedding>(10, 3, 3, 0.5, 1.0));
  NNG_RUN_TORCH_ORACLE(O);
}
