//===- TorchCheckpointTest.cpp - Training resumes across nngraph and torch ===//
//
// A linear least-squares fit trained 3 steps here with SGD (momentum),
// Adam or AdamW and a StepLR; optim::save writes the optimizer and
// scheduler to a .pt file, weights::writePt the parameters and data.
// scripts/torch_checkpoint.py loads both into PyTorch 1.13's own
// optimizer and scheduler (load_state_dict), trains 3 more steps, saves a
// checkpoint as a PyTorch script would ({'model', 'optimizer',
// 'scheduler'}) and trains 2 more. Here the same 3 steps must give
// PyTorch's parameters, and optim::load of PyTorch's checkpoint, then 2
// steps, PyTorch's final parameters and learning rate. SKIPPED without a
// Python that can import torch.
//
//===----------------------------------------------------------------------===//

#include "common/Subprocess.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/optim/Optim.h"
#include "nngraph/frontend/optim/TorchFormat.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/weights/TensorMap.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <unistd.h>

using namespace nng;
using namespace nng::optim;
namespace fs = std::filesystem;

namespace {

/// A fresh folder for one test's files.
fs::path scratch(const std::string &Name) {
  fs::path P = fs::temp_directory_path() /
               ("nng-torch-ckpt-" + Name + "-" + std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P;
}

/// Deterministic f32 values in [-1, 1).
rt::Tensor values(Shape S, int Seed) {
  rt::Tensor T = rt::Tensor::empty(S, DType::F32);
  float *P = T.data<float>();
  for (int64_t I = 0; I < T.numel(); ++I)
    P[I] = static_cast<float>(((I * 37 + Seed * 101) % 200) / 100.0 - 1.0);
  return T;
}

std::unique_ptr<Optimizer> makeOptimizer(const std::string &Kind,
                                         std::vector<Tensor> Params) {
  if (Kind == "sgd")
    return std::make_unique<SGD>(Params, SGDOptions{.lr = 0.1, .momentum = 0.9});
  if (Kind == "adam")
    return std::make_unique<Adam>(Params, AdamOptions{.lr = 0.01});
  return std::make_unique<AdamW>(
      Params, AdamWOptions{.lr = 0.01, .weight_decay = 0.1});
}

/// One training step of mean((x @ w + b - y)^2).
void step(Optimizer &Opt, LRScheduler &Sched, const Tensor &W, const Tensor &B,
          const Tensor &X, const Tensor &Y) {
  Opt.zero_grad();
  Tensor Loss = pow(matmul(X, W) + B - Y, 2.0).mean();
  Loss.backward();
  Opt.step();
  Sched.step();
}

void expectClose(const Tensor &Got, const rt::Tensor &Want,
                 const std::string &What) {
  const rt::Tensor &G = Got.data();
  ASSERT_EQ(G.shape(), Want.shape()) << What;
  for (int64_t I = 0; I < Want.numel(); ++I)
    EXPECT_NEAR(G.getFlat(I), Want.getFlat(I), 1e-5) << What << " element " << I;
}

const rt::Tensor &entry(const weights::Object &O, const std::string &Key) {
  const weights::Object *E = O.find(Key);
  if (!E)
    throw std::runtime_error("no '" + Key + "' in " + O.summary(1));
  return E->toTensor();
}

void roundTrip(const std::string &Kind) {
  fs::path Dir = scratch(Kind);
  rt::Tensor W0 = values({4, 3}, 1), B0 = values({3}, 2);
  Tensor X(values({8, 4}, 3)), Y(values({8, 3}, 4));
  Tensor W(W0.clone(), true), B(B0.clone(), true);
  std::unique_ptr<Optimizer> Opt = makeOptimizer(Kind, {W, B});
  StepLR Sched(*Opt, /*step_size=*/2, /*gamma=*/0.5);
  for (int I = 0; I < 3; ++I)
    step(*Opt, Sched, W, B, X, Y);

  // The checkpoint: parameters and data as a state dict, the optimizer and
  // scheduler through optim::save.
  weights::writePt(
      (Dir / "model.pt").string(),
      weights::Object::dict(
          {{weights::Object::string("w"), weights::Object::tensor(W.data())},
           {weights::Object::string("b"), weights::Object::tensor(B.data())},
           {weights::Object::string("x"), weights::Object::tensor(X.data())},
           {weights::Object::string("y"), weights::Object::tensor(Y.data())}}));
  save(*Opt, Dir / "opt.pt", &Sched);
  for (int I = 0; I < 3; ++I)
    step(*Opt, Sched, W, B, X, Y);

  // The first Python that can import torch resumes the training.
  std::string Output, Why;
  int Status = -1;
  for (const std::string &Py : nng::test::pythonCandidates()) {
    Output.clear();
    Status = nng::test::runCommand(
        nng::test::shellQuote(Py) + " " +
            nng::test::shellQuote(std::string(NNGRAPH_SOURCE_DIR) +
                                  "/tests/optim/scripts/torch_checkpoint.py") +
            " " + Kind + " " + nng::test::shellQuote(Dir.string()),
        Output);
    if (Status == 0)
      break;
    Why += Py + ": " + Output;
    if (Status != nng::test::OracleSkipStatus && Status != 127)
      break; // A real failure, not a missing torch.
  }
  if (Status == nng::test::OracleSkipStatus || Status == 127)
    GTEST_SKIP() << "SKIPPED: no Python with torch: " << Why;
  ASSERT_EQ(Status, 0) << "torch_checkpoint.py failed:\n" << Why;

  // PyTorch resumed from our checkpoint: the same parameters.
  weights::Object Mid = weights::readPt((Dir / "mid.pt").string());
  const weights::Object *Model = Mid.find("model");
  ASSERT_TRUE(Model) << Mid.summary(1);
  expectClose(W, entry(*Model, "w"), "w after 3 steps in each");
  expectClose(B, entry(*Model, "b"), "b after 3 steps in each");

  // We resume from PyTorch's checkpoint.
  Tensor W2(entry(*Model, "w").clone(), true), B2(entry(*Model, "b").clone(), true);
  std::unique_ptr<Optimizer> Opt2 = makeOptimizer(Kind, {W2, B2});
  StepLR Sched2(*Opt2, 2, 0.5);
  load(*Opt2, Dir / "mid.pt", &Sched2);
  for (int I = 0; I < 2; ++I)
    step(*Opt2, Sched2, W2, B2, X, Y);
  weights::Object Final = weights::readPt((Dir / "final.pt").string());
  expectClose(W2, entry(Final, "w"), "w after resuming from torch");
  expectClose(B2, entry(Final, "b"), "b after resuming from torch");
  const rt::Tensor &Lr = entry(Final, "lr");
  ASSERT_EQ(Sched2.get_last_lr().size(), 1u);
  EXPECT_DOUBLE_EQ(Sched2.get_last_lr()[0], Lr.getFlat(0));
  fs::remove_all(Dir);
}

TEST(TorchCheckpoint, SGDMomentumResumesBothWays) { roundTrip("sgd"); }
TEST(TorchCheckpoint, AdamResumesBothWays) { roundTrip("adam"); }
TEST(TorchCheckpoint, AdamWResumesBothWays) { roundTrip("adamw"); }

TEST(TorchCheckpoint, ObjectsHaveTorchsStructure) {
  Tensor W(values({2, 2}, 5), true);
  Adam Opt({W}, {.lr = 0.01});
  W.set_grad(Tensor(values({2, 2}, 6)));
  Opt.step();
  weights::Object O = to_object(Opt.state_dict());
  ASSERT_TRUE(O.find("state") && O.find("param_groups")) << O.summary(3);
  const weights::Object &G = O.find("param_groups")->elements().at(0);
  EXPECT_EQ(G.find("betas")->kind(), weights::Object::Kind::Tuple);
  EXPECT_EQ(G.entries().back().first.toStringRef(), "params");
  const weights::Object &S = O.find("state")->entries().at(0).second;
  EXPECT_EQ(O.find("state")->entries().at(0).first.toInt(), 0);
  EXPECT_EQ(S.find("step")->toTensor().rank(), 0u);
  // Back: equal to the optimizer's own.
  OptimizerStateDict Back = optimizer_state_dict_from_object(O, "test");
  EXPECT_EQ(Back.param_groups.at(0).options, Opt.state_dict().param_groups.at(0).options);
  StepLR Sched(Opt, 2, 0.5);
  weights::Object SO = to_object(Sched.state_dict());
  EXPECT_EQ(SO.find("base_lrs")->kind(), weights::Object::Kind::List);
  EXPECT_EQ(scheduler_state_dict_from_object(SO, "test"), Sched.state_dict());
}

TEST(TorchCheckpoint, DocsExampleWritesOneCheckpoint) {
  // docs/optim.md's model + optimizer + scheduler + epoch + RNG checkpoint.
  fs::path Dir = scratch("docs");
  std::string Path = (Dir / "ckpt.pt").string();
  nn::Linear Model(4, 2);
  Adam Opt(Model.parameters(), {.lr = 0.01});
  StepLR Sched(Opt, 2, 0.5);
  Tensor X(values({3, 4}, 9));
  Opt.zero_grad();
  Model(X).sum().backward();
  Opt.step();
  Sched.step();
  int64_t Epoch = 1;
  using weights::Object;
  weights::writePt(Path, Object::dict({
      {Object::string("model"),
       weights::toObject(weights::fromStateDict(Model.state_dict()))},
      {Object::string("optimizer"), optim::to_object(Opt.state_dict())},
      {Object::string("scheduler"), optim::to_object(Sched.state_dict())},
      {Object::string("epoch"), Object::integer(Epoch)},
      {Object::string("rng_state"), Object::tensor(get_rng_state().data())}}));
  // Read back: the model's tensors, and optim::load finds its entries.
  weights::Object O = weights::readPt(Path);
  EXPECT_TRUE(entry(*O.find("model"), "weight").equals(Model.weight.data()));
  EXPECT_EQ(O.find("epoch")->toInt(), 1);
  nn::Linear Model2(4, 2);
  Adam Opt2(Model2.parameters(), {.lr = 0.5});
  StepLR Sched2(Opt2, 2, 0.5);
  load(Opt2, Path, &Sched2);
  EXPECT_EQ(Opt2.state_dict().param_groups.at(0).options,
            Opt.state_dict().param_groups.at(0).options);
  EXPECT_EQ(Sched2.state_dict(), Sched.state_dict());
  fs::remove_all(Dir);
}

TEST(TorchCheckpoint, NotAnOptimizerStateIsAnError) {
  fs::path Dir = scratch("bad");
  weights::writePt((Dir / "w.pt").string(),
                   weights::Object::dict({{weights::Object::string("w"),
                                           weights::Object::tensor(values({2}, 1))}}));
  Tensor W(values({2}, 2), true);
  SGD Opt({W}, {.lr = 0.1});
  try {
    load(Opt, Dir / "w.pt");
    FAIL() << "loading a plain state dict should fail";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("neither an optimizer state_dict"),
              std::string::npos)
        << E.what();
  }
  // A .pt with the optimizer's state alone cannot restore a scheduler.
  save(Opt, Dir / "opt.pt");
  StepLR Sched(Opt, 2, 0.5);
  try {
    load(Opt, Dir / "opt.pt", &Sched);
    FAIL() << "loading a scheduler from an optimizer-only file should fail";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("no scheduler state"),
              std::string::npos)
        << E.what();
  }
  fs::remove_all(Dir);
}

} // namespace
