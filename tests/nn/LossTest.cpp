//===- LossTest.cpp - The loss modules and functions without PyTorch ------===//
//
// What the loss modules of nn/Loss.h and the nng::F losses promise beyond
// matching PyTorch's numbers (TorchLossTest.cpp): gradients of the new
// functional losses against finite differences (autograd::gradcheck, f64),
// the weight buffers and their state_dict keys, loading a state_dict into
// them, printing, hand-computed values, and the errors for a bad reduction,
// beta or label_smoothing, mismatched shapes and misused probability
// targets, each naming the loss.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"

#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Gradcheck.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace nng;
using namespace nng::test;

namespace {

using V = std::vector<Tensor>;

/// Uniform values in [Lo, Hi), f64, requiring grad.
Tensor leaf(const std::vector<int64_t> &Sizes, double Lo = -1, double Hi = 1) {
  Tensor T = (rand(Sizes, DType::F64) * (Hi - Lo) + Lo).detach();
  T.requires_grad_(true);
  return T;
}

/// Fixed f64 values requiring grad.
Tensor leafOf(std::vector<double> Values, std::vector<int64_t> Sizes) {
  Tensor T = tensor(Values, Sizes, DType::F64);
  T.requires_grad_(true);
  return T;
}

void expectGradcheck(const autograd::GradcheckFn &Fn, const V &Inputs) {
  autograd::GradcheckResult R = autograd::gradcheck(Fn, Inputs);
  EXPECT_TRUE(R.Ok) << R.Message;
}

double value(const Tensor &T) { return T.item<double>(); }

} // namespace

TEST(LossGradcheck, L1Loss) {
  manual_seed(1);
  // The target lies above the input everywhere: no kink at d = 0.
  for (const char *R : {"mean", "sum", "none"})
    expectGradcheck([R](const V &X) { return F::l1_loss(X[0], X[1], R); },
                    {leaf({3, 4}), leaf({4}, 2, 3)});
}

TEST(LossGradcheck, SmoothL1Loss) {
  // |d| on both sides of beta = 1 and of 0.5, away from the seam.
  Tensor X = leafOf({-2.5, -0.4, 0.3, 1.7, 0.1, -1.3}, {2, 3});
  Tensor T = leafOf({0.05, 0.2, -0.1, 0.2, 0.9, 0.0}, {2, 3});
  for (double Beta : {1.0, 0.5})
    for (const char *R : {"mean", "sum", "none"})
      expectGradcheck(
          [R, Beta](const V &In) {
            return F::smooth_l1_loss(In[0], In[1], R, Beta);
          },
          {X, T});
}

TEST(LossGradcheck, KLDiv) {
  manual_seed(2);
  for (const char *R : {"mean", "batchmean", "sum", "none"}) {
    expectGradcheck([R](const V &X) { return F::kl_div(X[0], X[1], R); },
                    {leaf({3, 4}, -3, 0), leaf({3, 4}, 0.1, 1)});
    expectGradcheck([R](const V &X) { return F::kl_div(X[0], X[1], R, true); },
                    {leaf({2, 3, 2}, -3, 0), leaf({2, 3, 2}, -3, 0)});
  }
}

TEST(LossGradcheck, CrossEntropyProbabilities) {
  manual_seed(3);
  Tensor W = tensor({0.5, 1.0, 2.0, 1.5}, DType::F64);
  expectGradcheck(
      [W](const V &X) {
        return F::cross_entropy(X[0], X[1], W, "mean", -100, 0.2);
      },
      {leaf({3, 4}), leaf({3, 4}, 0, 1)});
  expectGradcheck(
      [](const V &X) { return F::cross_entropy(X[0], X[1], Tensor(), "none"); },
      {leaf({2, 3, 2}), leaf({2, 3, 2}, 0, 1)});
  expectGradcheck(
      [](const V &X) { return F::cross_entropy(X[0], X[1], Tensor(), "sum"); },
      {leaf({4}), leaf({4}, 0, 1)});
}

