//===- LRSchedulerTest.cpp - StepLR and CosineAnnealingLR -----------------===//
//
// Hand-checked schedules, PyTorch oracle runs of 30 epochs (two groups,
// lr changed by other code mid-way so the recursive form differs from the
// closed form, resuming with last_epoch), state_dict contents and round
// trip, and the errors of bad arguments.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/LRScheduler.h"
#include "OptimTestUtils.h"
#include "OracleCase.h"
#include "nngraph/frontend/optim/SGD.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <numbers>

using namespace nng;
using namespace nng::optim;
using nng::optim::test::OracleCase;
using nng::test::errorOf;

namespace {

Tensor param() {
  return Tensor(rt::Tensor::fromVector<float>({0, 0}, Shape{2}), true);
}

/// An SGD with one group per lr.
std::unique_ptr<SGD> makeSGD(const std::vector<double> &Lrs,
                             std::vector<Tensor> &Keep, bool Resume = false) {
  std::vector<ParamGroup> Groups;
  for (double Lr : Lrs) {
    Keep.push_back(param());
    OptionDict O{{"lr", Lr}};
    if (Resume)
      O.set("initial_lr", Lr);
    Groups.emplace_back(std::vector<Tensor>{Keep.back()}, O);
  }
  return std::make_unique<SGD>(std::move(Groups), SGDOptions{.lr = Lrs[0]});
}

/// Runs 30 epochs like the oracle (External[epoch][group] = lr set by
/// other code before that epoch's step) and compares every epoch's lr
/// exactly, then both state_dicts.
void compareSchedule(LRScheduler &S, SGD &Opt, const OracleCase &C,
                     const std::map<int, std::map<int, double>> &External) {
  ASSERT_EQ(C.Lrs.size(), 31u);
  EXPECT_EQ(S.get_last_lr(), C.Lrs[0]) << "after construction";
  for (int Epoch = 1; Epoch <= 30; ++Epoch) {
    if (auto It = External.find(Epoch); It != External.end())
      for (const auto &[G, Lr] : It->second)
        Opt.param_groups()[G].set_lr(Lr);
    Opt.step();
    S.step();
    // The formulas are transcribed term by term: equal to the last bit.
    EXPECT_EQ(S.get_last_lr(), C.Lrs[Epoch]) << "epoch " << Epoch;
  }
  optim::test::expectSameOptions(S.state_dict(), C.Scheduler,
                                 "scheduler state_dict");
  optim::test::expectStateDict(Opt.state_dict(), C);
}

} // namespace

TEST(LRSchedulerTest, StepLRByHand) {
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({1.0}, Keep);
  StepLR S(*Opt, /*step_size=*/2, /*gamma=*/0.5);
  EXPECT_EQ(S.last_epoch(), 0);
  EXPECT_EQ(S.get_last_lr(), std::vector<double>{1.0});
  std::vector<double> Want = {1.0, 0.5, 0.5, 0.25, 0.25, 0.125};
  for (double W : Want) {
    S.step();
    EXPECT_EQ(S.get_last_lr()[0], W);
    EXPECT_EQ(Opt->param_groups()[0].lr(), W);
  }
  EXPECT_EQ(S.last_epoch(), 6);
  // The scheduler recorded initial_lr in the group, as PyTorch does.
  EXPECT_EQ(Opt->param_groups()[0].options.number("initial_lr"), 1.0);
}

TEST(LRSchedulerTest, CosineByHandMatchesClosedFormWithoutInterference) {
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1}, Keep);
  CosineAnnealingLR S(*Opt, /*T_max=*/4, /*eta_min=*/0.01);
  for (int E = 1; E <= 4; ++E) {
    S.step();
    double Closed =
        0.01 + (0.1 - 0.01) * (1 + std::cos(std::numbers::pi * E / 4)) / 2;
    EXPECT_NEAR(S.get_last_lr()[0], Closed, 1e-15) << "epoch " << E;
  }
  EXPECT_NEAR(S.get_last_lr()[0], 0.01, 1e-15); // eta_min at T_max.
}

