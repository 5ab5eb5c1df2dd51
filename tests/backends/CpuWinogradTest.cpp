//===- CpuWinogradTest.cpp - 3x3 convolutions as Winograd's algorithm -----===//
//
// A ResNet basic block (3x3 convolution, ReLU, 3x3 convolution + residual,
// ReLU) on the cpu backend, whose convolutions run as oneDNN's Winograd
// kernels behind guards on their inputs (LowerConv.cpp, ValueBounds.cpp):
// the results are the reference's up to rounding at batch 1 and 8 (oneDNN's
// F(2x2,3x3) and F(4x4,3x3) kernels); NaN, infinities and values too large
// for the transforms in the input or the residual, and weights changed
// after compile past the limit's headroom, make the exact program redo the
// run, so NaN and infinities land where the reference puts them; weights
// changed within it are repacked and keep the Winograd program.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

constexpr int64_t Channels = 32;

/// x[N,32,12,12] -> conv 3x3 -> relu -> conv 3x3, + x -> relu.
std::unique_ptr<ir::Graph> basicBlock() {
  auto G = std::make_unique<ir::Graph>();
  G->setName("basic_block");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(Channels),
                                       ir::Dim(12), ir::Dim(12)}));
  auto W = [&](const std::string &N, Shape S, unsigned Seed, double Scale) {
    return G->addInitializer(N, rnd(S, Seed, -Scale, Scale));
  };
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  ir::Value *Y0 = add(*G, ir::OpKind::Conv,
                      {X, W("w0", {Channels, Channels, 3, 3}, 1, 0.1),
                       W("b0", {Channels}, 2, 0.1)},
                      "y0", Pad);
  ir::Value *R0 = add(*G, ir::OpKind::Relu, {Y0}, "r0");
  ir::Value *Y1 = add(*G, ir::OpKind::Conv,
                      {R0, W("w1", {Channels, Channels, 3, 3}, 3, 0.1),
                       W("b1", {Channels}, 4, 0.1)},
                      "y1", Pad);
  ir::Value *S = add(*G, ir::OpKind::Add, {Y1, X}, "s");
  G->addOutput(add(*G, ir::OpKind::Relu, {S}, "out"));
  ir::inferTypes(*G);
  return G;
}

backends::CpuExecutableStats statsOf(const backends::Executable &E) {
  std::optional<backends::CpuExecutableStats> S = backends::cpuExecutableStats(E);
  EXPECT_TRUE(S && S->Compiled);
  return S ? *S : backends::CpuExecutableStats{};
}

/// Skips unless oneDNN's Winograd kernels exist here (AVX-512).
#define REQUIRE_WINOGRAD()                                                     \
  do {                                                                         \
    if (!__builtin_cpu_supports("avx512f"))                                    \
      GTEST_SKIP() << "SKIPPED: oneDNN 2.6 has Winograd kernels only for "     \
                      "AVX-512, which this CPU lacks";                         \
  } while (0)

/// Got equals Want exactly where Want is not finite (NaN where NaN, the
/// same infinity), and within 1e-4 relative elsewhere.
void expectSameSpecials(const Tensor &Got, const Tensor &Want) {
  ASSERT_EQ(Got.shape(), Want.shape());
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    if (std::isnan(W))
      ASSERT_TRUE(std::isnan(G)) << "element " << I << ": cpu " << G;
    else if (std::isinf(W))
      ASSERT_EQ(G, W) << "element " << I;
    else
      ASSERT_NEAR(G, W, 1e-4 * std::max(1.0, std::fabs(W))) << "element " << I;
  }
}

TEST(CpuWinograd, BasicBlockMatchesTheReference) {
  REQUIRE_WINOGRAD();
  std::unique_ptr<ir::Graph> G = basicBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  for (int64_t N : {1, 8}) {
    std::vector<Tensor> In{rnd({N, Channels, 12, 12}, 10 + N, -2, 2)};
    Tensor Want = backends::runReference(*G, In).at(0);
    Tensor Got = Cpu->run(In).at(0);
    EXPECT_TRUE(closeTo(Got, Want)) << "batch " << N;
    backends::CpuExecutableStats S = statsOf(*Cpu);
    EXPECT_EQ(S.WinogradConvs, 2) << "batch " << N;
    EXPECT_EQ(S.Guards, 2) << "batch " << N;
    EXPECT_EQ(S.ExactReruns, 0) << "batch " << N;
    // The ReLUs are oneDNN's post-ops: no own loop.
    EXPECT_EQ(S.OwnKernels, 0) << "batch " << N;
  }
}

TEST(CpuWinograd, NaNAndInfinitiesRedoTheRunExactly) {
  REQUIRE_WINOGRAD();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  const float Inf = std::numeric_limits<float>::infinity();
  std::unique_ptr<ir::Graph> G = basicBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  Tensor X = rnd({1, Channels, 12, 12}, 20, -2, 2);
  std::vector<Tensor> In{X};
  // A NaN in a corner of a Winograd tile: the transforms would spread it
  // over the tile, oneDNN's ReLU would make it 0.
  X.data<float>()[12 * 12 * 3 + 12 * 4 + 4] = NaN;
  expectSameSpecials(Cpu->run(In).at(0), backends::runReference(*G, In).at(0));
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 1);
  // An infinity: NaN in the transforms where the direct sum is infinite.
  X.data<float>()[12 * 12 * 3 + 12 * 4 + 4] = Inf;
  expectSameSpecials(Cpu->run(In).at(0), backends::runReference(*G, In).at(0));
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 2);
  // A finite value too large for the transforms' limit.
  X.data<float>()[12 * 12 * 3 + 12 * 4 + 4] = 1e36f;
  expectSameSpecials(Cpu->run(In).at(0), backends::runReference(*G, In).at(0));
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 3);
  // Back to ordinary values: the Winograd program again.
  X.data<float>()[12 * 12 * 3 + 12 * 4 + 4] = 0.5f;
  EXPECT_TRUE(closeTo(Cpu->run(In).at(0), backends::runReference(*G, In).at(0)));
  EXPECT_EQ(statsOf(*Cpu).ExactReruns, 3);
}

