//===- FusionTestUtils.h - Numeric checks of fusion passes ------*- C++ -*-===//
//
// Helpers for the folding, fusion and recovery pass tests: parse a graph
// whose weights are elided and fill them with deterministic random values
// (positive ones for initializers named "*var", for BatchNorm variances),
// run a pass, and compare the outputs before and after on the reference
// backend with NumericCheck (symbolic dims bound to 3).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/passes/NumericCheck.h"
#include "nngraph/passes/PassRegistry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

namespace nng::fusion_test {
using rt::Tensor;

/// A tensor of shape S and dtype T, uniform in [Lo, Hi), from Seed.
inline nng::rt::Tensor randomTensor(const Shape &S, DType T, uint32_t Seed,
                                double Lo = -1.0, double Hi = 1.0) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<double> U(Lo, Hi);
  nng::rt::Tensor X = nng::rt::Tensor::empty(S, T);
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

/// What running a pass did.
struct PassRun {
  bool Changed = false;
  passes::Statistics Stats;
  std::string Debug; ///< --debug-only output of the pass.
  std::string Text;  ///< The graph printed after the pass.
};

/// Runs pass Name on G (verifying the result) with its debug output
/// captured, and checks with NumericCheck that G computes what it computed
/// before, within Tol (absolute and relative), on deterministic inputs
/// (symbolic dims bound to 3).
inline PassRun runAndCompare(ir::Graph &G, std::string_view Name,
                             double Tol = 1e-5, uint32_t Seed = 11) {
  std::unique_ptr<ir::Graph> Before = G.clone();
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
  passes::NumericCheckOptions O;
  O.Seed = Seed;
  O.Trials = 2;
  O.RTol = O.ATol = Tol;
  for (const ir::Value *V : Before->inputs())
    for (const ir::Dim &D : V->type().dims())
      if (D.isSymbolic())
        O.Dims[D.symbol()] = 3;
  passes::NumericCheckResult C = passes::compareOnReference(*Before, G, O);
  EXPECT_TRUE(C.Ok) << "after " << Name << ": " << C.Message;
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
