//===- LayerActivationTest.cpp - Activations and Dropout ------------------===//
//
// ReLU, GELU (both approximations), SiLU, LeakyReLU, Sigmoid, Tanh and
// Softmax on known values (reference numbers from PyTorch), their
// extra_repr strings, inplace, gradients; Dropout's train/eval behaviour,
// scaling and repr.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Dropout.h"

using namespace nng;
using namespace nng::test;

namespace {
Tensor input() { return seq({8}, 0.0, 3.0); }
} // namespace

TEST(LayerActivationTest, ForwardMatchesPyTorch) {
  expectValues((*nn::make<nn::ReLU>())(input()), {8},
               {0, 1.93265307, 2.95634913, 2.58962798, 1.00496447, 0, 0, 0});
  expectValues((*nn::make<nn::GELU>())(input()), {8},
               {0, 1.88116837, 2.95174718, 2.5771873, 0.846725762, -0.153979421,
                -0.0116747152, -0.0047234064});
  expectValues((*nn::make<nn::GELU>("tanh"))(input()), {8},
               {0, 1.8812083, 2.9521749, 2.57765079, 0.846571386, -0.154150158,
                -0.0112071652, -0.00429291185});
  expectValues((*nn::make<nn::SiLU>())(input()), {8},
               {0, 1.68825519, 2.81019545, 2.40884876, 0.735667706,
                -0.272320896, -0.17831549, -0.146959782});
  expectValues((*nn::make<nn::LeakyReLU>(0.2))(input()), {8},
               {0, 1.93265307, 2.95634913, 2.58962798, 1.00496447, -0.210469946,
                -0.522945464, -0.589471579});
  expectValues((*nn::make<nn::Sigmoid>())(input()), {8},
               {0.5, 0.873542786, 0.950562775, 0.93019104, 0.732033551,
                0.258774132, 0.0681965947, 0.0498615354});
  expectValues((*nn::make<nn::Tanh>())(input()), {8},
               {0, 0.958947301, 0.994604826, 0.988798678, 0.763671219,
                -0.782718182, -0.98934418, -0.994507194});
  expectValues((*nn::make<nn::Softmax>(1))(seq({2, 3}, 0.0)), {2, 3},
               {0.179098725, 0.341092914, 0.47980845, 0.530036628, 0.31253764,
                0.157425687});
}

TEST(LayerActivationTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::ReLU().to_string(), "ReLU()");
  EXPECT_EQ(nn::ReLU(true).to_string(), "ReLU(inplace=True)");
  EXPECT_EQ(nn::GELU().to_string(), "GELU(approximate='none')");
  EXPECT_EQ(nn::GELU("tanh").to_string(), "GELU(approximate='tanh')");
  EXPECT_EQ(nn::SiLU().to_string(), "SiLU()");
  EXPECT_EQ(nn::LeakyReLU().to_string(), "LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(nn::LeakyReLU(0.2, true).to_string(),
            "LeakyReLU(negative_slope=0.2, inplace=True)");
  EXPECT_EQ(nn::Sigmoid().to_string(), "Sigmoid()");
  EXPECT_EQ(nn::Tanh().to_string(), "Tanh()");
  EXPECT_EQ(nn::Softmax(1).to_string(), "Softmax(dim=1)");
  EXPECT_EQ(nn::Softmax().to_string(), "Softmax(dim=None)");
  EXPECT_EQ(nn::Dropout().to_string(), "Dropout(p=0.5, inplace=False)");
  EXPECT_EQ(nn::Dropout(0.1, true).to_string(), "Dropout(p=0.1, inplace=True)");
}

TEST(LayerActivationTest, SoftmaxDefaultDimIsPyTorchsLegacyChoice) {
  auto S = nn::make<nn::Softmax>();
  // 2-D: axis 1; 3-D: axis 0.
  Tensor Y2 = (*S)(seq({2, 3}, 0.0));
  EXPECT_TRUE(allclose(sum(Y2, {1}), ones({2})));
  Tensor Y3 = (*S)(seq({2, 3, 2}, 0.0));
  EXPECT_TRUE(allclose(sum(Y3, {0}), ones({3, 2})));
  auto Bad = nn::make<nn::Softmax>(2);
  expectError([&] { (*Bad)(zeros({2, 3})); }, {"Softmax", "dim 2", "[2, 3]"});
}

TEST(LayerActivationTest, InplaceWritesIntoTheInput) {
  Tensor X = input().clone();
  auto R = nn::make<nn::ReLU>(true);
  Tensor Y = (*R)(X);
  EXPECT_TRUE(Y.is_same(X));
  EXPECT_EQ(X.to_vector<double>()[5], 0.0);
  // With autograd the result is out of place and the gradient is right.
  Tensor G = input().clone().requires_grad_();
  Tensor Z = (*R)(G);
  EXPECT_FALSE(Z.is_same(G));
  sum(Z).backward();
  EXPECT_EQ(G.grad().to_vector<double>(),
            (std::vector<double>{0, 1, 1, 1, 1, 0, 0, 0}));
}

TEST(LayerActivationTest, Gradients) {
  Tensor X = seq({2, 3}, 0.3, 2.0, DType::F64);
  std::vector<nn::ModulePtr> Mods = {
      nn::make<nn::GELU>(),     nn::make<nn::GELU>("tanh"),
      nn::make<nn::SiLU>(),     nn::make<nn::LeakyReLU>(0.2),
      nn::make<nn::Sigmoid>(),  nn::make<nn::Tanh>(),
      nn::make<nn::Softmax>(1), nn::make<nn::ReLU>()};
  for (const nn::ModulePtr &M : Mods)
    checkInputGradients(
        [&](const std::vector<Tensor> &In) { return (*M)(In[0]).toTensor(); },
        {X.clone().requires_grad_()});
  EXPECT_THROW(nn::GELU("fast"), Error);
}

TEST(LayerActivationTest, DropoutTrainAndEval) {
  manual_seed(3);
  auto D = nn::make<nn::Dropout>(0.25);
  Tensor X = ones({20000});
  Tensor Y = (*D)(X);
  std::vector<double> V = Y.to_vector<double>();
  int64_t Zeros = 0;
  for (double E : V) {
    if (E == 0.0)
      ++Zeros;
    else
      EXPECT_NEAR(E, 1.0 / 0.75, 1e-6);
  }
  EXPECT_NEAR(static_cast<double>(Zeros) / V.size(), 0.25, 0.015);
  // Gradient flows only through kept elements, scaled.
  Tensor G = ones({1000}).requires_grad_();
  Tensor Out = (*D)(G);
  sum(Out).backward();
  EXPECT_TRUE(allclose(G.grad(), Out.detach()));
  // Eval: identity.
  D->eval();
  EXPECT_TRUE(equal((*D)(X), X));
  D->train();
  EXPECT_FALSE(equal((*D)(X), X));
  expectError([] { nn::Dropout(1.5); }, {"Dropout", "between 0 and 1", "1.5"});
}
