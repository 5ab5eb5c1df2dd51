//===- SimplifyTestUtils.h - Numeric checks for the simplification passes -===//
//
// Helpers for the canonicalize, cse, dedup-initializers, fuse-transposes and
// fuse-reshapes tests: parse a graph, run a pass on it, and compare the
// outputs before and after on the reference backend with deterministic
// random inputs (symbolic dims bound to 3). A local stand-in until the
// shared numerical-equivalence helper (NumericCheck.h) is used everywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/rewrite/Pass.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace nng::simplify_test {
using rt::Tensor;

/// Deterministic inputs for G: floats uniform in [-2, 2], integers in
/// [0, 4], bools fair; every non-static dim is 3.
inline std::vector<nng::rt::Tensor> randomInputs(const ir::Graph &G,
                                             uint32_t Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<double> Real(-2.0, 2.0);
  std::uniform_int_distribution<int> Int(0, 4);
  std::vector<nng::rt::Tensor> Result;
  for (const ir::Value *V : G.inputs()) {
    Shape S;
    for (const ir::Dim &D : V->type().dims())
      S.push_back(D.isStatic() ? D.value() : 3);
    DType T = V->type().dtype();
    nng::rt::Tensor X = nng::rt::Tensor::empty(S, T);
    for (int64_t I = 0; I < X.numel(); ++I)
      X.setFlat(I, isFloatingPoint(T) ? Real(Rng)
                   : T == DType::Bool ? double(Int(Rng) % 2)
                                      : double(Int(Rng)));
    Result.push_back(X);
  }
  return Result;
}

/// Expects A and B to have equal dtypes and shapes and close values.
inline void expectClose(const nng::rt::Tensor &A, const nng::rt::Tensor &B,
                        const std::string &What) {
  ASSERT_EQ(A.dtype(), B.dtype()) << What;
  ASSERT_EQ(A.shape(), B.shape()) << What;
  for (int64_t I = 0; I < A.numel(); ++I) {
    double X = A.getFlat(I), Y = B.getFlat(I);
    if (std::isnan(X) && std::isnan(Y))
      continue;
    EXPECT_NEAR(X, Y, 1e-5 + 1e-5 * std::fabs(X))
        << What << " at flat index " << I;
  }
}

/// Parses Text, runs P on it (expecting Changed), verifies the result, and
/// compares every output before and after on a few random input sets; the
/// output names must survive. Returns the rewritten graph.
inline std::unique_ptr<ir::Graph>
expectSameOutputs(std::string_view Text, passes::Pass &P, bool Changed = true) {
  std::unique_ptr<ir::Graph> Before = ir::parseGraph(Text);
  std::unique_ptr<ir::Graph> After = Before->clone();
  EXPECT_EQ(P.run(*After), Changed) << ir::printGraph(*After);
  ir::verifyOrThrow(*After);
  EXPECT_EQ(After->outputs().size(), Before->outputs().size());
  for (size_t I = 0; I < Before->outputs().size(); ++I)
    EXPECT_EQ(After->outputs()[I]->name(), Before->outputs()[I]->name());
  for (uint32_t Seed : {1u, 2u, 3u}) {
    std::vector<nng::rt::Tensor> In = randomInputs(*Before, Seed);
    std::vector<nng::rt::Tensor> Want = backends::runReference(*Before, In);
    std::vector<nng::rt::Tensor> Got = backends::runReference(*After, In);
    EXPECT_EQ(Want.size(), Got.size());
    for (size_t I = 0; I < Want.size() && I < Got.size(); ++I)
      expectClose(Want[I], Got[I],
                  "output %" + Before->outputs()[I]->name() + " (seed " +
                      std::to_string(Seed) + ")");
  }
  return After;
}

/// The number of nodes of op K in G.
inline size_t countOps(const ir::Graph &G, ir::OpKind K) {
  size_t N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

/// Statistic Name of P, or 0 when it was never bumped.
inline int64_t stat(const passes::Pass &P, std::string_view Name) {
  auto It = P.statistics().find(Name);
  return It == P.statistics().end() ? 0 : It->second;
}

} // namespace nng::simplify_test
