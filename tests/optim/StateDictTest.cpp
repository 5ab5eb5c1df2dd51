//===- StateDictTest.cpp - Optimizer state_dict and load_state_dict -------===//
//
// The structure of state_dict() (parameters numbered across groups, only
// stepped parameters in "state", options per group), the round trip
// (a fresh optimizer loaded from a state_dict continues exactly like the
// original), dtype casting of loaded state, and every load error
// (group count, group size, shape, unknown index, missing option, bad
// option value, wrong state kind) leaving the optimizer unchanged.
//
//===----------------------------------------------------------------------===//

#include "OptimTestUtils.h"
#include "nngraph/frontend/optim/Adam.h"
#include "nngraph/frontend/optim/SGD.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::optim;
using nng::test::vec;
using nng::test::errorOf;

namespace {

Tensor copyOf(const Tensor &T) { return Tensor(T.data().clone(), true); }

/// A deep copy of SD's tensors (state_dict shares them, like PyTorch's).
OptimizerStateDict snapshot(const OptimizerStateDict &SD) {
  OptimizerStateDict C = SD;
  for (auto &[I, S] : C.state)
    for (auto &[K, V] : S)
      if (Tensor *T = std::get_if<Tensor>(&V))
        *T = Tensor(T->data().clone());
  return C;
}

/// True when A and B hold the same groups and the same state values.
bool sameStateDict(const OptimizerStateDict &A, const OptimizerStateDict &B) {
  if (A.param_groups.size() != B.param_groups.size() ||
      A.state.size() != B.state.size())
    return false;
  for (size_t G = 0; G < A.param_groups.size(); ++G)
    if (!(A.param_groups[G].options == B.param_groups[G].options) ||
        A.param_groups[G].params != B.param_groups[G].params)
      return false;
  for (const auto &[I, S] : A.state) {
    auto It = B.state.find(I);
    if (It == B.state.end() || It->second.size() != S.size())
      return false;
    for (const auto &[K, V] : S) {
      const StateValue &W = It->second.at(K);
      if (V.index() != W.index())
        return false;
      if (const Tensor *T = std::get_if<Tensor>(&V)) {
        if (!T->data().equals(std::get<Tensor>(W).data()))
          return false;
      } else if (const double *D = std::get_if<double>(&V)) {
        if (*D != std::get<double>(W))
          return false;
      }
    }
  }
  return true;
}

void setGrads(std::vector<Tensor> &Ps, float Scale) {
  for (size_t I = 0; I < Ps.size(); ++I) {
    std::vector<double> V = Ps[I].to_vector<double>();
    std::vector<float> G;
    for (size_t J = 0; J < V.size(); ++J)
      G.push_back(Scale * static_cast<float>(J + 1) * (I % 2 ? -1.f : 1.f) +
                  0.1f * static_cast<float>(V[J]));
    Ps[I].set_grad(vec(G, false));
  }
}

} // namespace

