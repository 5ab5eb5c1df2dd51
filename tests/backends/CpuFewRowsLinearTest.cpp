//===- CpuFewRowsLinearTest.cpp - Linear layers of a decoder's step -------===//
//
// A product of few rows (a decoder's step: one token per sequence) by
// weights of a megabyte or more is the backend's own loop over the weights
// where they lie (LowerMatMul.cpp's emitLinearRows), with the bias and a
// residual fused and a clamp after it: checked against the reference
// backend at 1 to 8 rows, weights as [K, N] and as Gemm's transposed
// [N, K], with no weight packed while the rows stay few; then the same
// executable served a prompt's many rows (the step reshaped: oneDNN's
// primitive with its rows given at run time, weights packed once when its
// layout is not theirs) and
// single rows again, with no program compiled for either.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Parallel.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace nng;
using namespace nng::cputest;

namespace {

constexpr int64_t K = 512, NOut = 768; // 1.5 MiB of weights.

/// y = relu(x . W + b + r): x f32[N, S, K], r f32[N, S, NOut] (N, S
/// symbolic); W [K, NOut], or Gemm's [NOut, K] with transB on x as [M, K].
std::unique_ptr<ir::Graph> linearBlock(bool Gemm, int64_t K = ::K,
                                       int64_t NOut = ::NOut) {
  auto G = std::make_unique<ir::Graph>();
  G->setName(Gemm ? "gemm-rows" : "matmul-rows");
  ir::Value *Y = addLinearLayer(*G, Gemm, /*Residual=*/true, K, NOut, 0.05);
  G->addOutput(add(*G, ir::OpKind::Relu, {Y}, "y"));
  ir::inferTypes(*G); // The epilogue rule decides on the graph's types.
  return G;
}

void expectMatches(const ir::Graph &G, backends::Executable &Exe,
                   const Shape &XS, const Shape &RS, unsigned Seed) {
  expectSameAsReference(G, Exe, {rnd(XS, Seed), rnd(RS, Seed + 1)},
                        G.name() + " x " + XS.toString());
}

TEST(CpuFewRowsLinear, ReadsTheWeightsInPlaceThenServesAPrompt) {
  REQUIRE_ONEDNN();
  for (bool Gemm : {false, true}) {
    std::unique_ptr<ir::Graph> G = linearBlock(Gemm);
    auto Exe = backends::getBackend("cpu").compile(*G);
    auto Rows = [&](int64_t M) -> std::pair<Shape, Shape> {
      if (Gemm)
        return {Shape({M, K}), Shape({M, NOut})};
      return {Shape({M, 1, K}), Shape({M, 1, NOut})};
    };
    unsigned Seed = 10;
    for (int64_t M : {1, 3, 8, 2}) {
      auto [XS, RS] = Rows(M);
      expectMatches(*G, *Exe, XS, RS, Seed += 2);
    }
    backends::CpuExecutableStats Few = *backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(Few.Compiled);
    EXPECT_EQ(Few.Specializations, 1) << G->name();
    EXPECT_EQ(Few.WeightPacks, 0)
        << G->name() << ": few rows read the weights where they lie";
    EXPECT_EQ(Few.FusedNodes, 3)
        << G->name() << ": bias (the Gemm's C too), residual and relu fused";
    // A prompt: many rows, then single rows again.
    for (int64_t M : {40, 1, 100}) {
      auto [XS, RS] = Rows(M);
      expectMatches(*G, *Exe, XS, RS, Seed += 2);
    }
    backends::CpuExecutableStats Last = *backends::cpuExecutableStats(*Exe);
    EXPECT_EQ(Last.Specializations, 1)
        << G->name() << ": " << Last.ReshapeRefusal;
    // Packed once for many rows where the primitive's layout is not the
    // weights' own (Gemm's transposed ones).
    EXPECT_LE(Last.WeightPacks, 1) << G->name();
  }
}

TEST(CpuFewRowsLinear, OddSizesSumEveryRowAndColumnWhateverTheThreads) {
  REQUIRE_ONEDNN();
  // Rows of W in chunks of unequal length with a remainder of fewer than
  // four, columns past the last vector of sixteen: 2 MiB of weights.
  constexpr int64_t OddK = 517, OddN = 1013;
  std::unique_ptr<ir::Graph> G = linearBlock(false, OddK, OddN);
  auto Exe = backends::getBackend("cpu").compile(*G);
  unsigned Seed = 40;
  for (int64_t M = 1; M <= 8; ++M) {
    Shape XS({M, 1, OddK}), RS({M, 1, OddN});
    expectMatches(*G, *Exe, XS, RS, Seed += 2);
    // The same sums on one thread: the rows' chunks do not depend on the
    // thread count.
    std::vector<Tensor> In = {rnd(XS, Seed), rnd(RS, Seed + 1)};
    std::vector<Tensor> Many = Exe->run(In), One;
    {
      ThreadScope Single(1);
      One = Exe->run(In);
    }
    ASSERT_EQ(std::memcmp(Many[0].rawData(), One[0].rawData(),
                          Many[0].nbytes()),
              0)
        << M << " rows";
  }
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->WeightPacks, 0);
}

} // namespace
