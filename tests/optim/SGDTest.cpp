//===- SGDTest.cpp - SGD steps checked by hand, and its bad input ---------===//
//
// Small cases whose results are worked out in the comments: a plain step,
// momentum's first step (buffer = gradient, no dampening) and second step
// (with dampening), Nesterov, weight decay, maximize; skipped parameters;
// zero_grad; and PyTorch's validation errors (negative lr, Nesterov without
// momentum or with dampening, unknown options, a parameter in two groups,
// an empty parameter list, a missing lr), each leaving things unchanged.
//
//===----------------------------------------------------------------------===//

#include "OptimTestUtils.h"
#include "nngraph/frontend/optim/SGD.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::optim;
using nng::test::vec;
using nng::test::expectValues;
using nng::test::errorOf;

TEST(SGDTest, PlainStepIsParamMinusLrTimesGrad) {
  Tensor P = vec({1, 2, 3});
  SGD Opt({P}, {.lr = 0.5});
  P.set_grad(vec({0.2f, -0.4f, 1.0f}, false));
  Opt.step();
  // 1 - 0.5*0.2, 2 + 0.5*0.4, 3 - 0.5*1
  expectValues(P, {0.9, 2.2, 2.5});
  // momentum 0: the state holds momentum_buffer = None, like PyTorch's.
  const ParamState &S = Opt.state(P);
  ASSERT_EQ(S.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(S.at("momentum_buffer")));
}

TEST(SGDTest, MomentumFirstStepBufferIsTheGradientUndamped) {
  Tensor P = vec({0, 0});
  SGD Opt({P}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
  P.set_grad(vec({1, -2}, false));
  Opt.step();
  // Step 1: buf = g = (1, -2) (no dampening); p = -0.1 * buf.
  expectValues(stateTensor(Opt.state(P), "momentum_buffer"), {1, -2});
  expectValues(P, {-0.1, 0.2});
  P.set_grad(vec({2, 2}, false));
  Opt.step();
  // Step 2: buf = 0.9 * (1, -2) + (1 - 0.5) * (2, 2) = (1.9, -0.8);
  // p = (-0.1, 0.2) - 0.1 * buf = (-0.29, 0.28).
  expectValues(stateTensor(Opt.state(P), "momentum_buffer"), {1.9, -0.8});
  expectValues(P, {-0.29, 0.28});
}

TEST(SGDTest, NesterovWeightDecayAndMaximize) {
  Tensor P = vec({1});
  SGD Opt({P}, {.lr = 0.1,
                .momentum = 0.5,
                .weight_decay = 0.1,
                .nesterov = true,
                .maximize = true});
  P.set_grad(vec({2}, false));
  Opt.step();
  // d_p = -2 + 0.1 * 1 = -1.9; buf = -1.9; nesterov: d_p = -1.9 + 0.5 *
  // -1.9 = -2.85; p = 1 - 0.1 * -2.85 = 1.285.
  expectValues(P, {1.285});
}

TEST(SGDTest, StepLeavesTheGradientAlone) {
  Tensor P = vec({1, 1});
  SGD Opt({P}, {.lr = 0.1, .momentum = 0.9});
  Tensor G = vec({3, 4}, false);
  P.set_grad(G);
  Opt.step();
  Opt.step(); // The buffer is updated in place; it must not alias the grad.
  expectValues(G, {3, 4});
  expectValues(P.grad(), {3, 4});
}

TEST(SGDTest, ParametersWithoutGradientAreSkipped) {
  Tensor A = vec({1}), B = vec({5});
  SGD Opt({A, B}, {.lr = 1, .momentum = 0.9});
  A.set_grad(vec({1}, false));
  Opt.step();
  expectValues(A, {0});
  expectValues(B, {5});
  EXPECT_TRUE(Opt.state(B).empty());
  EXPECT_EQ(Opt.state_dict().state.size(), 1u);
}

TEST(SGDTest, ZeroGradDropsOrZeroesGradients) {
  Tensor A = vec({1, 2});
  SGD Opt({A}, {.lr = 0.1});
  A.set_grad(vec({3, 4}, false));
  Opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(A.grad().defined());
  expectValues(A.grad(), {0, 0});
  Opt.zero_grad();
  EXPECT_FALSE(A.grad().defined());
  Opt.step(); // Nothing to do without gradients.
  expectValues(A, {1, 2});
}

TEST(SGDTest, PerGroupLrAndMutableLr) {
  Tensor A = vec({1}), B = vec({1});
  SGD Opt({ParamGroup({A}), ParamGroup({B}, {{"lr", 0.5}})}, {.lr = 0.1});
  ASSERT_EQ(Opt.param_groups().size(), 2u);
  EXPECT_EQ(Opt.param_groups()[0].lr(), 0.1);
  EXPECT_EQ(Opt.param_groups()[1].lr(), 0.5);
  // Every default is filled in, the group's own keys first (PyTorch's order).
  EXPECT_EQ(Opt.param_groups()[1].options.begin()->first, "lr");
  EXPECT_EQ(Opt.param_groups()[1].options.size(), 8u);
  A.set_grad(vec({1}, false));
  B.set_grad(vec({1}, false));
  Opt.step();
  expectValues(A, {0.9});
  expectValues(B, {0.5});
  Opt.param_groups()[0].set_lr(1.0);
  Opt.step();
  expectValues(A, {-0.1});
}

TEST(SGDTest, AddParamGroupAfterConstruction) {
  Tensor A = vec({1}), B = vec({2});
  SGD Opt({A}, {.lr = 0.1, .momentum = 0.9});
  Opt.add_param_group(ParamGroup({B}, {{"momentum", 0.0}}));
  ASSERT_EQ(Opt.param_groups().size(), 2u);
  EXPECT_EQ(Opt.param_groups()[1].options.number("momentum"), 0.0);
  EXPECT_EQ(Opt.param_groups()[1].lr(), 0.1);
  // Adding A again is refused, and the optimizer keeps two groups.
  std::string E = errorOf([&] { Opt.add_param_group(ParamGroup({A})); });
  EXPECT_NE(E.find("more than one parameter group"), std::string::npos) << E;
  EXPECT_EQ(Opt.param_groups().size(), 2u);
}

TEST(SGDTest, PyTorchValidationErrors) {
  Tensor P = vec({1});
  EXPECT_NE(errorOf([&] {
              SGD({P}, {.lr = -0.1});
            }).find("Invalid learning rate: -0.1"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              SGD({P}, {.lr = 0.1, .momentum = -1});
            }).find("Invalid momentum value"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              SGD({P}, {.lr = 0.1, .weight_decay = -1});
            }).find("Invalid weight_decay value"),
            std::string::npos);
  // Nesterov needs momentum > 0 and dampening == 0.
  std::string E = errorOf([&] { SGD({P}, {.lr = 0.1, .nesterov = true}); });
  EXPECT_NE(E.find("Nesterov momentum requires a momentum and zero "
                   "dampening"),
            std::string::npos)
      << E;
  E = errorOf([&] {
    SGD({P}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true});
  });
  EXPECT_NE(E.find("Nesterov momentum requires"), std::string::npos) << E;
  // lr is required, by default or per group.
  E = errorOf([&] { SGD({P}, {}); });
  EXPECT_NE(E.find("required optimization parameter lr"), std::string::npos)
      << E;
  EXPECT_EQ(errorOf([&] { SGD({ParamGroup({P}, {{"lr", 0.1}})}, {}); }), "");
  E = errorOf([&] { SGD(std::vector<Tensor>{}, {.lr = 0.1}); });
  EXPECT_NE(E.find("empty parameter list"), std::string::npos) << E;
  E = errorOf([&] {
    SGD({ParamGroup({P}, {{"lr", 0.1}, {"moment", 0.9}})}, {});
  });
  EXPECT_NE(E.find("unknown option 'moment'"), std::string::npos) << E;
  E = errorOf([&] { SGD({ParamGroup({P}, {{"lr", true}})}, {}); });
  EXPECT_NE(E.find("option lr is bool True"), std::string::npos) << E;
  E = errorOf([&] { SGD({P, P}, {.lr = 0.1}); });
  EXPECT_NE(E.find("appears twice"), std::string::npos) << E;
}

