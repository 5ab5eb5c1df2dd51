//===- CpuPReluInstanceNormTest.cpp - PRelu, HardSigmoid, InstanceNorm ----===//
//
// PRelu, HardSigmoid and InstanceNormalization are the cpu backend's own
// loops in the compiled schedule (LowerActivation.cpp, LowerNorm.cpp), not
// node kernels. PRelu must equal the reference bit for bit (NaN,
// infinities, the sign of zero, infinite and NaN slopes) for every form of
// slope broadcast, and HardSigmoid for its default and other parameters;
// InstanceNormalization (the reference computes in double) must agree
// within the LayerNormalization tests' tolerance for ranks 2 to 5, one long
// row (a GroupNorm(1, C) export's [1, 1, C x L]), NaN and infinities,
// constant rows. All serve a new length without a compile.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

using namespace nng;
using namespace nng::cputest;

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

/// The same bits, but any NaN for a NaN.
::testing::AssertionResult sameBits(const Tensor &Got, const Tensor &Want) {
  if (Got.dtype() != DType::F32 || Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "got " << Got.toString() << ", want " << Want.toString();
  const float *G = static_cast<const float *>(Got.rawData());
  const float *W = static_cast<const float *>(Want.rawData());
  for (int64_t I = 0; I < Want.numel(); ++I) {
    if (std::isnan(G[I]) && std::isnan(W[I]))
      continue;
    if (std::memcmp(G + I, W + I, sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << "element " << I << ": cpu " << G[I] << ", reference " << W[I];
  }
  return ::testing::AssertionSuccess();
}

/// The executable's stats after a run: compiled, no node kernel.
void expectLowered(backends::Executable &Exe, const std::string &What) {
  std::optional<backends::CpuExecutableStats> S =
      backends::cpuExecutableStats(Exe);
  ASSERT_TRUE(S && S->Compiled) << What;
  EXPECT_TRUE(S->Fallbacks.empty())
      << What << ": " << S->Fallbacks.front() << " ran on a node kernel";
}

/// Dims of type Shape with the axes named in Sym symbolic.
ir::TensorType typeOf(const Shape &S, const std::vector<bool> &Sym = {}) {
  std::vector<ir::Dim> D;
  for (size_t I = 0; I < S.rank(); ++I)
    D.push_back(I < Sym.size() && Sym[I]
                    ? ir::Dim::symbol("d" + std::to_string(I))
                    : ir::Dim(S[I]));
  return ir::TensorType(DType::F32, D);
}

/// X with NaN, infinities and signed zeros among its values.
Tensor withSpecials(Shape S, unsigned Seed) {
  Tensor X = rnd(S, Seed, -3, 3);
  const double Specials[] = {NaN, Inf, -Inf, 0.0, -0.0, -1e-30};
  for (int64_t I = 0; I < X.numel(); I += 7)
    X.setFlat(I, Specials[(I / 7) % 6]);
  return X;
}

// --- PRelu -----------------------------------------------------------------

/// y = PRelu(x, slope), the slope an initializer or a graph input.
std::unique_ptr<ir::Graph> preluGraph(const Shape &XS, const Tensor &Slope,
                                      bool ConstSlope,
                                      const std::vector<bool> &Sym = {}) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("prelu x" + XS.toString() + " slope" + Slope.shape().toString());
  ir::Value *X = G->addInput("x", typeOf(XS, Sym));
  ir::Value *S = ConstSlope ? G->addInitializer("slope", Slope)
                            : G->addInput("slope", typeOf(Slope.shape()));
  G->addOutput(add(*G, ir::OpKind::PRelu, {X, S}, "y"));
  ir::inferTypes(*G);
  return G;
}

TEST(CpuPRelu, EverySlopeBroadcastEqualsTheReferenceBitForBit) {
  REQUIRE_ONEDNN();
  Shape XS({2, 5, 7, 3});
  // Slopes: scalar-like, per channel (ONNX's [C, 1, 1] and torch's [1, 1]),
  // along the last axis, and broadcasts over inner and outer axes at once.
  std::vector<Shape> Slopes = {
      Shape({1}),          Shape({1, 1}),       Shape({5, 1, 1}),
      Shape({3}),          Shape({7, 3}),       Shape({2, 1, 7, 1}),
      Shape({2, 5, 1, 3}), Shape({1, 5, 7, 1}), Shape({2, 5, 7, 3})};
  unsigned Seed = 1;
  for (const Shape &SS : Slopes)
    for (bool Const : {true, false}) {
      Tensor Slope = withSpecials(SS, Seed++);
      if (SS.numel() == 1)
        Slope.setFlat(0, -0.25);
      auto G = preluGraph(XS, Slope, Const);
      SCOPED_TRACE(G->name() + (Const ? " (constant)" : " (input)"));
      std::vector<Tensor> Feeds = {withSpecials(XS, Seed++)};
      if (!Const)
        Feeds.push_back(Slope);
      Tensor Want = backends::runReference(*G, Feeds).at(0);
      auto Exe = backends::getBackend("cpu").compile(*G);
      EXPECT_TRUE(sameBits(Exe->run(Feeds).at(0), Want));
      expectLowered(*Exe, G->name());
    }
}

TEST(CpuPRelu, InfiniteAndNaNSlopes) {
  REQUIRE_ONEDNN();
  // oneDNN's prelu gives NaN for x >= 0 under such slopes; ONNX gives x.
  Tensor Slope = Tensor::empty(Shape({6, 1}), DType::F32);
  const double Values[] = {Inf, -Inf, NaN, 0.0, -0.0, -2.0};
  for (int64_t I = 0; I < 6; ++I)
    Slope.setFlat(I, Values[I]);
  Shape XS({1, 6, 40});
  auto G = preluGraph(XS, Slope, true);
  std::vector<Tensor> Feeds = {withSpecials(XS, 3)};
  Tensor Want = backends::runReference(*G, Feeds).at(0);
  auto Exe = backends::getBackend("cpu").compile(*G);
  EXPECT_TRUE(sameBits(Exe->run(Feeds).at(0), Want));
  expectLowered(*Exe, G->name());
}

TEST(CpuPRelu, LongRunsAndNewLengthsWithoutACompile) {
  REQUIRE_ONEDNN();
  // [N, C, L] with N and L symbolic; a per-channel slope, then one value.
  for (Shape SS : {Shape({64, 1}), Shape({1})}) {
    Tensor Slope = rnd(SS, 9, -1, 1);
    auto G = preluGraph(Shape({1, 64, 10}), Slope, true, {true, false, true});
    auto Exe = backends::getBackend("cpu").compile(*G);
    unsigned Seed = 20;
    for (int64_t L : {2000, 1, 37, 70001}) {
      SCOPED_TRACE(G->name() + " L=" + std::to_string(L));
      std::vector<Tensor> Feeds = {withSpecials(Shape({2, 64, L}), Seed++)};
      Tensor Want = backends::runReference(*G, Feeds).at(0);
      EXPECT_TRUE(sameBits(Exe->run(Feeds).at(0), Want));
      expectLowered(*Exe, G->name());
    }
    EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Specializations, 1)
        << backends::cpuExecutableStats(*Exe)->ReshapeRefusal;
  }
}

// --- HardSigmoid -------------------------------------------------------------

TEST(CpuHardSigmoid, EqualsTheReferenceBitForBitAtEveryLength) {
  REQUIRE_ONEDNN();
  // The defaults (0.2, 0.5: PaddleOCR's and MobileNetV3's), torch's
  // Hardsigmoid (1/6, 0.5) and a negative slope.
  for (auto [Alpha, Beta] : {std::pair{-1.0f, -1.0f}, std::pair{1.0f / 6, 0.5f},
                             std::pair{-3.0f, 0.25f}}) {
    auto G = std::make_unique<ir::Graph>();
    G->setName("hard-sigmoid alpha " + std::to_string(Alpha));
    ir::Value *X =
        G->addInput("x", typeOf(Shape({1, 8, 10}), {true, false, true}));
    ir::AttrMap A;
    if (Alpha != -1.0f) {
      A.set("alpha", ir::Attribute(Alpha));
      A.set("beta", ir::Attribute(Beta));
    }
    G->addOutput(add(*G, ir::OpKind::HardSigmoid, {X}, "y", A));
    ir::inferTypes(*G);
    auto Exe = backends::getBackend("cpu").compile(*G);
    unsigned Seed = 30;
    for (int64_t L : {10, 1, 5000, 33}) {
      SCOPED_TRACE(G->name() + " L=" + std::to_string(L));
      std::vector<Tensor> Feeds = {withSpecials(Shape({2, 8, L}), Seed++)};
      Tensor Want = backends::runReference(*G, Feeds).at(0);
      EXPECT_TRUE(sameBits(Exe->run(Feeds).at(0), Want));
      expectLowered(*Exe, G->name());
    }
    EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Specializations, 1);
  }
}

