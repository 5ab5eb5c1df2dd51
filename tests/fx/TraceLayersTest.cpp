//===- TraceLayersTest.cpp - Every layer traced == eager -------------------===//
//
// Each layer of docs/layers.md traced with symbolic_trace's core
// (Tracer::trace_graph) and run on the reference backend matches eager
// (atol 1e-5), in eval mode and, where the two differ, in train mode
// (batchnorm's batch statistics; dropout with p = 0, and a Dropout node
// with p > 0). Parameters are initializers under their state_dict keys.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/NN.h"

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

/// Traces M (in the given mode) on a static spec of X and compares.
fx::TraceResult check(nn::ModuleBase &M, const Tensor &X, bool Train = false,
                      DType T = DType::F32) {
  M.train(Train);
  std::vector<fx::Dim> Dims;
  for (int64_t D : X.sizes())
    Dims.emplace_back(D);
  return traceAndCompare(M, {InputSpec(Dims, T)}, {X});
}

/// The same with a dynamic first dim "N": traced once, run at two batches.
void checkDynamic(nn::ModuleBase &M, const Tensor &X1, const Tensor &X2) {
  std::vector<fx::Dim> Dims{fx::Dim("N")};
  for (int64_t D = 1; D < X1.dim(); ++D)
    Dims.emplace_back(X1.sizes()[D]);
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(M, {InputSpec(Dims)});
  ir::verifyOrThrow(*R.Graph);
  EXPECT_EQ(R.Graph->inputs()[0]->type().dim(0).symbol(), "N");
  expectGraphEqualsEager(R, M, {X1});
  expectGraphEqualsEager(R, M, {X2});
}

std::vector<std::string> stateKeys(nn::ModuleBase &M) {
  std::vector<std::string> K;
  for (const auto &[Key, T] : M.state_dict())
    K.push_back(Key);
  return K;
}

} // namespace

TEST(TraceLayers, Linear) {
  manual_seed(0);
  nn::Linear L(6, 4);
  auto R = check(L, randn({3, 6}));
  EXPECT_EQ(initializerNames(*R.Graph), stateKeys(L));
  check(L, randn({2, 5, 6})); // 3-D input
  checkDynamic(L, randn({1, 6}), randn({8, 6}));
  nn::Linear NoBias(6, 4, false);
  check(NoBias, randn({3, 6}));
}

TEST(TraceLayers, Conv) {
  manual_seed(1);
  nn::Conv1d C1(3, 4, 3, 1, 1);
  check(C1, randn({2, 3, 10}));
  nn::Conv2d C2(3, 5, 3, 2, 1, 1, 1, true);
  check(C2, randn({2, 3, 9, 9}));
  checkDynamic(C2, randn({1, 3, 9, 9}), randn({8, 3, 9, 9}));
  nn::Conv2d Grouped(4, 4, 3, 1, 1, 1, 2);
  check(Grouped, randn({1, 4, 6, 6}));
  nn::ConvTranspose2d T(4, 3, 3, 2, 1, 1);
  check(T, randn({2, 4, 5, 5}));
}

TEST(TraceLayers, BatchNormEvalAndTrain) {
  manual_seed(2);
  nn::BatchNorm2d BN(3);
  {
    NoGradGuard G;
    BN.running_mean.copy_(randn({3}));
    BN.running_var.copy_(rand({3}) + 0.5);
  }
  Tensor X = randn({4, 3, 5, 5});
  check(BN, X, /*Train=*/false);
  // Train: batch statistics; tracing does not touch the running stats.
  Tensor RM = BN.running_mean.clone();
  int64_t Tracked = BN.num_batches_tracked.item<int64_t>();
  BN.train(true);
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(BN, {InputSpec({4, 3, 5, 5})});
  EXPECT_TRUE(allClose(BN.running_mean.data(), RM, 0.0));
  EXPECT_EQ(BN.num_batches_tracked.item<int64_t>(), Tracked);
  // The graph computes the training-mode output (eager then updates stats).
  std::vector<rt::Tensor> Got = runGraph(*R.Graph, {X});
  Tensor Want = BN(X);
  EXPECT_TRUE(allClose(Got[0], Want));
  nn::BatchNorm1d B1(5);
  check(B1, randn({6, 5}), false);
  check(B1, randn({6, 5}), true);
  checkDynamic(B1.train(false), randn({1, 5}), randn({8, 5}));
}