TEST(LossValues, HandComputed) {
  Tensor X = tensor({1.0, -2.0, 0.5});
  Tensor T = tensor({0.0, 0.0, 2.0});
  EXPECT_NEAR(value(F::l1_loss(X, T)), (1.0 + 2.0 + 1.5) / 3, 1e-6);
  // Smooth L1, beta 1: 0.5 (d < 1), 2 - 0.5, 1.5 - 0.5.
  EXPECT_NEAR(value(F::smooth_l1_loss(X, T, "sum")), 0.5 + 1.5 + 1.0, 1e-6);
  // beta 0 is L1.
  EXPECT_NEAR(value(F::smooth_l1_loss(X, T, "sum", 0.0)), 4.5, 1e-6);
  // KL of p from itself is 0; a zero target probability contributes 0.
  Tensor P = tensor(std::vector<double>{0.25, 0.75, 0.0, 1.0},
                    std::vector<int64_t>{2, 2});
  Tensor LogP = log(clamp(P, 1e-30, std::nullopt));
  EXPECT_NEAR(value(F::kl_div(LogP, P, "batchmean")), 0.0, 1e-6);
  EXPECT_FALSE(std::isnan(value(F::kl_div(LogP, P, "sum"))));
  // Cross entropy with a one-hot probability target equals class indices.
  Tensor Logits = tensor(std::vector<double>{0.2, -1.0, 2.0, 0.5, 0.1, 0.3},
                         std::vector<int64_t>{2, 3});
  Tensor Idx = tensor(std::vector<double>{2, 0}, std::nullopt, DType::I64);
  Tensor OneHot = one_hot(Idx, 3).to(DType::F32);
  for (const char *R : {"mean", "sum"})
    EXPECT_NEAR(value(F::cross_entropy(Logits, OneHot, Tensor(), R, -100, 0.1)),
                value(F::cross_entropy(Logits, Idx, Tensor(), R, -100, 0.1)),
                1e-6)
        << R;
}

TEST(LossModules, WeightBuffersAndStateDict) {
  Tensor W = tensor({1.0, 2.0, 3.0});
  auto Ce = nn::make<nn::CrossEntropyLoss>(W);
  EXPECT_EQ(Ce->state_dict().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(Ce->weight.is_same(W)) << "PyTorch registers the given tensor";
  EXPECT_TRUE(Ce->parameters().empty());
  EXPECT_TRUE(nn::CrossEntropyLoss().state_dict().keys().empty());
  EXPECT_EQ(nn::NLLLoss(W).state_dict().keys(),
            std::vector<std::string>{"weight"});
  EXPECT_EQ(nn::BCEWithLogitsLoss(W, "mean", W).state_dict().keys(),
            (std::vector<std::string>{"weight", "pos_weight"}));
  EXPECT_EQ(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions{.pos_weight = W})
                .state_dict()
                .keys(),
            std::vector<std::string>{"pos_weight"});
  EXPECT_TRUE(nn::MSELoss().state_dict().keys().empty());
  // Loading a state_dict changes the weight forward uses.
  Tensor Logits = tensor(std::vector<double>{0.2, -1.0, 2.0, 0.5, 0.1, 0.3},
                         std::vector<int64_t>{2, 3});
  Tensor Idx = tensor(std::vector<double>{2, 0}, std::nullopt, DType::I64);
  Tensor W2 = tensor({0.5, 0.5, 4.0});
  Ce->load_state_dict(nn::StateDict{{"weight", W2}});
  EXPECT_NEAR(value((*Ce)(Logits, Idx)),
              value(F::cross_entropy(Logits, Idx, W2)), 1e-6);
  // A loss inside a container: keys get the container's prefix.
  auto Seq = nn::make<nn::Sequential>(Ce);
  EXPECT_EQ(Seq->state_dict().keys(), std::vector<std::string>{"0.weight"});
}

TEST(LossModules, PrintsLikePyTorch) {
  EXPECT_EQ(nn::CrossEntropyLoss(tensor({1.0, 2.0}), 0, "sum", 0.1).to_string(),
            "CrossEntropyLoss()");
  EXPECT_EQ(nn::KLDivLoss("batchmean", true).to_string(), "KLDivLoss()");
  EXPECT_EQ(nn::SmoothL1Loss("mean", 0.5).to_string(), "SmoothL1Loss()");
  EXPECT_EQ(nn::BCEWithLogitsLoss().to_string(), "BCEWithLogitsLoss()");
}

TEST(LossModules, OptionsStructs) {
  nn::CrossEntropyLoss Ce({.ignore_index = 3, .label_smoothing = 0.25});
  EXPECT_EQ(Ce.ignore_index, 3);
  EXPECT_EQ(Ce.reduction, "mean");
  EXPECT_DOUBLE_EQ(Ce.label_smoothing, 0.25);
  nn::SmoothL1Loss S({.beta = 0.5});
  EXPECT_DOUBLE_EQ(S.beta, 0.5);
  // Spelled with the type: GCC takes {"batchmean", true} for a std::string.
  nn::KLDivLoss K(
      nn::KLDivLossOptions{.reduction = "batchmean", .log_target = true});
  EXPECT_TRUE(K.log_target);
  EXPECT_EQ(K.reduction, "batchmean");
}

