//===- DocsExampleTest.cpp - The example of docs/optim.md, run ------------===//
//
// The user guide's example, verbatim in the test body: fit y = 2x + 1 with
// autograd, SGD with momentum and a StepLR schedule, save a checkpoint and
// resume from it. Checks that the fit converges and that the resumed
// optimizer continues exactly like the original.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/optim/Optim.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace nng;

TEST(DocsExampleTest, FitALineAndResume) {
  std::filesystem::path Ckpt =
      std::filesystem::temp_directory_path() /
      ("nngraph-optim-docs-" + std::to_string(::getpid()) + ".ckpt");

  // --- docs/optim.md example (begin) ---
  manual_seed(0);
  Tensor X = randn({64, 1});
  Tensor Y = X * 2.0 + 1.0;
  Tensor W = zeros({1, 1}, TensorOptions().requires_grad());
  Tensor B = zeros({1}, TensorOptions().requires_grad());

  optim::SGD Opt({W, B}, {.lr = 0.1, .momentum = 0.9});
  optim::StepLR Sched(Opt, /*step_size=*/30, /*gamma=*/0.5);
  for (int Epoch = 0; Epoch < 100; ++Epoch) {
    Opt.zero_grad();
    Tensor Loss = F::mse_loss(F::linear(X, W, B), Y);
    Loss.backward();
    Opt.step();
    Sched.step();
  }
  optim::save(Opt, Ckpt, &Sched); // Checkpoint optimizer + scheduler.

  // Later: rebuild the same optimizer over the restored parameters, load.
  Tensor W2 = W.detach().clone().requires_grad_();
  Tensor B2 = B.detach().clone().requires_grad_();
  optim::SGD Opt2({W2, B2}, {.lr = 0.1, .momentum = 0.9});
  optim::StepLR Sched2(Opt2, 30, 0.5);
  optim::load(Opt2, Ckpt, &Sched2);
  // --- docs/optim.md example (end) ---

  EXPECT_NEAR(W.item<double>(), 2.0, 2e-2); // From 0: it converged.
  EXPECT_NEAR(B.item<double>(), 1.0, 2e-2);
  EXPECT_EQ(Sched2.last_epoch(), 100);
  EXPECT_EQ(Opt2.param_groups()[0].lr(), 0.1 * 0.125);
  // Both continue identically.
  for (int Step = 0; Step < 3; ++Step) {
    Opt.zero_grad();
    Opt2.zero_grad();
    F::mse_loss(F::linear(X, W, B), Y + 0.5).backward();
    F::mse_loss(F::linear(X, W2, B2), Y + 0.5).backward();
    Opt.step();
    Opt2.step();
  }
  EXPECT_TRUE(W.data().equals(W2.data()));
  EXPECT_TRUE(B.data().equals(B2.data()));
  std::filesystem::remove(Ckpt);
}