// --- InstanceNormalization -------------------------------------------------

/// y = InstanceNormalization(x, scale, b) with epsilon Eps.
std::unique_ptr<ir::Graph> instanceNormGraph(const Shape &XS, float Eps,
                                             const std::vector<bool> &Sym = {},
                                             bool ConstParams = true) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("instance-norm x" + XS.toString());
  ir::Value *X = G->addInput("x", typeOf(XS, Sym));
  Shape PS({XS[1]});
  ir::Value *S = ConstParams ? G->addInitializer("scale", rnd(PS, 1, 0.5, 2))
                             : G->addInput("scale", typeOf(PS));
  ir::Value *B = ConstParams ? G->addInitializer("b", rnd(PS, 2))
                             : G->addInput("b", typeOf(PS));
  ir::AttrMap A;
  A.set("epsilon", ir::Attribute(Eps));
  G->addOutput(add(*G, ir::OpKind::InstanceNormalization, {X, S, B}, "y", A));
  ir::inferTypes(*G);
  return G;
}

void expectInstanceNorm(const ir::Graph &G, backends::Executable &Exe,
                        const std::vector<Tensor> &Feeds) {
  Tensor Want = backends::runReference(G, Feeds).at(0);
  EXPECT_TRUE(closeTo(Exe.run(Feeds).at(0), Want)) << G.name();
  expectLowered(Exe, G.name());
}

