//===- TorchLossTest.cpp - The loss modules against PyTorch ---------------===//
//
// Each loss module of nn/Loss.h (and so each nng::F loss) against the same
// torch.nn loss through TorchOracle.h: for every reduction and the main
// options (weight, ignore_index, label_smoothing, class-probability
// targets, spatial and unbatched inputs, beta, pos_weight, log_target,
// broadcasting targets) the torch module loads the C++ module's state_dict
// (so the weight buffers' keys and order must be PyTorch's), both compute
// the loss and backward with the same upstream gradient, and the loss, the
// input (and floating target) gradients and print(module) must agree.
// SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Loss.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;

namespace {

const char *const Reductions[] = {"mean", "sum", "none"};

/// A case calling Mod(Input, Target); TargetGrad says whether the target
/// requires grad too (then its gradient is compared as well).
template <typename M>
OracleCase lossCase(const std::string &Torch, std::shared_ptr<M> Mod,
                    Tensor Input, Tensor Target, bool TargetGrad = false) {
  OracleCase C;
  C.Name = Torch + " on " + Input.shape().toString() + ", " +
           Target.shape().toString();
  C.Module = Mod;
  C.TorchModule = Torch;
  C.Inputs = {std::move(Input), std::move(Target)};
  C.InputRequiresGrad = {true, TargetGrad};
  C.Forward = [Mod](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*Mod)(X[0], X[1])};
  };
  return C;
}

/// Python's 'R'.
std::string q(const std::string &R) { return "'" + R + "'"; }

/// Class indices in [0, C) of shape Sizes, with every Every-th entry set to
/// Ignore (none when Every is 0).
Tensor classes(const std::vector<int64_t> &Sizes, int64_t C, int64_t Every = 0,
               int64_t Ignore = -100) {
  Tensor T = randint(0, C, Sizes);
  if (Every == 0)
    return T;
  std::vector<int64_t> V = T.data().toIntVector();
  std::vector<double> D(V.begin(), V.end());
  for (size_t I = 0; I < D.size(); I += Every)
    D[I] = static_cast<double>(Ignore);
  return tensor(D, Sizes, DType::I64);
}

/// Rows of probabilities along axis 1 (axis 0 for 1-D).
Tensor probs(const std::vector<int64_t> &Sizes) {
  NoGradGuard G;
  return softmax(randn(Sizes), Sizes.size() == 1 ? 0 : 1);
}

} // namespace

