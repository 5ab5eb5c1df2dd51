//===- OracleTest.cpp - Optimizers against PyTorch 1.13 -------------------===//
//
// Each test runs one case of scripts/optim_oracle.py in PyTorch: three
// float32 parameters, five steps with per-step gradients (parameter 1 has
// none on step 2, so the step must skip it), and builds the same optimizer
// here with the same options, feeding it the same gradients. Parameters
// must match PyTorch's after every step (atol 1e-6), and the final
// state_dict must equal torch's optimizer.state_dict(): group options (key
// order included), parameter numbering, and every state entry. SKIPPED
// without a Python that can import torch.
//
//===----------------------------------------------------------------------===//

#include "OracleCase.h"
#include "nngraph/frontend/optim/Optim.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::optim;
using nng::optim::test::OracleCase;

namespace {

constexpr double Atol = 1e-6;

std::vector<Tensor> makeParams(const OracleCase &C) {
  std::vector<Tensor> P;
  for (const auto &T : C.Params)
    P.push_back(optim::test::toTensor(T, /*RequiresGrad=*/true));
  return P;
}

/// Steps Opt through the case's gradients and compares with PyTorch.
void runAndCompare(Optimizer &Opt, std::vector<Tensor> &Params,
                   const OracleCase &C) {
  ASSERT_EQ(C.Params.size(), Params.size());
  ASSERT_FALSE(C.Grads.empty());
  for (size_t Step = 0; Step < C.Grads.size(); ++Step) {
    for (size_t I = 0; I < Params.size(); ++I) {
      const auto &G = C.Grads[Step][I];
      Params[I].set_grad(G ? optim::test::toTensor(*G) : Tensor());
    }
    Opt.step();
    for (size_t I = 0; I < Params.size(); ++I)
      optim::test::expectNear(Params[I], C.After[Step][I], Atol,
                              "parameter " + std::to_string(I) +
                                  " after step " + std::to_string(Step));
  }
  optim::test::expectStateDict(Opt.state_dict(), C, Atol);
}

} // namespace

TEST(SGDOracleTest, Plain) {
  NNG_ORACLE_OR_SKIP(C, "sgd_plain");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt(P, {.lr = 0.1});
  runAndCompare(Opt, P, C);
}

TEST(SGDOracleTest, Momentum) {
  NNG_ORACLE_OR_SKIP(C, "sgd_momentum");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt(P, {.lr = 0.05, .momentum = 0.9});
  runAndCompare(Opt, P, C);
}

TEST(SGDOracleTest, DampeningAndWeightDecay) {
  NNG_ORACLE_OR_SKIP(C, "sgd_dampening_wd");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt(
      P, {.lr = 0.05, .momentum = 0.9, .dampening = 0.3, .weight_decay = 0.01});
  runAndCompare(Opt, P, C);
}

TEST(SGDOracleTest, Nesterov) {
  NNG_ORACLE_OR_SKIP(C, "sgd_nesterov");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt(
      P, {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.02, .nesterov = true});
  runAndCompare(Opt, P, C);
}

TEST(SGDOracleTest, Maximize) {
  NNG_ORACLE_OR_SKIP(C, "sgd_maximize");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt(P, {.lr = 0.05, .momentum = 0.5, .maximize = true});
  runAndCompare(Opt, P, C);
}

TEST(SGDOracleTest, TwoGroupsWithTheirOwnLr) {
  NNG_ORACLE_OR_SKIP(C, "sgd_groups");
  std::vector<Tensor> P = makeParams(C);
  SGD Opt({ParamGroup({P[0], P[1]}),
           ParamGroup({P[2]}, {{"lr", 0.01}, {"momentum", 0.5}})},
          {.lr = 0.1, .momentum = 0.9});
  runAndCompare(Opt, P, C);
}

TEST(AdamOracleTest, Defaults) {
  NNG_ORACLE_OR_SKIP(C, "adam");
  std::vector<Tensor> P = makeParams(C);
  Adam Opt(P, {.lr = 0.01});
  runAndCompare(Opt, P, C);
}

TEST(AdamOracleTest, AmsgradWithWeightDecay) {
  NNG_ORACLE_OR_SKIP(C, "adam_amsgrad_wd");
  std::vector<Tensor> P = makeParams(C);
  Adam Opt(P, {.lr = 0.01,
               .betas = {0.8, 0.99},
               .weight_decay = 0.05,
               .amsgrad = true});
  runAndCompare(Opt, P, C);
}

TEST(AdamOracleTest, MaximizeAndEps) {
  NNG_ORACLE_OR_SKIP(C, "adam_maximize");
  std::vector<Tensor> P = makeParams(C);
  Adam Opt(P, {.lr = 0.01, .eps = 1e-6, .maximize = true});
  runAndCompare(Opt, P, C);
}

TEST(AdamOracleTest, TwoGroups) {
  NNG_ORACLE_OR_SKIP(C, "adam_groups");
  std::vector<Tensor> P = makeParams(C);
  Adam Opt({ParamGroup({P[0]}),
            ParamGroup({P[1], P[2]}, {{"lr", 0.001}, {"weight_decay", 0.1}})},
           {.lr = 0.01});
  runAndCompare(Opt, P, C);
}

TEST(AdamWOracleTest, Defaults) {
  NNG_ORACLE_OR_SKIP(C, "adamw");
  std::vector<Tensor> P = makeParams(C);
  AdamW Opt(P, {.lr = 0.01});
  runAndCompare(Opt, P, C);
}

TEST(AdamWOracleTest, Amsgrad) {
  NNG_ORACLE_OR_SKIP(C, "adamw_amsgrad");
  std::vector<Tensor> P = makeParams(C);
  AdamW Opt(P, {.lr = 0.02, .weight_decay = 0.1, .amsgrad = true});
  runAndCompare(Opt, P, C);
}

TEST(AdamWOracleTest, TwoGroupsOutOfOrder) {
  // Group 0 holds parameters 0 and 2: the state_dict numbers them 0 and 1,
  // and parameter 1 (in group 1) becomes 2, as in PyTorch.
  NNG_ORACLE_OR_SKIP(C, "adamw_groups");
  std::vector<Tensor> P = makeParams(C);
  AdamW Opt({ParamGroup({P[0], P[2]}, {{"weight_decay", 0.0}}),
             ParamGroup({P[1]}, {{"lr", 0.05}})},
            {.lr = 0.01});
  runAndCompare(Opt, P, C);
}
