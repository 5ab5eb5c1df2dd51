//===- CpuSpeculationTest.cpp - Clamps on operands proven finite ----------===//
//
// A MobileNet-like chain (convolution, ReLU6, depthwise convolution, ReLU6,
// pointwise convolution + residual, ReLU6) on the cpu backend: the first
// ReLU6 is the guarded own loop, the others oneDNN's clip post-op because
// their operands are proven finite (ValueBounds.cpp). NaN and infinities in
// the input, weights changed to NaN after compile and weights too large
// for a bound must all still give the reference's results: the run is
// redone by the exact program.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

/// x[N,8,10,10] -> conv 3x3 -> relu6 (c0) -> depthwise 3x3 -> relu6 ->
/// conv 1x1, + c0 -> relu6. W1Scale scales the depthwise weights.
std::unique_ptr<ir::Graph> relu6Chain(float W1Scale = 1.0f) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("relu6_chain");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(8),
                                       ir::Dim(10), ir::Dim(10)}));
  auto W = [&](const std::string &N, Shape S, unsigned Seed, float Scale) {
    Tensor T = rnd(S, Seed, -0.5, 0.5);
    for (int64_t I = 0; I < T.numel(); ++I)
      T.setFlat(I, T.getFlat(I) * Scale);
    return G->addInitializer(N, T);
  };
  ir::Value *Lo = G->addInitializer("lo", Tensor::scalar(0.0f));
  ir::Value *Hi = G->addInitializer("hi", Tensor::scalar(6.0f));
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  ir::Value *Y0 = add(*G, ir::OpKind::Conv,
                      {X, W("w0", {16, 8, 3, 3}, 1, 1), W("b0", {16}, 2, 1)},
                      "y0", Pad);
  ir::Value *C0 = add(*G, ir::OpKind::Clip, {Y0, Lo, Hi}, "c0");
  ir::AttrMap Dw = Pad;
  Dw.set("group", int64_t(16));
  ir::Value *Y1 = add(
      *G, ir::OpKind::Conv,
      {C0, W("w1", {16, 1, 3, 3}, 3, W1Scale), W("b1", {16}, 4, 1)}, "y1", Dw);
  ir::Value *C1 = add(*G, ir::OpKind::Clip, {Y1, Lo, Hi}, "c1");
  ir::Value *Y2 = add(*G, ir::OpKind::Conv,
                      {C1, W("w2", {16, 16, 1, 1}, 5, 1), W("b2", {16}, 6, 1)},
                      "y2");
  ir::Value *S = add(*G, ir::OpKind::Add, {Y2, C0}, "s");
  ir::Value *C2 = add(*G, ir::OpKind::Clip, {S, Lo, Hi}, "c2");
  G->addOutput(C2);
  ir::inferTypes(*G);
  return G;
}

/// Got is NaN exactly where Want is, and close elsewhere.
void expectSameNaNs(const Tensor &Got, const Tensor &Want) {
  ASSERT_EQ(Got.shape(), Want.shape());
  int64_t NaNs = 0;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    NaNs += std::isnan(W);
    ASSERT_EQ(std::isnan(G), std::isnan(W))
        << "element " << I << ": cpu " << G << ", reference " << W;
    if (!std::isnan(W))
      ASSERT_NEAR(G, W, 1e-4 * std::max(1.0, std::fabs(W))) << "element " << I;
  }
  EXPECT_GT(NaNs, 0) << "the case should produce NaN";
}

backends::CpuExecutableStats statsOf(const backends::Executable &E) {
  std::optional<backends::CpuExecutableStats> S = backends::cpuExecutableStats(E);
  EXPECT_TRUE(S && S->Compiled);
  return S ? *S : backends::CpuExecutableStats{};
}

TEST(CpuSpeculation, ClampsAfterBoundedConvolutionsAreOneDnns) {
  std::unique_ptr<ir::Graph> G = relu6Chain();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({2, 8, 10, 10}, 10, -3, 3)};
  Tensor Want = backends::runReference(*G, In).at(0);
  EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want));
  backends::CpuExecutableStats S = statsOf(*Cpu);
  // The first clamp sees the input's convolution (no bound): the guarded
  // own loop; the two after it are post-ops.
  EXPECT_EQ(S.ProvenClamps, 2);
  EXPECT_EQ(S.OwnKernels, 1);
  EXPECT_EQ(S.ExactReruns, 0);
}

TEST(CpuSpeculation, NaNInTheInputRedoesTheRunExactly) {
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  const float Inf = std::numeric_limits<float>::infinity();
  std::unique_ptr<ir::Graph> G = relu6Chain();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  Tensor X = rnd({2, 8, 10, 10}, 11, -3, 3);
  X.data<float>()[17] = NaN;
  X.data<float>()[900] = Inf;
  X.data<float>()[1355] = -Inf; // Not in a window with the +inf.
  std::vector<Tensor> In{X};
  Tensor Want = backends::runReference(*G, In).at(0);
  // oneDNN's clip alone would turn the NaN after the depthwise convolution
  // into 0 or 6: the guard makes the exact program redo the run.
  expectSameNaNs(Cpu->run(In).at(0), Want);
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 1);
  // Infinities alone clamp to finite values: no rerun.
  X.data<float>()[17] = Inf;
  Want = backends::runReference(*G, In).at(0);
  EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want));
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 1);
}

TEST(CpuSpeculation, WeightsChangedAfterCompileEndTheSpeculation) {
  std::unique_ptr<ir::Graph> G = relu6Chain();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({1, 8, 10, 10}, 12, -3, 3)};
  Cpu->run(In);
  // A NaN in the depthwise weights makes its channel NaN, which only the
  // exact program keeps through the clamps.
  Tensor W1 = G->lookup("w1")->data();
  W1.data<float>()[4] = std::numeric_limits<float>::quiet_NaN();
  Tensor Want = backends::runReference(*G, In).at(0);
  expectSameNaNs(Cpu->run(In).at(0), Want);
  expectSameNaNs(Cpu->run(In).at(0), Want);
}

TEST(CpuSpeculation, HugeWeightsGiveNoBound) {
  // The depthwise weights near 1e30: 6 * sum |w| is over the bound limit,
  // so the clamp after them stays the guarded own loop; the last one is
  // proven again (its operands are clamps and a bounded convolution).
  std::unique_ptr<ir::Graph> G = relu6Chain(1e30f);
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({1, 8, 10, 10}, 13, -3, 3)};
  Tensor Want = backends::runReference(*G, In).at(0);
  Tensor Got = Cpu->run(In).at(0);
  ASSERT_EQ(Got.shape(), Want.shape());
  for (int64_t I = 0; I < Want.numel(); ++I)
    ASSERT_NEAR(Got.getFlat(I), Want.getFlat(I), 1e-4) << "element " << I;
  backends::CpuExecutableStats S = statsOf(*Cpu);
  EXPECT_EQ(S.ProvenClamps, 1);
  EXPECT_EQ(S.OwnKernels, 2);
}

#else

TEST(CpuSpeculation, NeedsOneDnn) { REQUIRE_ONEDNN(); }

#endif

} // namespace
} // namespace nng