TEST(LossModules, ForwardIsDifferentiable) {
  manual_seed(4);
  nn::MSELoss L;
  Tensor X = randn({3, 2});
  X.requires_grad_(true);
  Tensor Y = randn({3, 2});
  Tensor Loss = L(X, Y);
  Loss.backward();
  ASSERT_TRUE(X.grad().defined());
  Tensor Want = (X.detach() - Y) * (2.0 / 6.0);
  EXPECT_TRUE(allclose(X.grad(), Want, 1e-5, 1e-6));
}

TEST(LossErrors, Construction) {
  expectError([] { nn::MSELoss("avg"); },
              {"MSELoss", "'avg' is not a valid value for reduction",
               "'mean', 'sum' or 'none'"});
  expectError([] { nn::CrossEntropyLoss(Tensor(), -100, "batchmean"); },
              {"CrossEntropyLoss", "'batchmean'"});
  expectError([] { nn::KLDivLoss("avg"); },
              {"KLDivLoss", "'mean', 'batchmean', 'sum' or 'none'"});
  expectError([] { nn::SmoothL1Loss("mean", -1.0); },
              {"SmoothL1Loss", "beta must be non-negative", "-1.0"});
  expectError([] { nn::CrossEntropyLoss(Tensor(), -100, "mean", 1.5); },
              {"CrossEntropyLoss", "label_smoothing", "1.5"});
  expectError([] { nn::L1Loss("Mean"); }, {"L1Loss", "'Mean'"});
  expectError([] { nn::NLLLoss(Tensor(), -100, ""); }, {"NLLLoss", "''"});
  expectError([] { nn::BCEWithLogitsLoss(Tensor(), "max"); },
              {"BCEWithLogitsLoss", "'max'"});
}

TEST(LossErrors, Forward) {
  manual_seed(5);
  nn::L1Loss L1;
  expectError(
      [&] {
        L1(randn({4, 3}), randn({2}));
      },
      {"l1_loss", "target f32[2]", "cannot be broadcast", "input f32[4, 3]",
       "L1Loss"});
  expectError([] { F::smooth_l1_loss(randn({2}), randn({2}), "mean", -0.5); },
              {"smooth_l1_loss", "beta"});
  expectError([] { F::kl_div(randn({2}), randn({2}), "avg"); },
              {"kl_div", "'mean', 'batchmean', 'sum' or 'none'", "'avg'"});
  expectError([] { F::mse_loss(randn({2}), randint(0, 2, {2})); },
              {"mse_loss", "target", "floating point"});
  // A reduction changed on the member after construction is still checked.
  nn::MSELoss M;
  M.reduction = "avg";
  expectError([&] { M(randn({2}), randn({2})); }, {"mse_loss", "'avg'"});
  // Probability targets: shape, ignore_index, weight.
  nn::CrossEntropyLoss Ce;
  expectError(
      [&] {
        Ce(randn({6, 5}), rand({6, 4}));
      },
      {"cross_entropy", "f32[6, 4]", "class probabilities", "f32[6, 5]",
       "CrossEntropyLoss"});
  nn::CrossEntropyLoss Ignoring(Tensor(), 1);
  expectError(
      [&] {
        Ignoring(randn({6, 5}), rand({6, 5}));
      },
      {"cross_entropy", "ignore_index=1", "class-probability"});
  nn::CrossEntropyLoss Weighted(ones({4}));
  expectError(
      [&] {
        Weighted(randn({2, 5}), rand({2, 5}));
      },
      {"cross_entropy", "weight f32[4]", "[5]"});
  expectError(
      [&] {
        Weighted(randn({2, 5}), randint(0, 5, {2}));
      },
      {"cross_entropy", "weight f32[4]", "[5]"});
}

// The example of docs/layers.md's "Losses" section (keep the two in sync).
TEST(LossModules, DocumentedExample) {
  manual_seed(0);
  auto model = nn::make<nn::Linear>(4, 3);
  auto criterion = nn::make<nn::CrossEntropyLoss>(nn::CrossEntropyLossOptions{
      .weight = tensor({1.0, 2.0, 1.0}), .label_smoothing = 0.1});
  Tensor x = randn({8, 4});
  Tensor y = randint(0, 3, {8});
  Tensor loss = (*criterion)((*model)(x), y);
  loss.backward();
  EXPECT_TRUE(model->weight.grad().defined());
  Tensor p = softmax(randn({8, 3}), 1);
  Tensor soft = (*criterion)((*model)(x), p);
  Tensor kl = F::kl_div(log_softmax((*model)(x), 1), p, "batchmean");
  std::ostringstream OS;
  OS << *criterion;
  EXPECT_EQ(OS.str(), "CrossEntropyLoss()");
  EXPECT_EQ(criterion->state_dict().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
  EXPECT_TRUE(std::isfinite(soft.item<float>()));
  EXPECT_GE(kl.item<float>(), 0.0f);
}