TEST(TorchLoss, CrossEntropyClassIndices) {
  manual_seed(11);
  TorchOracle O;
  Tensor W = rand({5}) + 0.5;
  for (std::string R : Reductions) {
    O.add(lossCase("nn.CrossEntropyLoss(reduction=" + q(R) + ")",
                   nn::make<nn::CrossEntropyLoss>(Tensor(), -100, R),
                   randn({6, 5}), classes({6}, 5)));
    // weight, ignore_index and label smoothing together.
    O.add(lossCase("nn.CrossEntropyLoss(weight=torch.zeros(5), "
                   "ignore_index=2, reduction=" +
                       q(R) + ", label_smoothing=0.2)",
                   nn::make<nn::CrossEntropyLoss>(W, 2, R, 0.2), randn({7, 5}),
                   classes({7}, 5, 3, 2)));
    // Spatial [N, C, H, W] with ignored positions.
    O.add(lossCase(
        "nn.CrossEntropyLoss(weight=torch.zeros(4), reduction=" + q(R) + ")",
        nn::make<nn::CrossEntropyLoss>(rand({4}) + 0.5, -100, R),
        randn({2, 4, 3, 3}), classes({2, 3, 3}, 4, 4)));
  }
  // Unbatched [C] with a 0-d target.
  O.add(lossCase("nn.CrossEntropyLoss(label_smoothing=0.1)",
                 nn::make<nn::CrossEntropyLoss>(Tensor(), -100, "mean", 0.1),
                 randn({5}), scalar_tensor(3, DType::I64)));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, CrossEntropyClassProbabilities) {
  manual_seed(12);
  TorchOracle O;
  Tensor W = rand({5}) + 0.5;
  for (std::string R : Reductions) {
    O.add(lossCase("nn.CrossEntropyLoss(reduction=" + q(R) + ")",
                   nn::make<nn::CrossEntropyLoss>(Tensor(), -100, R),
                   randn({6, 5}), probs({6, 5}), /*TargetGrad=*/true));
    O.add(lossCase("nn.CrossEntropyLoss(weight=torch.zeros(5), reduction=" +
                       q(R) + ", label_smoothing=0.3)",
                   nn::make<nn::CrossEntropyLoss>(nn::CrossEntropyLossOptions{
                       .weight = W, .reduction = R, .label_smoothing = 0.3}),
                   randn({4, 5}), probs({4, 5}), true));
    O.add(lossCase(
        "nn.CrossEntropyLoss(weight=torch.zeros(3), reduction=" + q(R) + ")",
        nn::make<nn::CrossEntropyLoss>(rand({3}) + 0.5, -100, R),
        randn({2, 3, 4, 2}), probs({2, 3, 4, 2}), true));
  }
  O.add(lossCase("nn.CrossEntropyLoss(label_smoothing=0.2)",
                 nn::make<nn::CrossEntropyLoss>(Tensor(), -100, "mean", 0.2),
                 randn({5}), probs({5}), true));
  // Double precision: to(f64) converts the weight buffer; m.double().
  auto D = nn::make<nn::CrossEntropyLoss>(rand({4}) + 0.5, -100, "mean", 0.1);
  D->to(DType::F64);
  OracleCase C = lossCase("nn.CrossEntropyLoss(weight=torch.zeros(4), "
                          "label_smoothing=0.1)",
                          D, randn({3, 4}).to(DType::F64),
                          probs({3, 4}).to(DType::F64), true);
  C.TorchSetup = {"m = m.double()"};
  C.Name += " f64";
  C.Atol = C.Rtol = 1e-12;
  O.add(std::move(C));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, NLLLoss) {
  manual_seed(13);
  TorchOracle O;
  for (std::string R : Reductions) {
    O.add(lossCase("nn.NLLLoss(reduction=" + q(R) + ")",
                   nn::make<nn::NLLLoss>(Tensor(), -100, R), randn({6, 4}),
                   classes({6}, 4)));
    O.add(lossCase(
        "nn.NLLLoss(weight=torch.zeros(4), ignore_index=1, "
        "reduction=" +
            q(R) + ")",
        nn::make<nn::NLLLoss>(nn::NLLLossOptions{
            .weight = rand({4}) + 0.5, .ignore_index = 1, .reduction = R}),
        randn({2, 4, 5}), classes({2, 5}, 4, 3, 1)));
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, MSEAndL1Loss) {
  manual_seed(14);
  TorchOracle O;
  for (std::string R : Reductions) {
    O.add(lossCase("nn.MSELoss(reduction=" + q(R) + ")",
                   nn::make<nn::MSELoss>(R), randn({3, 4}), randn({3, 4}),
                   true));
    O.add(lossCase("nn.L1Loss(reduction=" + q(R) + ")", nn::make<nn::L1Loss>(R),
                   randn({2, 3, 4}), randn({2, 3, 4}), true));
  }
  // A target broadcast against the input (PyTorch warns, then broadcasts).
  O.add(lossCase("nn.L1Loss()", nn::make<nn::L1Loss>(), randn({4, 3}),
                 randn({3}), true));
  O.add(lossCase("nn.MSELoss(reduction='sum')", nn::make<nn::MSELoss>("sum"),
                 randn({4, 3}), randn({4, 1}), true));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, SmoothL1Loss) {
  manual_seed(15);
  TorchOracle O;
  for (std::string R : Reductions)
    for (double Beta : {1.0, 0.5, 0.0}) {
      std::string B = Beta == 1.0 ? "1.0" : Beta == 0.5 ? "0.5" : "0.0";
      O.add(lossCase("nn.SmoothL1Loss(reduction=" + q(R) + ", beta=" + B + ")",
                     nn::make<nn::SmoothL1Loss>(R, Beta), randn({4, 5}) * 2.0,
                     randn({4, 5}), true));
    }
  O.add(
      lossCase("nn.SmoothL1Loss(beta=2.0)",
               nn::make<nn::SmoothL1Loss>(nn::SmoothL1LossOptions{.beta = 2.0}),
               randn({3, 4}) * 3.0, randn({4}), true));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, BCEWithLogitsLoss) {
  manual_seed(16);
  TorchOracle O;
  for (std::string R : Reductions) {
    O.add(lossCase("nn.BCEWithLogitsLoss(reduction=" + q(R) + ")",
                   nn::make<nn::BCEWithLogitsLoss>(Tensor(), R),
                   randn({3, 4}) * 3.0, rand({3, 4}), true));
    O.add(lossCase(
        "nn.BCEWithLogitsLoss(weight=torch.zeros(4), reduction=" + q(R) +
            ", pos_weight=torch.zeros(4))",
        nn::make<nn::BCEWithLogitsLoss>(rand({4}) + 0.5, R, rand({4}) * 3.0),
        randn({3, 4}) * 3.0, rand({3, 4}), true));
  }
  O.add(lossCase("nn.BCEWithLogitsLoss(pos_weight=torch.zeros(4))",
                 nn::make<nn::BCEWithLogitsLoss>(nn::BCEWithLogitsLossOptions{
                     .pos_weight = rand({4}) + 0.5}),
                 randn({2, 3, 4}), rand({2, 3, 4}), true));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchLoss, KLDivLoss) {
  manual_seed(17);
  TorchOracle O;
  auto LogProbs = [](const std::vector<int64_t> &Sizes) {
    NoGradGuard G;
    return log_softmax(randn(Sizes), 1);
  };
  for (std::string R : {"mean", "batchmean", "sum", "none"}) {
    O.add(lossCase("nn.KLDivLoss(reduction=" + q(R) + ")",
                   nn::make<nn::KLDivLoss>(R), LogProbs({4, 5}), probs({4, 5}),
                   true));
    O.add(lossCase("nn.KLDivLoss(reduction=" + q(R) + ", log_target=True)",
                   nn::make<nn::KLDivLoss>(nn::KLDivLossOptions{
                       .reduction = R, .log_target = true}),
                   LogProbs({3, 4, 2}), LogProbs({3, 4, 2}), true));
  }
  // Zero target probabilities contribute 0 (PyTorch's xlogy); the target's
  // gradient there is NaN in PyTorch, so only the input's is compared.
  Tensor T = tensor(std::vector<double>{0.0, 0.5, 0.5, 0.25, 0.0, 0.75},
                    std::vector<int64_t>{2, 3});
  O.add(lossCase("nn.KLDivLoss(reduction='batchmean')",
                 nn::make<nn::KLDivLoss>("batchmean"), LogProbs({2, 3}), T));
  NNG_RUN_TORCH_ORACLE(O);
}
