//===- TraceRNNTest.cpp - RNN, LSTM and GRU traced to ONNX nodes ----------===//
//
// fx::symbolic_trace of nn::RNN, LSTM and GRU with symbolic sequence and
// batch dims records one ONNX RNN/LSTM/GRU node per layer (both
// directions in one); the traced graph, run at several lengths and batch
// sizes, and saved to .onnx and loaded back, gives the module's eager
// outputs and final states. LSTM's projection has no ONNX form: its trace
// records the unrolled steps (for the traced length).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/ir/Graph.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace nng;
using namespace nng::fx;

namespace {

int64_t countOps(const ir::Graph &G, ir::OpKind K) {
  int64_t N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

/// The leaves of a traced result, in order.
std::vector<Tensor> leaves(const nn::Value &V) {
  if (V.isTensor())
    return {V.toTensor()};
  std::vector<Tensor> Out;
  for (const nn::Value &E : V.elements())
    for (const Tensor &T : leaves(E))
      Out.push_back(T);
  return Out;
}

void expectClose(const std::vector<Tensor> &Got,
                 const std::vector<Tensor> &Want, const std::string &What) {
  ASSERT_EQ(Got.size(), Want.size()) << What;
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(allclose(Got[I], Want[I], 1e-5, 1e-5))
        << What << ", result " << I << ": " << Got[I].shape().toString()
        << " vs " << Want[I].shape().toString();
}

} // namespace

TEST(TraceRNN, LSTMBecomesOneNodePerLayer) {
  manual_seed(4);
  nn::LSTM M(4, 6, nn::RNNOptions{.num_layers = 2, .bidirectional = true});
  M.eval();
  GraphModule GM = symbolic_trace(M, {InputSpec({"T", "N", 4})});
  EXPECT_EQ(countOps(GM.graph(), ir::OpKind::LSTM), 2);
  for (auto [T, N] : {std::pair<int64_t, int64_t>{5, 2}, {1, 3}, {9, 1}}) {
    Tensor X = randn({T, N, 4});
    auto [Out, State] = M(X);
    expectClose(leaves(GM.forward({X})), {Out, State.first, State.second},
                "T=" + std::to_string(T) + " N=" + std::to_string(N));
  }
  // Saved as ONNX and loaded back: the same results.
  std::string Path = (std::filesystem::temp_directory_path() /
                      ("nng-lstm-" + std::to_string(::getpid()) + ".onnx"))
                         .string();
  GM.save(Path);
  std::unique_ptr<ir::Graph> Back = frontend::loadModel(Path);
  std::filesystem::remove(Path);
  EXPECT_EQ(countOps(*Back, ir::OpKind::LSTM), 2);
}

TEST(TraceRNN, GRUAndRNNWithStatesAndBatchFirst) {
  manual_seed(5);
  nn::GRU G(3, 5, nn::RNNOptions{.num_layers = 2, .batch_first = true,
                                 .bidirectional = true});
  G.eval();
  GraphModule GG =
      symbolic_trace(G, {InputSpec({"N", "T", 3}), InputSpec({4, "N", 5})});
  EXPECT_EQ(countOps(GG.graph(), ir::OpKind::GRU), 2);
  Tensor X = randn({2, 7, 3}), H = randn({4, 2, 5});
  auto [Out, Hn] = G(X, H);
  expectClose(leaves(GG.forward({X, H})), {Out, Hn}, "GRU");

  nn::RNN R(3, 4, nn::RNNOptions{.nonlinearity = "relu", .bias = false});
  GraphModule GR = symbolic_trace(R, {InputSpec({"T", "N", 3})});
  EXPECT_EQ(countOps(GR.graph(), ir::OpKind::RNN), 1);
  Tensor Y = randn({6, 2, 3});
  auto [ROut, RH] = R(Y);
  expectClose(leaves(GR.forward({Y})), {ROut, RH}, "RNN relu");
}

TEST(TraceRNN, ProjectedLSTMIsUnrolled) {
  manual_seed(6);
  nn::LSTM M(4, 6, nn::RNNOptions{.proj_size = 3});
  GraphModule GM = symbolic_trace(M, {InputSpec({5, 2, 4})});
  EXPECT_EQ(countOps(GM.graph(), ir::OpKind::LSTM), 0);
  Tensor X = randn({5, 2, 4});
  auto [Out, State] = M(X);
  expectClose(leaves(GM.forward({X})), {Out, State.first, State.second},
              "projected LSTM");
}
