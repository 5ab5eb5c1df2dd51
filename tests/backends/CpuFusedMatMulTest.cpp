//===- CpuFusedMatMulTest.cpp - Products with their epilogues fused -------===//
//
// The cpu backend's product epilogue rule (rules/FuseProducts.cpp) makes a
// linear layer's MatMul or Gemm, its bias Add, a residual Add and an
// activation one nng.FusedMatMul, which LowerMatMul.cpp lowers to one oneDNN
// matmul (post-ops) or own loops after it. Checked against the reference
// backend at two row counts on one executable (the second served by the
// reshaped program: a primitive with its rows given at run time, which
// takes no residual post-op, so the residual, then the activation, run as
// loops after it, or the primitive of those rows when only oneDNN has the
// activation), for MatMul + bias + residual + Relu, Tanh and Clip, Gemm
// (transB) + bias + Gelu, Gemm + bias + residual + Relu, and a decoder's
// single row of large weights with a Gelu (the weights read in place, the
// Gelu an eltwise step after); and weights whose rows are a multiple of 512
// floats, padded once for many rows given at run time (on CPUs without
// AVX-512, where the own packed product does not serve them), read in
// place for few.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::cputest;

namespace {

/// The block's activation node on V.
ir::Value *activation(ir::Graph &G, std::string_view Act, ir::Value *V) {
  if (Act == "Relu")
    return add(G, ir::OpKind::Relu, {V}, "y");
  if (Act == "Tanh")
    return add(G, ir::OpKind::Tanh, {V}, "y");
  if (Act == "Gelu")
    return add(G, ir::OpKind::Gelu, {V}, "y");
  ir::Value *Lo = G.addInitializer("lo", Tensor::scalar(0.0f));
  ir::Value *Hi = G.addInitializer("hi", Tensor::scalar(0.5f));
  return add(G, ir::OpKind::Clip, {V, Lo, Hi}, "y");
}

/// y = act(x . W + b (+ r)): MatMul of x f32[N, S, K] (N, S symbolic) by
/// W [K, NOut], or Gemm of x f32[M, K] by W [NOut, K] with transB.
std::unique_ptr<ir::Graph> block(bool Gemm, bool Residual, std::string_view Act,
                                 int64_t K, int64_t NOut) {
  auto G = std::make_unique<ir::Graph>();
  G->setName(std::string(Gemm ? "gemm" : "matmul") +
             (Residual ? "-residual-" : "-") + std::string(Act));
  ir::Value *Y = addLinearLayer(*G, Gemm, Residual, K, NOut, 0.1);
  G->addOutput(activation(*G, Act, Y));
  ir::inferTypes(*G); // The rule decides on the graph's types.
  return G;
}

/// Runs G on Exe and on the reference at M rows; they agree.
void expectMatches(const ir::Graph &G, backends::Executable &Exe, bool Gemm,
                   int64_t M, int64_t K, int64_t NOut, unsigned Seed) {
  Shape XS = Gemm ? Shape({M, K}) : Shape({1, M, K});
  Shape RS = Gemm ? Shape({M, NOut}) : Shape({1, M, NOut});
  std::vector<Tensor> In = {rnd(XS, Seed)};
  if (G.inputs().size() > 1)
    In.push_back(rnd(RS, Seed + 1));
  expectSameAsReference(G, Exe, In,
                        G.name() + " at " + std::to_string(M) + " rows,");
}

TEST(CpuFusedMatMul, RuleMakesOneNodeOfEachBlock) {
  for (bool Gemm : {false, true}) {
    std::unique_ptr<ir::Graph> G = block(Gemm, !Gemm, "Relu", 8, 4);
    backends::cpu::EpilogueFusionCounts Counts =
        backends::cpu::fuseProductEpilogues(*G);
    EXPECT_EQ(Counts.Fused, 1);
    EXPECT_EQ(Counts.Biases, Gemm ? 0 : 1);
    EXPECT_EQ(Counts.Sums, Gemm ? 0 : 1);
    EXPECT_EQ(Counts.Activations, 1);
    ASSERT_EQ(G->nodes().size(), 1u);
    const ir::Node &F = *G->nodes().front();
    EXPECT_EQ(F.op(), ir::OpKind::FusedMatMul);
    EXPECT_EQ(F.attrString("activation"), "Relu");
    EXPECT_EQ(F.attrInt("transB"), Gemm ? 1 : 0);
    EXPECT_EQ(F.output(0)->name(), "y");
  }
}

TEST(CpuFusedMatMul, MatchesTheReferenceAtTwoRowCounts) {
  REQUIRE_ONEDNN();
  constexpr int64_t K = 64, NOut = 96;
  struct Case {
    bool Gemm, Residual;
    const char *Act;
  };
  for (Case C : {Case{false, true, "Relu"}, Case{false, true, "Tanh"},
                 Case{false, true, "Clip"}, Case{true, false, "Gelu"},
                 Case{true, true, "Relu"}}) {
    std::unique_ptr<ir::Graph> G = block(C.Gemm, C.Residual, C.Act, K, NOut);
    auto Exe = backends::getBackend("cpu").compile(*G);
    unsigned Seed = 10;
    expectMatches(*G, *Exe, C.Gemm, 64, K, NOut, Seed);
    backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(S.Compiled) << G->name();
    EXPECT_EQ(S.FusedNodes, C.Residual ? 3 : 2) << G->name();
    // Then 40 rows (the program reshaped, or one for rows that vary), 64
    // again and 17.
    for (int64_t M : {40, 64, 17})
      expectMatches(*G, *Exe, C.Gemm, M, K, NOut, Seed += 2);
  }
}

TEST(CpuFusedMatMul, ASingleRowOfLargeWeightsKeepsItsGelu) {
  REQUIRE_ONEDNN();
  constexpr int64_t K = 512, NOut = 768; // 1.5 MiB of weights.
  std::unique_ptr<ir::Graph> G = block(false, true, "Gelu", K, NOut);
  auto Exe = backends::getBackend("cpu").compile(*G);
  expectMatches(*G, *Exe, false, 1, K, NOut, 30);
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->WeightPacks, 0)
      << "few rows read the weights where they lie";
  // Other rows: the eltwise step was made for its shape, so a program for
  // rows that vary (oneDNN's primitive on packed weights) serves them.
  for (int64_t M : {2, 1, 7})
    expectMatches(*G, *Exe, false, M, K, NOut, 32 + unsigned(M));
}

