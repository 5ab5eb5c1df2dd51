//===- CpuLSTMTest.cpp - LSTM's own f32 loop against the reference --------===//
//
// The cpu backend runs ONNX's LSTM in torch's form (default activations, no
// clip) on its own f32 loop (KernelsLSTM.cpp): checked against the
// reference backend (f64) in every direction, both layouts, with and
// without biases, initial states, peepholes and sequence lengths (shorter
// sequences leave zeros in Y), and counted as served by the loop; a clipped
// cell goes to the reference kernel and agrees too.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::cputest;

namespace {

struct LSTMCase {
  std::string Direction = "forward";
  bool Layout = false, Bias = true, States = true, Peepholes = false,
       Lens = false, Clip = false;
};

constexpr int64_t S = 4, Batch = 3, I = 5, H = 6;

/// One LSTM node whose operands are all graph inputs; its inputs at seed.
std::pair<std::unique_ptr<ir::Graph>, std::vector<Tensor>>
lstmGraph(const LSTMCase &K, unsigned Seed) {
  int64_t D = K.Direction == "bidirectional" ? 2 : 1;
  auto G = std::make_unique<ir::Graph>();
  G->setName("lstm-" + K.Direction);
  std::vector<Tensor> In;
  auto Input = [&](const char *Name, Tensor T) {
    In.push_back(T);
    return G->addInput(Name, ir::TensorType(T.dtype(), T.shape()));
  };
  Shape XS = K.Layout ? Shape{Batch, S, I} : Shape{S, Batch, I};
  Shape StateS = K.Layout ? Shape{Batch, D, H} : Shape{D, Batch, H};
  std::vector<ir::Value *> Ops = {
      Input("x", rnd(XS, Seed)),
      Input("w", rnd({D, 4 * H, I}, Seed + 1, -0.5, 0.5)),
      Input("r", rnd({D, 4 * H, H}, Seed + 2, -0.5, 0.5))};
  Ops.push_back(K.Bias ? Input("b", rnd({D, 8 * H}, Seed + 3)) : nullptr);
  Ops.push_back(K.Lens ? Input("lens", Tensor::fromVector<int32_t>(
                                           {S, 1, 3}, Shape{Batch}))
                       : nullptr);
  Ops.push_back(K.States ? Input("h0", rnd(StateS, Seed + 4)) : nullptr);
  Ops.push_back(K.States ? Input("c0", rnd(StateS, Seed + 5)) : nullptr);
  if (K.Peepholes)
    Ops.push_back(Input("p", rnd({D, 3 * H}, Seed + 6)));
  ir::AttrMap A;
  A.set("direction", std::string(K.Direction));
  A.set("hidden_size", int64_t(H));
  A.set("layout", int64_t(K.Layout));
  if (K.Clip)
    A.set("clip", 0.5f);
  ir::Node *N = G->addNode(ir::OpKind::LSTM, Ops, {"y", "yh", "yc"}, A);
  for (ir::Value *O : N->outputs())
    G->addOutput(O);
  ir::inferTypes(*G);
  return {std::move(G), std::move(In)};
}

void expectMatches(const LSTMCase &K, unsigned Seed) {
  auto [G, In] = lstmGraph(K, Seed);
  std::vector<Tensor> Want = backends::runReference(*G, In);
  int64_t Before = backends::cpuCallCounts().Fast;
  std::vector<Tensor> Got = backends::getBackend("cpu").compile(*G)->run(In);
  int64_t Served = backends::cpuCallCounts().Fast - Before;
  ASSERT_EQ(Got.size(), 3u);
  for (size_t O = 0; O < 3; ++O)
    EXPECT_TRUE(closeTo(Got[O], Want[O]))
        << G->name() << " layout " << K.Layout << " output " << O;
  EXPECT_EQ(Served > 0, !K.Clip) << G->name() << ": served by the own loop";
}

TEST(CpuLSTM, OwnLoopMatchesTheReference) {
  REQUIRE_ONEDNN();
  unsigned Seed = 1;
  for (const char *Dir : {"forward", "reverse", "bidirectional"})
    for (bool Layout : {false, true}) {
      LSTMCase K;
      K.Direction = Dir;
      K.Layout = Layout;
      expectMatches(K, Seed += 10);
      K.Bias = K.States = false;
      expectMatches(K, Seed += 10);
      K.Bias = K.States = K.Peepholes = K.Lens = true;
      expectMatches(K, Seed += 10);
    }
}

TEST(CpuLSTM, ClippedCellRunsOnTheReferenceKernel) {
  REQUIRE_ONEDNN();
  LSTMCase K;
  K.Clip = true;
  expectMatches(K, 7);
}

} // namespace
