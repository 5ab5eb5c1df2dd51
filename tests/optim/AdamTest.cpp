//===- AdamTest.cpp - Adam and AdamW steps checked by hand ----------------===//
//
// The first Adam step is lr * g / (|g| + eps) whatever the betas (bias
// correction undoes the moment decay), which makes hand-checked values:
// Adam with L2 weight decay, AdamW with decoupled decay, AMSGrad's extra
// state, the state layout (step is a 0-d float32 tensor), skipped
// parameters, and the validation errors of betas, eps and unsupported
// PyTorch flags.
//
//===----------------------------------------------------------------------===//

#include "OptimTestUtils.h"
#include "nngraph/frontend/optim/Adam.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::optim;
using nng::test::vec;
using nng::test::expectValues;
using nng::test::errorOf;

TEST(AdamTest, FirstStepIsLrTimesSignOfGradient) {
  Tensor P = vec({1, 1, 1});
  Adam Opt({P}, {.lr = 0.1});
  P.set_grad(vec({0.5f, -2.0f, 0.0f}, false));
  Opt.step();
  // m_hat = g, v_hat = g^2: p -= 0.1 * g / (|g| + 1e-8).
  expectValues(P, {0.9, 1.1, 1.0});
  const ParamState &S = Opt.state(P);
  ASSERT_EQ(S.size(), 3u); // step, exp_avg, exp_avg_sq (no amsgrad)
  Tensor Step = stateTensor(S, "step");
  ASSERT_TRUE(Step.defined());
  EXPECT_EQ(Step.dim(), 0);
  EXPECT_EQ(Step.dtype(), DType::F32);
  EXPECT_EQ(Step.item<double>(), 1.0);
  // exp_avg = 0.1 * g, exp_avg_sq = 0.001 * g^2.
  expectValues(stateTensor(S, "exp_avg"), {0.05, -0.2, 0});
  expectValues(stateTensor(S, "exp_avg_sq"), {0.00025, 0.004, 0}, 1e-9);
}

TEST(AdamTest, SecondStepUsesBiasCorrection) {
  Tensor P = vec({0});
  Adam Opt({P}, {.lr = 0.1, .betas = {0.5, 0.75}});
  P.set_grad(vec({1}, false));
  Opt.step();
  P.set_grad(vec({3}, false));
  Opt.step();
  // Step 1: p = -0.1. Step 2: m = 0.5*0.5 + 0.5*3 = 1.75,
  // v = 0.75*0.25 + 0.25*9 = 2.4375; bc1 = 0.75, bc2 = 0.4375;
  // p = -0.1 - (0.1/0.75) * 1.75 / (sqrt(2.4375)/sqrt(0.4375) + 1e-8).
  double Want = -0.1 - (0.1 / 0.75) * 1.75 /
                           (std::sqrt(2.4375) / std::sqrt(0.4375) + 1e-8);
  expectValues(P, {Want});
  EXPECT_EQ(stateTensor(Opt.state(P), "step").item<double>(), 2.0);
}

TEST(AdamTest, L2WeightDecayVersusAdamWDecoupledDecay) {
  // Adam: g' = g + wd * p = 1 + 0.5 * 2 = 2; first step p -= lr * sign(g').
  Tensor A = vec({2});
  Adam OptA({A}, {.lr = 0.1, .weight_decay = 0.5});
  A.set_grad(vec({1}, false));
  OptA.step();
  expectValues(A, {1.9});
  // AdamW: p *= 1 - lr * wd = 0.95 -> 1.9; then p -= lr * sign(g), g < 0,
  // -> 2.0.
  Tensor B = vec({2});
  AdamW OptB({B}, {.lr = 0.1, .weight_decay = 0.5});
  B.set_grad(vec({-1}, false));
  OptB.step();
  expectValues(B, {1.9 + 0.1});
  // AdamW's default weight decay is 1e-2.
  EXPECT_EQ(OptB.defaults().number("weight_decay"), 0.5);
  Tensor C = vec({1});
  AdamW OptC({C});
  EXPECT_EQ(OptC.defaults().number("weight_decay"), 1e-2);
  EXPECT_EQ(OptC.defaults().number("lr"), 1e-3);
}