TEST(SGDTest, NonLeafAndIntegerParametersAreRefused) {
  Tensor I = Tensor(rt::Tensor::fromVector<int64_t>({1, 2}, Shape{2}));
  std::string E = errorOf([&] { SGD({I}, {.lr = 0.1}); });
  EXPECT_NE(E.find("only floating-point"), std::string::npos) << E;
  Tensor Leaf = vec({1, 2});
  Tensor NonLeaf = Leaf * 2.0;
  E = errorOf([&] { SGD({NonLeaf}, {.lr = 0.1}); });
  EXPECT_NE(E.find("can't optimize a non-leaf tensor"), std::string::npos) << E;
  EXPECT_NE(errorOf([&] { SGD({Tensor()}, {.lr = 0.1}); }).find("undefined"),
            std::string::npos);
}

TEST(SGDTest, BadOptionSetLaterFailsTheStepBeforeAnyChange) {
  Tensor A = vec({1}), B = vec({1});
  SGD Opt({ParamGroup({A}), ParamGroup({B})}, {.lr = 0.1});
  A.set_grad(vec({1}, false));
  B.set_grad(vec({1}, false));
  Opt.param_groups()[1].set_lr(-1);
  std::string E = errorOf([&] { Opt.step(); });
  EXPECT_NE(E.find("param group 1: Invalid learning rate"), std::string::npos)
      << E;
  expectValues(A, {1}); // Group 0 was not stepped either.
  EXPECT_TRUE(Opt.state(A).empty());
}

TEST(SGDTest, GradientOfAnotherDtypeFailsBeforeAnyChange) {
  Tensor A = vec({1}), B = vec({1});
  SGD Opt({A, B}, {.lr = 0.1});
  A.set_grad(vec({1}, false));
  B.set_grad(Tensor(rt::Tensor::fromVector<double>({1.0}, Shape{1})));
  std::string E = errorOf([&] { Opt.step(); });
  EXPECT_NE(E.find("gradient is f64[1]"), std::string::npos) << E;
  expectValues(A, {1});
}

TEST(SGDTest, ReprLikePython) {
  Tensor P = vec({1});
  SGD Opt({P}, {.lr = 0.1, .momentum = 0.9});
  EXPECT_EQ(Opt.toString(), "SGD (\nParameter Group 0\n"
                            "    dampening: 0.0\n"
                            "    differentiable: False\n"
                            "    foreach: None\n"
                            "    lr: 0.1\n"
                            "    maximize: False\n"
                            "    momentum: 0.9\n"
                            "    nesterov: False\n"
                            "    weight_decay: 0.0\n)");
}