TEST(CpuInstanceNorm, RanksAndOddSizesMatchTheReference) {
  REQUIRE_ONEDNN();
  unsigned Seed = 30;
  for (const Shape &XS :
       {Shape({2, 3}), Shape({2, 3, 37}), Shape({1, 4, 5, 6}),
        Shape({3, 2, 3, 4, 5}), Shape({1, 1, 1}), Shape({2, 17, 1000})})
    for (float Eps : {1e-5f, 1e-8f})
      for (bool Const : {true, false}) {
        auto G = instanceNormGraph(XS, Eps, {}, Const);
        auto Exe = backends::getBackend("cpu").compile(*G);
        std::vector<Tensor> Feeds = {rnd(XS, Seed++, -4, 6)};
        if (!Const) {
          Feeds.push_back(rnd(Shape({XS[1]}), Seed++, 0.5, 2));
          Feeds.push_back(rnd(Shape({XS[1]}), Seed++));
        }
        expectInstanceNorm(*G, *Exe, Feeds);
      }
}

TEST(CpuInstanceNorm, OneLongRowAsGroupNormExportsIt) {
  REQUIRE_ONEDNN();
  // torch's GroupNorm(1, C) exports as [N, 1, C x L] with epsilon 1e-8:
  // one row of many blocks, with an offset that single-precision sums of
  // this length would lose.
  auto G = instanceNormGraph(Shape({1, 1, 256000}), 1e-8f, {true, false, true});
  auto Exe = backends::getBackend("cpu").compile(*G);
  Tensor X = rnd(Shape({1, 1, 256000}), 40, 99.0, 101.0);
  expectInstanceNorm(*G, *Exe, {X});
  // Other lengths (one partial block, a few) reshape the program.
  unsigned Seed = 41;
  for (int64_t L : {8193, 100, 1, 40000}) {
    SCOPED_TRACE("L=" + std::to_string(L));
    expectInstanceNorm(*G, *Exe, {rnd(Shape({2, 1, L}), Seed++, -1, 3)});
  }
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Specializations, 1)
      << backends::cpuExecutableStats(*Exe)->ReshapeRefusal;
}

TEST(CpuInstanceNorm, NaNInfinitiesAndConstantRows) {
  REQUIRE_ONEDNN();
  Shape XS({2, 4, 9000});
  auto G = instanceNormGraph(XS, 1e-5f);
  auto Exe = backends::getBackend("cpu").compile(*G);
  Tensor X = rnd(XS, 50);
  int64_t Len = 9000;
  X.setFlat(0 * Len + 5, NaN);    // Row 0: all NaN.
  X.setFlat(1 * Len + 8500, Inf); // Row 1: NaN (inf - inf).
  X.setFlat(2 * Len + 1, Inf);    // Row 2: +inf and -inf.
  X.setFlat(2 * Len + 8999, -Inf);
  for (int64_t I = 0; I < Len; ++I) // Row 3: constant, var 0.
    X.setFlat(3 * Len + I, 0.3);
  for (int64_t I = 0; I < Len; ++I) // Row 7: constant, var 0.
    X.setFlat(7 * Len + I, -1e4);
  expectInstanceNorm(*G, *Exe, {X});
  Tensor Got = Exe->run({X}).at(0);
  Tensor Want = backends::runReference(*G, {X}).at(0);
  for (int64_t R : {3, 7})
    for (int64_t I = 0; I < Len; I += 997)
      EXPECT_EQ(Got.getFlat(R * Len + I), Want.getFlat(R * Len + I))
          << "constant row " << R << " element " << I;
}

} // namespace
