//===- CpuPackedGemmTest.cpp - The own product over packed weights --------===//
//
// On an AVX-512 CPU a linear layer of a graph whose rows vary runs the cpu
// backend's own product over its weights packed once in panels of 64
// columns (LoopsPackedGemm.cpp), for any number of rows above the few-rows
// loop's, with its bias, a residual and a Relu, Clip or LeakyRelu fused.
// Checked against the reference backend (NaN where the reference has NaN)
// on one executable at row counts of every remainder of the 6-row blocks,
// few rows (oneDNN's primitive with rows given at run time) and many again;
// widths with a partial last panel; a K of more than one pass (2100 rows
// of weights); Gemm's transposed weights; the schedule naming the own
// loop; and one pack of the weights for every row count.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace nng;
using namespace nng::cputest;

namespace {

/// y = act(x . W + b (+ r)), x f32[N, S, K] with N and S symbolic; or
/// Gemm's x f32[N, K] . W^T, W given as [NOut, K].
std::unique_ptr<ir::Graph> layer(int64_t K, int64_t NOut, bool Gemm,
                                 bool Residual, std::string_view Act) {
  auto G = std::make_unique<ir::Graph>();
  G->setName(std::string(Gemm ? "gemm " : "matmul ") + std::to_string(K) + "x" +
             std::to_string(NOut) + (Residual ? " residual " : " ") +
             std::string(Act));
  ir::Value *Y = addLinearLayer(*G, Gemm, Residual, K, NOut, 0.1);
  if (Act == "Relu") {
    Y = add(*G, ir::OpKind::Relu, {Y}, "y");
  } else if (Act == "Clip") {
    ir::Value *Lo = G->addInitializer("lo", Tensor::scalar(-0.25f));
    ir::Value *Hi = G->addInitializer("hi", Tensor::scalar(0.5f));
    Y = add(*G, ir::OpKind::Clip, {Y, Lo, Hi}, "y");
  } else if (Act == "LeakyRelu") {
    ir::AttrMap A;
    A.set("alpha", ir::Attribute(0.125f));
    Y = add(*G, ir::OpKind::LeakyRelu, {Y}, "y", A);
  }
  G->addOutput(Y);
  ir::inferTypes(*G);
  return G;
}

/// Runs G on Exe and on the reference at M rows (a NaN and an infinity in
/// x's first row when M > 6); they agree within 1e-5 + 1e-4 |want|, NaN
/// where the reference has NaN.
void expectMatches(const ir::Graph &G, backends::Executable &Exe, bool Gemm,
                   int64_t M, int64_t K, int64_t NOut, unsigned Seed) {
  Tensor X = rnd(Gemm ? Shape({M, K}) : Shape({1, M, K}), Seed);
  if (M > 6) {
    X.setFlat(3, NAN);
    X.setFlat(K + 5, INFINITY);
  }
  std::vector<Tensor> In = {X};
  if (G.inputs().size() > 1)
    In.push_back(rnd(Gemm ? Shape({M, NOut}) : Shape({1, M, NOut}), Seed + 1));
  std::vector<Tensor> Want = backends::runReference(G, In);
  std::vector<Tensor> Got = Exe.run(In);
  ASSERT_EQ(Got.size(), 1u);
  ASSERT_EQ(Got[0].shape(), Want[0].shape());
  for (int64_t I = 0; I < Want[0].numel(); ++I) {
    double W = Want[0].getFlat(I), V = Got[0].getFlat(I);
    if (W == V)
      continue; // Infinities too.
    if (std::isnan(W)) {
      ASSERT_TRUE(std::isnan(V)) << G.name() << " at " << M << " rows, element "
                                 << I << ": " << V << ", not NaN";
      continue;
    }
    ASSERT_NEAR(V, W, 1e-5 + 1e-4 * std::fabs(W))
        << G.name() << " at " << M << " rows, element " << I;
  }
}

TEST(CpuPackedGemm, LinearLayersOfVaryingRowsMatchTheReference) {
  REQUIRE_ONEDNN();
  struct Case {
    int64_t K, NOut;
    bool Gemm, Residual;
    const char *Act;
  };
  for (Case C :
       {Case{64, 100, false, false, "Relu"}, Case{96, 192, false, true, "None"},
        Case{48, 70, false, false, "Clip"},
        Case{40, 64, false, false, "LeakyRelu"},
        Case{2100, 64, false, true, "None"},
        Case{72, 130, true, false, "Relu"}}) {
    std::unique_ptr<ir::Graph> G =
        layer(C.K, C.NOut, C.Gemm, C.Residual, C.Act);
    auto Exe = backends::getBackend("cpu").compile(*G);
    unsigned Seed = 70;
    expectMatches(*G, *Exe, C.Gemm, 30, C.K, C.NOut, Seed);
    backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(S.Compiled) << G->name();
    int64_t Packs = S.WeightPacks;
    std::optional<std::string> Schedule = backends::cpuSchedule(*Exe);
    ASSERT_TRUE(Schedule);
    if (backends::cpuRunsPackedProducts())
      EXPECT_NE(Schedule->find("loop (packed product)"), std::string::npos)
          << G->name() << "\n"
          << *Schedule;
    else
      std::printf("SKIPPED (checked against the reference only): the own "
                  "packed product needs AVX-512 (x86-64-v4) and a GCC build, "
                  "which this one lacks\n");
    // Every remainder of the 6-row blocks, above the 8 rows of the few-rows
    // forms: no pack beyond the panels.
    for (int64_t M : {9, 10, 11, 12, 13, 14})
      expectMatches(*G, *Exe, C.Gemm, M, C.K, C.NOut, Seed += 2);
    EXPECT_EQ(backends::cpuExecutableStats(*Exe)->WeightPacks, Packs)
        << G->name() << ": the panels serve every row count";
    // Few rows: oneDNN with its rows given at run time (Gemm's transposed
    // weights get its layout once); then many again, on the panels.
    for (int64_t M : {3, 1})
      expectMatches(*G, *Exe, C.Gemm, M, C.K, C.NOut, Seed += 2);
    Packs = backends::cpuExecutableStats(*Exe)->WeightPacks;
    for (int64_t M : {100, 37})
      expectMatches(*G, *Exe, C.Gemm, M, C.K, C.NOut, Seed += 2);
    S = *backends::cpuExecutableStats(*Exe);
    EXPECT_EQ(S.Specializations, 1) << G->name() << ": " << S.ReshapeRefusal;
    EXPECT_EQ(S.WeightPacks, Packs)
        << G->name() << ": many rows again pack nothing";
  }
}

} // namespace