TEST(StateDictTest, StructureLikePyTorch) {
  Tensor A = vec({1, 2}), B = vec({3}), C = vec({4, 5, 6});
  SGD Opt({ParamGroup({A, B}), ParamGroup({C}, {{"lr", 0.01}})},
          {.lr = 0.1, .momentum = 0.9});
  B.set_grad(vec({1}, false));
  C.set_grad(vec({1, 1, 1}, false));
  Opt.step();
  OptimizerStateDict SD = Opt.state_dict();
  ASSERT_EQ(SD.param_groups.size(), 2u);
  EXPECT_EQ(SD.param_groups[0].params, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(SD.param_groups[1].params, (std::vector<int64_t>{2}));
  EXPECT_EQ(SD.param_groups[1].options.number("lr"), 0.01);
  // A was never stepped: no state for index 0.
  ASSERT_EQ(SD.state.size(), 2u);
  EXPECT_EQ(SD.state.count(0), 0u);
  EXPECT_TRUE(
      std::holds_alternative<Tensor>(SD.state.at(1).at("momentum_buffer")));
  // Like PyTorch, the state tensors are the live ones.
  EXPECT_TRUE(std::get<Tensor>(SD.state.at(2).at("momentum_buffer"))
                  .is_same(stateTensor(Opt.state(C), "momentum_buffer")));
}

TEST(StateDictTest, RoundTripContinuesIdentically) {
  std::vector<Tensor> P1 = {vec({1, 2, 3}), vec({-1, 0.5})};
  Adam Opt1({ParamGroup({P1[0]}), ParamGroup({P1[1]}, {{"lr", 0.05}})},
            {.lr = 0.01, .amsgrad = true});
  for (int S = 0; S < 3; ++S) {
    setGrads(P1, 1.0f + S);
    Opt1.step();
  }
  std::vector<Tensor> P2 = {copyOf(P1[0]), copyOf(P1[1])};
  Adam Opt2({ParamGroup({P2[0]}), ParamGroup({P2[1]})}, {.lr = 0.5});
  Opt2.load_state_dict(snapshot(Opt1.state_dict()));
  EXPECT_EQ(Opt2.param_groups()[1].lr(), 0.05); // Options come along.
  EXPECT_TRUE(sameStateDict(Opt1.state_dict(), Opt2.state_dict()));
  for (int S = 0; S < 3; ++S) {
    setGrads(P1, 0.5f - S);
    setGrads(P2, 0.5f - S);
    Opt1.step();
    Opt2.step();
  }
  for (size_t I = 0; I < P1.size(); ++I)
    EXPECT_TRUE(P1[I].data().equals(P2[I].data())) << "parameter " << I;
  // The loaded state is a copy: stepping Opt2 did not touch Opt1's.
  EXPECT_FALSE(stateTensor(Opt1.state(P1[0]), "exp_avg")
                   .is_same(stateTensor(Opt2.state(P2[0]), "exp_avg")));
}

TEST(StateDictTest, LoadedStateIsCastToTheParameterDtype) {
  Tensor P = vec({1, 2});
  SGD Opt({P}, {.lr = 0.1, .momentum = 0.9});
  OptimizerStateDict SD = Opt.state_dict();
  SD.state[0]["momentum_buffer"] =
      Tensor(rt::Tensor::fromVector<double>({0.5, 0.25}, Shape{2}));
  Opt.load_state_dict(SD);
  Tensor Buf = stateTensor(Opt.state(P), "momentum_buffer");
  EXPECT_EQ(Buf.dtype(), DType::F32);
  EXPECT_EQ(Buf.to_vector<double>(), (std::vector<double>{0.5, 0.25}));
  // A number step from an old PyTorch becomes a tensor in Adam.
  Adam A({P});
  OptimizerStateDict ASD = A.state_dict();
  ASD.state[0] = {
      {"step", 3.0},
      {"exp_avg", Tensor(rt::Tensor::fromVector<float>({0, 0}, Shape{2}))},
      {"exp_avg_sq", Tensor(rt::Tensor::fromVector<float>({0, 0}, Shape{2}))}};
  A.load_state_dict(ASD);
  Tensor Step = stateTensor(A.state(P), "step");
  ASSERT_TRUE(Step.defined());
  EXPECT_EQ(Step.item<double>(), 3.0);
}

TEST(StateDictTest, LoadErrorsLeaveTheOptimizerUnchanged) {
  Tensor A = vec({1, 2}), B = vec({3});
  Adam Opt({ParamGroup({A}), ParamGroup({B})}, {.lr = 0.01});
  A.set_grad(vec({1, 1}, false));
  B.set_grad(vec({1}, false));
  Opt.step();
  const OptimizerStateDict Before = snapshot(Opt.state_dict());

  auto expectError = [&](const OptimizerStateDict &Bad, const char *Want) {
    std::string E = errorOf([&] { Opt.load_state_dict(Bad); });
    EXPECT_NE(E.find(Want), std::string::npos) << "got: " << E;
    EXPECT_TRUE(sameStateDict(Opt.state_dict(), Before)) << Want;
  };
  OptimizerStateDict Bad = Before;
  Bad.param_groups.pop_back();
  expectError(Bad,
              "the state dict has 1 parameter groups, the optimizer has 2");
  Bad = Before;
  Bad.param_groups[1].params.push_back(7);
  expectError(Bad, "param group 1 of the state dict has 2 parameters");
  Bad = Before;
  Bad.state[0]["exp_avg"] = vec({1, 2, 3}, false);
  expectError(Bad, "state 'exp_avg' of parameter 0 has shape [3]");
  Bad = Before;
  Bad.state[5] = Bad.state[0];
  expectError(Bad, "state for parameter index 5");
  Bad = Before;
  Bad.param_groups[1].options = {{"lr", 0.1}};
  expectError(Bad, "lacks option 'betas'");
  Bad = Before;
  Bad.param_groups[0].options.set("lr", -5.0);
  expectError(Bad, "Invalid learning rate");
  Bad = Before;
  Bad.state[1].erase("exp_avg_sq");
  expectError(Bad, "no tensor 'exp_avg_sq'");
  // A second group changed before the error must not leak either: group 0
  // fine, group 1 bad.
  Bad = Before;
  Bad.param_groups[0].options.set("lr", 0.5);
  Bad.param_groups[1].options.set("eps", -1.0);
  expectError(Bad, "Invalid epsilon value");
  EXPECT_EQ(Opt.param_groups()[0].lr(), 0.01);
}

TEST(StateDictTest, SGDStateOfAnotherOptimizerIsRefused) {
  Tensor P = vec({1});
  SGD S({P}, {.lr = 0.1});
  Adam A({P});
  std::string E = errorOf([&] { S.load_state_dict(A.state_dict()); });
  EXPECT_NE(E.find("lacks option 'momentum'"), std::string::npos) << E;
}
