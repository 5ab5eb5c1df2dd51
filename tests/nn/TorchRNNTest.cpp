//===- TorchRNNTest.cpp - RNN, LSTM and GRU against PyTorch ---------------===//
//
// nn::RNN, LSTM and GRU in the configurations PyTorch 1.13 offers
// (layers, bidirectional, batch_first, relu, no bias, proj_size, given
// initial states, an unbatched input) against torch.nn's through
// TorchOracle.h: torch loads the C++ layer's state_dict (keys and order
// must be PyTorch's), both run forward and backward, and the outputs,
// final states, input and parameter gradients and print(layer) must agree
// (atol/rtol 1e-5); one LSTM also takes SGD steps. Plus the errors for bad
// arguments and shapes. SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;

namespace {

/// A case for an RNN or GRU (Torch builds it) on input X, with an initial
/// state H0 when defined.
template <typename M>
OracleCase rnnCase(const std::string &Torch, std::shared_ptr<M> Mod, Tensor X,
                   Tensor H0 = Tensor()) {
  OracleCase C;
  C.Name = Torch + " on " + X.shape().toString();
  C.Module = Mod;
  C.TorchModule = Torch;
  C.Inputs = {X};
  if (H0.defined())
    C.Inputs.push_back(H0);
  C.Forward = [Mod](const std::vector<Tensor> &In) {
    auto [Out, H] = In.size() > 1 ? (*Mod)(In[0], In[1]) : (*Mod)(In[0]);
    return std::vector<Tensor>{Out, H};
  };
  return C;
}

/// An LSTM case; with states, torch gets them as the (h_0, c_0) tuple.
OracleCase lstmCase(const std::string &Torch, std::shared_ptr<nn::LSTM> Mod,
                    Tensor X, Tensor H0 = Tensor(), Tensor C0 = Tensor()) {
  OracleCase C;
  C.Name = Torch + " on " + X.shape().toString();
  C.Module = Mod;
  C.TorchModule = Torch;
  C.Inputs = {X};
  if (H0.defined()) {
    C.Inputs.push_back(H0);
    C.Inputs.push_back(C0);
    C.TorchCall = "m(x[0], (x[1], x[2]))";
  }
  C.Forward = [Mod](const std::vector<Tensor> &In) {
    auto [Out, State] =
        In.size() > 1 ? (*Mod)(In[0], std::make_optional(std::make_pair(In[1], In[2])))
                      : (*Mod)(In[0]);
    return std::vector<Tensor>{Out, State.first, State.second};
  };
  return C;
}

} // namespace