TEST(CpuFusedMatMul, RowsOfAMultipleOf512FloatsArePaddedForManyRows) {
  REQUIRE_ONEDNN();
  // Weights 64 x 1024: rows of 4 KiB, which oneDNN's gemm with rows given
  // at run time reads through few cache sets; for more rows than the own
  // loop takes it gets them padded (one copy), for few rows (a decoder's
  // step) it reads them where they lie.
  constexpr int64_t K = 64, NOut = 1024;
  for (bool Residual : {false, true}) {
    std::unique_ptr<ir::Graph> G = block(false, Residual, "Relu", K, NOut);
    auto Exe = backends::getBackend("cpu").compile(*G);
    unsigned Seed = 50;
    expectMatches(*G, *Exe, false, 24, K, NOut, Seed);
    int64_t Packs = backends::cpuExecutableStats(*Exe)->WeightPacks;
    expectMatches(*G, *Exe, false, 3, K, NOut, Seed += 2);
    EXPECT_EQ(backends::cpuExecutableStats(*Exe)->WeightPacks, Packs)
        << G->name() << ": three rows read the weights where they lie";
    for (int64_t M : {37, 100, 24, 9})
      expectMatches(*G, *Exe, false, M, K, NOut, Seed += 2);
    backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
    // On an AVX-512 CPU the backend's own product over weights packed in
    // panels serves many rows (CpuPackedGemmTest.cpp): packed at the first
    // compile without a residual (x has symbolic dims), at the first many
    // rows after the program for 3 rows with one (a residual and a Relu
    // both fused need a program for rows that vary); elsewhere a padded
    // copy does.
    bool PanelsAtCompile = backends::cpuRunsPackedProducts() && !Residual;
    EXPECT_EQ(S.WeightPacks, Packs + (PanelsAtCompile ? 0 : 1))
        << G->name() << ": one pack serves every row count above 8";
    EXPECT_GE(S.Reshapes, 1) << S.ReshapeRefusal;
  }
}

} // namespace
