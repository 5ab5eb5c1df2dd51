//===- FusionTestUtils.h - Numeric checks of fusion passes ------*- C++ -*-===//
//
// Helpers for the folding, fusion and recovery pass tests: parse a graph
// whose weights are elided and fill them with deterministic random values
// (positive ones for initializers named "*var", for BatchNorm variances),
// run a pass, and compare the outputs before and after on the reference
// backend with deterministic random inputs (symbolic dims bound to 3). A
// local stand-in until the shared numerical-equivalence helper
// (NumericCheck.h) is available.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/passes/Debug.h"
#include "nngraph/passes/PassRegistry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

namespace nng::fusion_test {

/// A tensor of shape S and dtype T, uniform in [Lo, Hi), from Seed.
inline nng::Tensor randomTensor(const Shape &S, DType T, uint32_t Seed,
                                double Lo = -1.0, double Hi = 1.0) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<double> U(Lo, Hi);
  nng::Tensor X = nng::Tensor::empty(S, T);
  for (int64_t I = 0; I < X.numel(); ++I)
    X.setFlat(I, U(Rng));
  return X;
}

/// Parses Text, filling every elided initializer with random values: in
/// [0.2, 2) for names ending in "var", else in [-1, 1).
inline std::unique_ptr<ir::Graph> parseWithRandomWeights(std::string_view Text,
                                                         uint32_t Seed = 7) {
  ir::ParseOptions O;
  uint32_t Next = Seed;
  O.ResolveElided = [&](const std::string &Name, const ir::TensorType &T,
                        const std::string &) {
    bool Var = Name.size() >= 3 && Name.substr(Name.size() - 3) == "var";
    return randomTensor(*T.staticShape(), T.dtype(), Next++, Var ? 0.2 : -1.0,
                        Var ? 2.0 : 1.0);
  };
  return ir::parseGraph(Text, "<test>", O);
}

/// Deterministic inputs for G, uniform in [-2, 2); non-static dims are 3.
inline std::vector<nng::Tensor> randomInputs(const ir::Graph &G,
                                             uint32_t Seed = 11) {
  std::vector<nng::Tensor> Result;
  for (const ir::Value *V : G.inputs()) {
    Shape S;
    for (const ir::Dim &D : V->type().dims())
      S.push_back(D.isStatic() ? D.value() : 3);
    Result.push_back(randomTensor(S, V->type().dtype(), Seed++, -2.0, 2.0));
  }
  return Result;
}

/// Expects equal dtypes and shapes and values within Tol (relative to
/// max(1, |want|)).
inline void expectClose(const nng::Tensor &Got, const nng::Tensor &Want,
                        double Tol, const std::string &What) {
  ASSERT_EQ(Got.dtype(), Want.dtype()) << What;
  ASSERT_EQ(Got.shape(), Want.shape()) << What;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    EXPECT_NEAR(G, W, Tol * std::max(1.0, std::fabs(W)))
        << What << " at flat index " << I;
  }
}

/// What running a pass did.
struct PassRun {
  bool Changed = false;
  passes::Statistics Stats;
  std::string Debug; ///< --debug-only output of the pass.
  std::string Text;  ///< The graph printed after the pass.
};

/// Runs pass Name on G (verifying the result) with its debug output
/// captured, and checks that G computes what it computed before within Tol
/// on random inputs.
inline PassRun runAndCompare(ir::Graph &G, std::string_view Name,
                             double Tol = 1e-5, uint32_t Seed = 11) {
  std::vector<nng::Tensor> Ins = randomInputs(G, Seed);
  std::vector<nng::Tensor> Before = backends::runReference(G, Ins);
  auto P = passes::createPass(Name);
  std::ostringstream Debug;
  passes::setDebugOnly({std::string(Name)});
  passes::setDebugStream(&Debug);
  PassRun R;
  try {
    R.Changed = P->run(G);
  } catch (...) {
    passes::setDebugOnly({});
    passes::setDebugStream(nullptr);
    throw;
  }
  passes::setDebugOnly({});
  passes::setDebugStream(nullptr);
  R.Stats = P->statistics();
  R.Debug = Debug.str();
  ir::verifyOrThrow(G);
  R.Text = ir::printGraph(G);
  std::vector<nng::Tensor> After = backends::runReference(G, Ins);
  EXPECT_EQ(After.size(), Before.size());
  for (size_t I = 0; I < Before.size() && I < After.size(); ++I)
    expectClose(After[I], Before[I], Tol,
                "output " + G.outputs()[I]->name() + " after " +
                    std::string(Name));
  return R;
}

/// The statistic Name of R, 0 when absent.
inline int64_t stat(const PassRun &R, const std::string &Name) {
  auto It = R.Stats.find(Name);
  return It == R.Stats.end() ? 0 : It->second;
}

/// How many nodes of op K G has.
inline int countOps(const ir::Graph &G, ir::OpKind K) {
  int N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

} // namespace nng::fusion_test