TEST(TorchRNN, RNN) {
  manual_seed(1);
  TorchOracle O;
  O.add(rnnCase("nn.RNN(4, 5)", nn::make<nn::RNN>(4, 5), randn({6, 3, 4})));
  O.add(rnnCase("nn.RNN(4, 5, num_layers=2, nonlinearity='relu', "
                "bidirectional=True, batch_first=True)",
                nn::make<nn::RNN>(4, 5,
                                  nn::RNNOptions{.num_layers = 2,
                                                 .nonlinearity = "relu",
                                                 .batch_first = true,
                                                 .bidirectional = true}),
                randn({3, 7, 4}), randn({4, 3, 5})));
  O.add(rnnCase("nn.RNN(4, 5, bias=False)",
                nn::make<nn::RNN>(4, 5, nn::RNNOptions{.bias = false}),
                randn({6, 4}), randn({1, 5})));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchRNN, LSTM) {
  manual_seed(2);
  TorchOracle O;
  O.add(lstmCase("nn.LSTM(4, 6)", nn::make<nn::LSTM>(4, 6), randn({5, 2, 4})));
  O.add(lstmCase("nn.LSTM(4, 6, num_layers=2, bidirectional=True, "
                 "batch_first=True)",
                 nn::make<nn::LSTM>(4, 6,
                                    nn::RNNOptions{.num_layers = 2,
                                                   .batch_first = true,
                                                   .bidirectional = true}),
                 randn({2, 5, 4}), randn({4, 2, 6}), randn({4, 2, 6})));
  O.add(lstmCase("nn.LSTM(4, 6, num_layers=2, proj_size=3)",
                 nn::make<nn::LSTM>(
                     4, 6, nn::RNNOptions{.num_layers = 2, .proj_size = 3}),
                 randn({5, 3, 4})));
  O.add(lstmCase("nn.LSTM(4, 6, bidirectional=True, proj_size=2, bias=False)",
                 nn::make<nn::LSTM>(4, 6,
                                    nn::RNNOptions{.bias = false,
                                                   .bidirectional = true,
                                                   .proj_size = 2}),
                 randn({4, 4}), randn({2, 2}), randn({2, 6})));
  // Training: three SGD steps through the recurrence.
  OracleCase Train = lstmCase("nn.LSTM(3, 4, num_layers=2)",
                              nn::make<nn::LSTM>(3, 4, nn::RNNOptions{.num_layers = 2}),
                              randn({6, 2, 3}));
  Train.Train = true;
  Train.Sgd = OracleSgd{};
  Train.Steps = 3;
  O.add(Train);
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchRNN, GRU) {
  manual_seed(3);
  TorchOracle O;
  O.add(rnnCase("nn.GRU(4, 5)", nn::make<nn::GRU>(4, 5), randn({5, 2, 4})));
  O.add(rnnCase("nn.GRU(4, 5, num_layers=3, bidirectional=True)",
                nn::make<nn::GRU>(4, 5,
                                  nn::RNNOptions{.num_layers = 3,
                                                 .bidirectional = true}),
                randn({4, 3, 4}), randn({6, 3, 5})));
  O.add(rnnCase("nn.GRU(4, 5, batch_first=True, bias=False)",
                nn::make<nn::GRU>(4, 5,
                                  nn::RNNOptions{.bias = false,
                                                 .batch_first = true}),
                randn({2, 6, 4})));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(RNNErrors, BadArgumentsAndShapesSayWhat) {
  auto Says = [](const std::function<void()> &Fn, const std::string &Part) {
    try {
      Fn();
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find(Part), std::string::npos) << E.what();
      return;
    }
    ADD_FAILURE() << "no error; expected one mentioning " << Part;
  };
  Says([] { nn::RNN(4, 5, nn::RNNOptions{.nonlinearity = "sigmoid"}); },
       "nonlinearity");
  Says([] { nn::GRU(4, 5, nn::RNNOptions{.proj_size = 2}); }, "proj_size");
  Says([] { nn::LSTM(4, 5, nn::RNNOptions{.proj_size = 5}); }, "proj_size");
  Says([] { nn::LSTM(4, 0); }, "hidden_size");
  Says([] { nn::LSTM(4, 5, nn::RNNOptions{.dropout = 1.5}); }, "dropout");
  nn::LSTM L(4, 5, nn::RNNOptions{.num_layers = 2});
  Says([&] { L(randn({3, 2, 3})); }, "input_size=4");
  Says([&] { L(randn({3, 4, 2, 1})); }, "2 (unbatched) or 3");
  Says([&] {
    L(randn({3, 2, 4}), std::make_optional(std::make_pair(randn({1, 2, 5}),
                                                          randn({2, 2, 5}))));
  }, "h_0");
}

TEST(RNNErrors, StateDictKeysArePyTorchs) {
  nn::LSTM L(3, 4, nn::RNNOptions{.num_layers = 2, .bidirectional = true,
                                  .proj_size = 2});
  std::vector<std::string> Keys;
  for (const auto &[K, V] : L.named_parameters())
    Keys.push_back(K);
  std::vector<std::string> Want;
  for (const char *L : {"l0", "l0_reverse", "l1", "l1_reverse"})
    for (const char *P : {"weight_ih_", "weight_hh_", "bias_ih_", "bias_hh_",
                          "weight_hr_"})
      Want.push_back(std::string(P) + L);
  EXPECT_EQ(Keys, Want);
  EXPECT_EQ(L.get_parameter("weight_ih_l1").shape(), Shape({16, 4}));
  EXPECT_EQ(L.get_parameter("weight_hr_l0_reverse").shape(), Shape({2, 4}));
}
