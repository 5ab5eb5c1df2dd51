//===- LayerLinearTest.cpp - Linear, Identity, Flatten --------------------===//
//
// Parameter names, shapes and default initialization bounds, extra_repr
// and printing as PyTorch 1.13 shows them, forward on known values
// (reference numbers from PyTorch), gradients, and the errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Linear.h"

using namespace nng;
using namespace nng::test;

TEST(LayerLinearTest, ParametersAndStateDictMatchPyTorch) {
  nn::Linear L(4, 3);
  EXPECT_EQ(stateSignature(L),
            (std::vector<std::string>{"weight [3, 4] f32", "bias [3] f32"}));
  EXPECT_TRUE(L.weight.requires_grad());
  EXPECT_TRUE(L.bias.requires_grad());
  nn::Linear NoBias(4, 3, /*bias=*/false);
  EXPECT_EQ(stateSignature(NoBias),
            (std::vector<std::string>{"weight [3, 4] f32"}));
  EXPECT_FALSE(NoBias.bias.defined());
  EXPECT_EQ(NoBias.parameters().size(), 1u);
}

TEST(LayerLinearTest, DefaultInitBounds) {
  // kaiming_uniform_(a=sqrt(5)) and the bias both give U(-1/sqrt(in),
  // 1/sqrt(in)).
  manual_seed(0);
  nn::Linear L(64, 128);
  double Bound = 1.0 / 8.0;
  for (const Tensor &P : {L.weight, L.bias}) {
    std::vector<double> V = P.to_vector<double>();
    double Lo = *std::min_element(V.begin(), V.end());
    double Hi = *std::max_element(V.begin(), V.end());
    EXPECT_GE(Lo, -Bound);
    EXPECT_LE(Hi, Bound);
  }
  std::vector<double> W = L.weight.to_vector<double>();
  EXPECT_GT(*std::max_element(W.begin(), W.end()), 0.98 * Bound);
  // reset_parameters re-draws.
  Tensor Before = L.weight.clone();
  L.reset_parameters();
  EXPECT_FALSE(equal(Before, L.weight));
}

TEST(LayerLinearTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::Linear(4, 3).to_string(),
            "Linear(in_features=4, out_features=3, bias=True)");
  EXPECT_EQ(nn::Linear(4, 3, false).extra_repr(),
            "in_features=4, out_features=3, bias=False");
  EXPECT_EQ(nn::NonDynamicallyQuantizableLinear(8, 8).to_string(),
            "NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)");
  EXPECT_EQ(nn::Identity().to_string(), "Identity()");
  EXPECT_EQ(nn::Flatten().to_string(), "Flatten(start_dim=1, end_dim=-1)");
}

TEST(LayerLinearTest, ForwardMatchesPyTorch) {
  auto L = nn::make<nn::Linear>(3, 2);
  fillParams(*L);
  expectValues((*L)(seq({2, 3}, 0.0)), {2, 2},
               {1.1068902, -0.465048313, 0.865458906, 0.300604343});
  // Leading batch axes are kept; a 1-D input works too.
  EXPECT_EQ((*L)(zeros({4, 5, 3})).sizes(), (std::vector<int64_t>{4, 5, 2}));
  EXPECT_EQ((*L)(zeros({3})).sizes(), (std::vector<int64_t>{2}));
}

TEST(LayerLinearTest, Gradients) {
  auto L = nn::make<nn::Linear>(3, 2);
  L->to(DType::F64);
  Tensor X = seq({4, 3}, 0.5, 1.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*L)(In[0]); },
      {X.requires_grad_()});
  checkParameterGradients(*L, [&] { return (*L)(X.detach()); });
}

TEST(LayerLinearTest, ShapeErrorsNameLayerAndShapes) {
  auto L = nn::make<nn::Linear>(4, 3);
  expectError(
      [&] {
        (*L)(zeros({2, 5}));
      },
      {"Linear", "[2, 5]", "in_features=4", "[3, 4]"});
  EXPECT_THROW(nn::Linear(-1, 3), Error);
}

TEST(LayerLinearTest, IdentityAndFlatten) {
  Tensor X = seq({2, 3, 4}, 0.0);
  auto I = nn::make<nn::Identity>();
  EXPECT_TRUE((*I)(X).is_same(X));
  auto F = nn::make<nn::Flatten>();
  EXPECT_EQ((*F)(X).sizes(), (std::vector<int64_t>{2, 12}));
  auto F2 = nn::make<nn::Flatten>(0, 1);
  EXPECT_EQ(F2->extra_repr(), "start_dim=0, end_dim=1");
  Tensor Y = (*F2)(X);
  EXPECT_EQ(Y.sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(Y.to_vector<double>(), X.to_vector<double>());
}

TEST(LayerLinearTest, RunsThroughModuleHooks) {
  // With a hook installed, the call goes through nn::Value packing; the
  // layer must see the same input and the hook may replace the output.
  auto L = nn::make<nn::Linear>(3, 2);
  fillParams(*L);
  Tensor X = seq({2, 3}, 0.0);
  Tensor Plain = (*L)(X);
  int Calls = 0;
  nn::RemovableHandle H = L->register_forward_hook(
      [&](nn::ModuleBase &, const std::vector<nn::Value> &In,
          const nn::Value &Out) {
        ++Calls;
        EXPECT_TRUE(In[0].toTensor().is_same(X));
        return nn::Value(Out.toTensor() * 2.0);
      });
  Tensor Hooked = (*L)(X);
  EXPECT_EQ(Calls, 1);
  EXPECT_TRUE(allclose(Hooked, Plain * 2.0));
  H.remove();
  EXPECT_TRUE(allclose((*L)(X), Plain));
}