TEST(LRSchedulerTest, StateDictRoundTrip) {
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1, 0.2}, Keep);
  CosineAnnealingLR S(*Opt, 10, 0.001);
  for (int I = 0; I < 3; ++I)
    S.step();
  SchedulerStateDict SD = S.state_dict();
  std::vector<std::string> Keys;
  for (const auto &E : SD)
    Keys.push_back(E.first);
  EXPECT_EQ(Keys,
            (std::vector<std::string>{
                "T_max", "eta_min", "base_lrs", "last_epoch", "verbose",
                "_step_count", "_get_lr_called_within_step", "_last_lr"}));
  EXPECT_EQ(SD.at("last_epoch").to_int(), 3);
  EXPECT_EQ(SD.at("_step_count").to_int(), 4);

  std::vector<Tensor> Keep2;
  auto Opt2 = makeSGD({0.1, 0.2}, Keep2);
  CosineAnnealingLR S2(*Opt2, 5, 0.0);
  S2.load_state_dict(SD);
  Opt2->load_state_dict(Opt->state_dict());
  EXPECT_EQ(S2.state_dict(), SD);
  for (int I = 0; I < 5; ++I) {
    S.step();
    S2.step();
    EXPECT_EQ(S.get_last_lr(), S2.get_last_lr());
  }
}

TEST(LRSchedulerTest, BadArgumentsAndStateDicts) {
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1}, Keep);
  EXPECT_NE(errorOf([&] { StepLR(*Opt, 0); }).find("step_size is 0"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { CosineAnnealingLR(*Opt, 0); }).find("T_max is 0"),
            std::string::npos);
  std::string E = errorOf([&] { StepLR(*Opt, 3, 0.1, /*last_epoch=*/5); });
  EXPECT_NE(E.find("param 'initial_lr' is not specified in "
                   "param_groups[0] when resuming"),
            std::string::npos)
      << E;

  StepLR S(*Opt, 3);
  SchedulerStateDict Good = S.state_dict();
  SchedulerStateDict NoEpoch;
  for (const auto &[K, V] : Good)
    if (K != "last_epoch")
      NoEpoch.set(K, V);
  E = errorOf([&] { S.load_state_dict(NoEpoch); });
  EXPECT_NE(E.find("no 'last_epoch'"), std::string::npos) << E;
  SchedulerStateDict TwoLrs = Good;
  TwoLrs.set("base_lrs", std::vector<double>{0.1, 0.2});
  E = errorOf([&] { S.load_state_dict(TwoLrs); });
  EXPECT_NE(E.find("one lr per param group"), std::string::npos) << E;
  SchedulerStateDict BadStep = Good;
  BadStep.set("step_size", 0.5);
  E = errorOf([&] { S.load_state_dict(BadStep); });
  EXPECT_NE(E.find("step_size"), std::string::npos) << E;
  EXPECT_EQ(S.state_dict(), Good); // Unchanged by the failed loads.
}

TEST(LRSchedulerOracleTest, StepLRTwoGroups) {
  NNG_ORACLE_OR_SKIP(C, "steplr");
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1, 0.05}, Keep);
  StepLR S(*Opt, 7, 0.5);
  compareSchedule(S, *Opt, C, {});
}

TEST(LRSchedulerOracleTest, StepLRWithLrChangedByOtherCode) {
  NNG_ORACLE_OR_SKIP(C, "steplr_external");
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1}, Keep);
  StepLR S(*Opt, 3, 0.9);
  compareSchedule(S, *Opt, C, {{10, {{0, 0.2}}}});
}

TEST(LRSchedulerOracleTest, CosineTwoGroupsPastTMax) {
  NNG_ORACLE_OR_SKIP(C, "cosine");
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1, 0.05}, Keep);
  CosineAnnealingLR S(*Opt, 10, 0.001);
  compareSchedule(S, *Opt, C, {});
}

TEST(LRSchedulerOracleTest, CosineRecursiveFormWithLrChangedByOtherCode) {
  NNG_ORACLE_OR_SKIP(C, "cosine_external");
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1}, Keep);
  CosineAnnealingLR S(*Opt, 7, 0.0);
  compareSchedule(S, *Opt, C, {{5, {{0, 0.02}}}, {17, {{0, 0.3}}}});
}

TEST(LRSchedulerOracleTest, CosineResumedAtLastEpoch4) {
  NNG_ORACLE_OR_SKIP(C, "cosine_resume");
  std::vector<Tensor> Keep;
  auto Opt = makeSGD({0.1}, Keep, /*Resume=*/true);
  CosineAnnealingLR S(*Opt, 10, 0.0, /*last_epoch=*/4);
  compareSchedule(S, *Opt, C, {});
}