TEST(TraceLayers, LayerNormGroupNorm) {
  manual_seed(3);
  nn::LayerNorm LN(std::vector<int64_t>{4, 5});
  check(LN, randn({2, 3, 4, 5}));
  nn::GroupNorm GN(2, 6);
  check(GN, randn({2, 6, 4, 4}));
  checkDynamic(GN, randn({1, 6, 4, 4}), randn({8, 6, 4, 4}));
}

TEST(TraceLayers, Dropout) {
  manual_seed(4);
  nn::Dropout D(0.5);
  Tensor X = randn({4, 8});
  // Eval: identity, no node but the output Identity.
  auto R = check(D, X, false);
  EXPECT_EQ(countOps(*R.Graph, ir::OpKind::Dropout), 0u);
  // Train with p = 0: identity too.
  nn::Dropout D0(0.0);
  check(D0, X, true);
  // Train with p > 0: one Dropout node (its own randomness); the kept
  // entries are X / (1 - p), the others 0.
  D.train(true);
  fx::Tracer T;
  fx::TraceResult RT = T.trace_graph(D, {InputSpec({4, 8})});
  EXPECT_EQ(countOps(*RT.Graph, ir::OpKind::Dropout), 1u);
  std::vector<rt::Tensor> Got = runGraph(*RT.Graph, {X});
  std::vector<double> G = Got[0].toDoubleVector();
  std::vector<double> W = X.data().toDoubleVector();
  for (size_t I = 0; I < G.size(); ++I)
    EXPECT_TRUE(G[I] == 0.0 || std::fabs(G[I] - 2.0 * W[I]) < 1e-5) << I;
}

TEST(TraceLayers, Activations) {
  manual_seed(5);
  Tensor X = randn({3, 7});
  nn::ReLU A;
  check(A, X);
  nn::SiLU B;
  check(B, X);
  nn::GELU C;
  check(C, X);
  nn::GELU CT("tanh");
  check(CT, X);
  nn::LeakyReLU D(0.2);
  check(D, X);
  nn::Sigmoid E;
  check(E, X);
  nn::Tanh F;
  check(F, X);
  nn::Identity G;
  check(G, X);
  nn::Softmax H(1);
  check(H, X);
  nn::Softmax Legacy;
  check(Legacy, X);
  nn::Flatten Fl;
  check(Fl, randn({2, 3, 4}));
  checkDynamic(Fl, randn({1, 3, 4}), randn({8, 3, 4}));
  nn::ReLU Inplace(true);
  check(Inplace, X);
}

TEST(TraceLayers, Pooling) {
  manual_seed(6);
  Tensor X = randn({2, 3, 9, 9});
  nn::MaxPool2d M(3, 2, 1);
  check(M, X);
  nn::AvgPool2d A(2);
  check(A, X);
  nn::AdaptiveAvgPool2d AA(std::vector<int64_t>{1, 1});
  check(AA, X);
  nn::AdaptiveAvgPool2d AA3(std::vector<int64_t>{3, 3});
  check(AA3, X);
  checkDynamic(AA, randn({1, 3, 9, 9}), randn({8, 3, 9, 9}));
}

TEST(TraceLayers, Embedding) {
  manual_seed(7);
  nn::Embedding E(10, 4);
  Tensor Idx = tensor({1, 3, 0, 9, 2, 2}, std::vector<int64_t>{2, 3}, DType::I64);
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(E, {InputSpec({2, 3}, DType::I64)});
  expectGraphEqualsEager(R, E, {Idx});
}

TEST(TraceLayers, MultiheadAttention) {
  manual_seed(8);
  nn::MultiheadAttention M(8, 2);
  M.eval();
  Tensor Q = randn({5, 2, 8});
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(
      M, {InputSpec({5, 2, 8}), InputSpec({5, 2, 8}), InputSpec({5, 2, 8})});
  expectGraphEqualsEager(R, M, {Q, Q, Q});
  // Dynamic sequence and batch dims.
  fx::TraceResult RD = T.trace_graph(M, {InputSpec({"S", "N", 8}),
                                         InputSpec({"S", "N", 8}),
                                         InputSpec({"S", "N", 8})});
  Tensor Q2 = randn({3, 4, 8});
  expectGraphEqualsEager(RD, M, {Q2, Q2, Q2});
  expectGraphEqualsEager(RD, M, {Q, Q, Q});
}

TEST(TraceLayers, TransformerEncoderLayerEvalAndTrain) {
  manual_seed(9);
  nn::TransformerEncoderLayer L(8, 2, 16, /*dropout=*/0.0);
  Tensor X = randn({4, 3, 8});
  L.eval();
  traceAndCompare(L, {InputSpec({4, 3, 8})}, {X});
  L.train();
  traceAndCompare(L, {InputSpec({4, 3, 8})}, {X});
}