TEST(AdamTest, AmsgradKeepsTheMaximumSecondMoment) {
  Tensor P = vec({0});
  Adam Opt({P}, {.lr = 0.1, .betas = {0.0, 0.5}, .amsgrad = true});
  P.set_grad(vec({2}, false));
  Opt.step();
  // v = 0.5 * 4 = 2, max = 2.
  expectValues(stateTensor(Opt.state(P), "max_exp_avg_sq"), {2});
  P.set_grad(vec({0}, false));
  Opt.step();
  // v = 0.5 * 2 = 1, max stays 2; m = 0 (beta1 0) so p does not move.
  expectValues(stateTensor(Opt.state(P), "exp_avg_sq"), {1});
  expectValues(stateTensor(Opt.state(P), "max_exp_avg_sq"), {2});
  expectValues(P, {-0.1});
}

TEST(AdamTest, MaximizeAscends) {
  Tensor P = vec({0});
  Adam Opt({P}, {.lr = 0.1, .maximize = true});
  P.set_grad(vec({5}, false));
  Opt.step();
  expectValues(P, {0.1});
}

TEST(AdamTest, SkippedParameterKeepsItsStepCount) {
  Tensor A = vec({0}), B = vec({0});
  Adam Opt({A, B});
  A.set_grad(vec({1}, false));
  B.set_grad(vec({1}, false));
  Opt.step();
  B.set_grad(Tensor());
  Opt.step();
  EXPECT_EQ(stateTensor(Opt.state(A), "step").item<double>(), 2.0);
  EXPECT_EQ(stateTensor(Opt.state(B), "step").item<double>(), 1.0);
}

TEST(AdamTest, ValidationErrors) {
  Tensor P = vec({1});
  std::string E = errorOf([&] { Adam({P}, {.betas = {1.0, 0.999}}); });
  EXPECT_NE(E.find("Invalid beta parameter at index 0: 1"), std::string::npos)
      << E;
  E = errorOf([&] { AdamW({P}, {.betas = {0.9, -0.1}}); });
  EXPECT_NE(E.find("Invalid beta parameter at index 1"), std::string::npos)
      << E;
  E = errorOf([&] { Adam({P}, {.eps = -1}); });
  EXPECT_NE(E.find("Invalid epsilon value"), std::string::npos) << E;
  E = errorOf([&] { Adam({P}, {.lr = -1}); });
  EXPECT_NE(E.find("Invalid learning rate"), std::string::npos) << E;
  E = errorOf([&] { Adam({ParamGroup({P}, {{"betas", 0.9}})}); });
  EXPECT_NE(E.find("betas is float 0.9"), std::string::npos) << E;
  E = errorOf([&] { Adam({ParamGroup({P}, {{"fused", true}})}); });
  EXPECT_NE(E.find("fused=True"), std::string::npos) << E;
  E = errorOf([&] { AdamW({ParamGroup({P}, {{"fused", false}})}); });
  EXPECT_NE(E.find("unknown option 'fused'"), std::string::npos) << E;
  // foreach selects PyTorch's implementation only: both are accepted.
  EXPECT_EQ(errorOf([&] { Adam({ParamGroup({P}, {{"foreach", true}})}); }), "");
}

TEST(AdamTest, OptionKeysInPyTorchOrder) {
  Tensor P = vec({1});
  Adam A({P});
  std::vector<std::string> Keys;
  for (const auto &E : A.param_groups()[0].options)
    Keys.push_back(E.first);
  EXPECT_EQ(Keys, (std::vector<std::string>{"lr", "betas", "eps",
                                            "weight_decay", "amsgrad",
                                            "maximize", "foreach", "capturable",
                                            "differentiable", "fused"}));
  AdamW W({P});
  Keys.clear();
  for (const auto &E : W.param_groups()[0].options)
    Keys.push_back(E.first);
  EXPECT_EQ(Keys, (std::vector<std::string>{
                      "lr", "betas", "eps", "weight_decay", "amsgrad",
                      "foreach", "maximize", "capturable"}));
  EXPECT_EQ(A.param_groups()[0].options.at("betas").repr(), "(0.9, 0.999)");
}
