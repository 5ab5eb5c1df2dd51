//===- LayerPoolingTest.cpp - MaxPool2d, AvgPool2d, AdaptiveAvgPool2d -----===//
//
// Forward on known values (reference numbers from PyTorch: strides,
// padding, dilation, ceil_mode, count_include_pad, divisor_override,
// adaptive bins), extra_repr in the form the sizes were given, unbatched
// inputs, gradients, and the errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/nn/Pooling.h"

using namespace nng;
using namespace nng::test;

namespace {
Tensor input() { return seq({1, 1, 4, 5}, 0.0); }
} // namespace

TEST(LayerPoolingTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::MaxPool2d(2).to_string(),
            "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, "
            "ceil_mode=False)");
  EXPECT_EQ(nn::MaxPool2d({.kernel_size = {3, 2},
                           .stride = nn::IntOrTuple{2, 1},
                           .padding = 1,
                           .dilation = 2,
                           .ceil_mode = true})
                .extra_repr(),
            "kernel_size=(3, 2), stride=(2, 1), padding=1, dilation=2, "
            "ceil_mode=True");
  EXPECT_EQ(nn::AvgPool2d(2).to_string(),
            "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(nn::AvgPool2d(3, 2, 1).extra_repr(),
            "kernel_size=3, stride=2, padding=1");
  EXPECT_EQ(nn::AdaptiveAvgPool2d({1, 1}).to_string(),
            "AdaptiveAvgPool2d(output_size=(1, 1))");
  EXPECT_EQ(nn::AdaptiveAvgPool2d(7).extra_repr(), "output_size=7");
}

TEST(LayerPoolingTest, MaxPoolMatchesPyTorch) {
  expectValues((*nn::make<nn::MaxPool2d>(2))(input()), {1, 1, 2, 2},
               {0.64421767, 0.985449731, 0.98816824, 0.85459888});
  auto M = nn::make<nn::MaxPool2d>(nn::IntOrTuple{3, 2}, nn::IntOrTuple{2, 1},
                                   1, nn::IntOrTuple{1, 2}, false, true);
  expectValues((*M)(input()), {1, 1, 3, 5},
               {0.64421767, 0.985449731, 0.863209367, 0.985449731, 0.863209367,
                0.98816824, 0.85459888, 0.98816824, 0.85459888, 0.319098353,
                -0.979177713, -0.618137121, 0.0336230472, 0.66956979,
                0.0336230472});
  // Unbatched [C, H, W].
  EXPECT_EQ((*M)(input().squeeze(0)).sizes(), (std::vector<int64_t>{1, 3, 5}));
}

TEST(LayerPoolingTest, AvgPoolMatchesPyTorch) {
  expectValues((*nn::make<nn::AvgPool2d>(3, 2, 1))(input()), {1, 1, 2, 3},
               {-0.0642379224, 0.000842405716, 0.0648605227, -0.159564182,
                -0.20968014, 0.00459547853});
  expectValues((*nn::make<nn::AvgPool2d>(3, 2, 1, false, false))(input()),
               {1, 1, 2, 3},
               {-0.144535333, 0.00126360857, 0.145936176, -0.239346266,
                -0.20968014, 0.00689321756});
  auto Div = nn::make<nn::AvgPool2d>(
      nn::AvgPool2dOptions{.kernel_size = 2, .divisor_override = 3});
  expectValues((*Div)(input()), {1, 1, 2, 2},
               {-0.192713782, 0.0783132538, -0.0712395534, 0.196394384});
}

TEST(LayerPoolingTest, AdaptiveAvgPoolMatchesPyTorch) {
  expectValues(
      (*nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{2, 3}))(input()),
      {1, 1, 2, 3},
      {-0.144535333, 0.00126360857, 0.145936176, -0.0534296632, 0.0996956155,
       0.163953021});
  Tensor G = (*nn::make<nn::AdaptiveAvgPool2d>(1))(seq({2, 3, 4, 4}, 0.0));
  EXPECT_EQ(G.sizes(), (std::vector<int64_t>{2, 3, 1, 1}));
}

TEST(LayerPoolingTest, Gradients) {
  Tensor X = seq({1, 1, 4, 4}, 0.3, 1.0, DType::F64);
  std::vector<nn::ModulePtr> Mods = {
      nn::make<nn::MaxPool2d>(2), nn::make<nn::MaxPool2d>(3, 1, 1),
      nn::make<nn::AvgPool2d>(3, 2, 1),
      nn::make<nn::AvgPool2d>(
          nn::AvgPool2dOptions{.kernel_size = 2, .divisor_override = 3}),
      nn::make<nn::AdaptiveAvgPool2d>(nn::IntOrTuple{3, 2})};
  for (const nn::ModulePtr &M : Mods)
    checkInputGradients(
        [&](const std::vector<Tensor> &In) { return (*M)(In[0]).toTensor(); },
        {X.clone().requires_grad_()});
}

TEST(LayerPoolingTest, Errors) {
  expectError([] { nn::MaxPool2d(2, std::nullopt, 0, 1, true); },
              {"MaxPool2d", "return_indices"});
  expectError([] { nn::MaxPool2d(2, std::nullopt, 2); },
              {"MaxPool2d", "at most half of the kernel size"});
  expectError(
      [] {
        nn::AvgPool2d(nn::IntOrTuple{2, 2, 2});
      },
      {"AvgPool2d kernel_size", "(2, 2, 2)"});
  expectError([] { nn::AvgPool2d(nn::AvgPool2dOptions{.padding = 1}); },
              {"AvgPool2d", "kernel_size is required"});
  auto M = nn::make<nn::MaxPool2d>(2);
  expectError([&] { (*M)(zeros({4, 4})); }, {"MaxPool2d", "[4, 4]"});
  expectError([] { nn::AdaptiveAvgPool2d(0); }, {"AdaptiveAvgPool2d"});
}