TEST(CpuWinograd, WeightsChangedWithinTheHeadroomKeepTheProgram) {
  REQUIRE_WINOGRAD();
  std::unique_ptr<ir::Graph> G = basicBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({1, Channels, 12, 12}, 31, -2, 2)};
  Cpu->run(In);
  // A training step's worth of change (and more): repacked, still Winograd.
  Tensor W0 = G->lookup("w0")->data();
  for (int64_t I = 0; I < W0.numel(); ++I)
    W0.data<float>()[I] *= -3.0f;
  Tensor Want = backends::runReference(*G, In).at(0);
  EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want));
  backends::CpuExecutableStats S = statsOf(*Cpu);
  EXPECT_EQ(S.WinogradConvs, 2);
  EXPECT_GE(S.WeightRefreshes, 1);
  EXPECT_EQ(S.ExactReruns, 0);
}

TEST(CpuWinograd, WeightsChangedAfterCompileEndTheSpeculation) {
  REQUIRE_WINOGRAD();
  std::unique_ptr<ir::Graph> G = basicBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({1, Channels, 12, 12}, 30, -2, 2)};
  Cpu->run(In);
  // Huge weights in the second convolution: beyond the limit its guard
  // was compiled with; the exact program keeps the reference's infinities.
  Tensor W1 = G->lookup("w1")->data();
  for (int64_t I = 0; I < W1.numel(); I += 7)
    W1.data<float>()[I] = 3e37f;
  Tensor Want = backends::runReference(*G, In).at(0);
  int64_t Specials = 0;
  for (int64_t I = 0; I < Want.numel(); ++I)
    Specials += !std::isfinite(Want.getFlat(I));
  EXPECT_GT(Specials, 0) << "the case should overflow";
  expectSameSpecials(Cpu->run(In).at(0), Want);
}

TEST(CpuWinograd, SmallImagesRunDirectly) {
  REQUIRE_WINOGRAD();
  // 1 x 8 x 8 = 64 output pixels: reading Winograd's larger weights would
  // cost more than it saves, so the direct kernel runs (no guard).
  auto Small = std::make_unique<ir::Graph>();
  ir::Value *X = Small->addInput(
      "x", ir::TensorType(DType::F32, Shape({1, Channels, 8, 8})));
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  ir::Value *Y = add(*Small, ir::OpKind::Conv,
                     {X, Small->addInitializer(
                             "w", rnd({Channels, Channels, 3, 3}, 5, -0.1, 0.1))},
                     "y", Pad);
  Small->addOutput(Y);
  ir::inferTypes(*Small);
  auto SmallCpu = backends::getBackend("cpu").compile(*Small);
  std::vector<Tensor> In{rnd({1, Channels, 8, 8}, 40)};
  EXPECT_TRUE(closeTo(SmallCpu->run(In).at(0),
                      backends::runReference(*Small, In).at(0)));
  EXPECT_EQ(statsOf(*SmallCpu).WinogradConvs, 0);
}

TEST(CpuWinograd, MaxPoolInTheBlockedLayoutKeepsNaN) {
  REQUIRE_WINOGRAD();
  // y -> Winograd conv makes the graph keep nChw16c, so x's 1x1
  // convolution writes that layout and the max pool after it runs the
  // blocked own loop, which must keep the NaN the convolution spreads.
  auto G = std::make_unique<ir::Graph>();
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, Shape({1, Channels, 12, 12})));
  ir::Value *Y = G->addInput(
      "y", ir::TensorType(DType::F32, Shape({1, Channels, 12, 12})));
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  G->addOutput(add(*G, ir::OpKind::Conv,
                   {Y, G->addInitializer(
                           "w", rnd({Channels, Channels, 3, 3}, 6, -0.1, 0.1))},
                   "yc", Pad));
  ir::Value *C = add(
      *G, ir::OpKind::Conv,
      {X, G->addInitializer("w1x1", rnd({Channels, Channels, 1, 1}, 7))}, "xc");
  ir::AttrMap Pool = Pad;
  Pool.set("kernel_shape", Ints{3, 3});
  Pool.set("strides", Ints{2, 2});
  G->addOutput(add(*G, ir::OpKind::MaxPool, {C}, "pooled", Pool));
  ir::inferTypes(*G);
  auto Cpu = backends::getBackend("cpu").compile(*G);
  Tensor XV = rnd({1, Channels, 12, 12}, 50);
  XV.data<float>()[12 * 5 + 7] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> In{XV, rnd({1, Channels, 12, 12}, 51)};
  Tensor Want = backends::runReference(*G, In).at(1);
  int64_t NaNs = 0;
  for (int64_t I = 0; I < Want.numel(); ++I)
    NaNs += std::isnan(Want.getFlat(I));
  EXPECT_GT(NaNs, 0) << "the case should produce NaN";
  expectSameSpecials(Cpu->run(In).at(1), Want);
  backends::CpuExecutableStats S = statsOf(*Cpu);
  EXPECT_EQ(S.WinogradConvs, 1);
  EXPECT_EQ(S.ExactReruns, 0);
}

#else

TEST(CpuWinograd, NeedsOneDnn) { REQUIRE_ONEDNN(); }

#endif

} // namespace
} // namespace nng
