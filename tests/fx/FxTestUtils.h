//===- FxTestUtils.h - Shared helpers of the fx tests -----------*- C++ -*-===//
//
// Helpers for tests/fx: run a traced graph on a backend directly (the
// reference one by default), compare its outputs with eager results
// (atol 1e-5 by default), and trace-and-compare a module in one call. Other
// fx test files (GraphModule, compile, leaf calls) may include it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/ir/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace nng::fxtest {

/// Runs G on Inputs (one per graph input) with the named backend.
inline std::vector<rt::Tensor> runGraph(const ir::Graph &G,
                                        const std::vector<Tensor> &Inputs,
                                        const std::string &Backend = "reference") {
  std::vector<rt::Tensor> In;
  for (const Tensor &T : Inputs)
    In.push_back(T.data().contiguous());
  return backends::getBackend(Backend).compile(G)->run(In);
}

/// Got and Want have the same shape and differ by at most Atol.
inline ::testing::AssertionResult allClose(const rt::Tensor &Got,
                                           const Tensor &Want,
                                           double Atol = 1e-5) {
  if (Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "shape " << Got.shape().toString() << " != expected "
           << Want.shape().toString();
  std::vector<double> G = Got.toDoubleVector();
  std::vector<double> W = Want.data().toDoubleVector();
  for (size_t I = 0; I < G.size(); ++I) {
    bool BothNaN = std::isnan(G[I]) && std::isnan(W[I]);
    bool SameInf = std::isinf(G[I]) && G[I] == W[I];
    if (!BothNaN && !SameInf && !(std::fabs(G[I] - W[I]) <= Atol))
      return ::testing::AssertionFailure()
             << "element " << I << ": " << G[I] << " != expected " << W[I]
             << " (atol " << Atol << ")";
  }
  return ::testing::AssertionSuccess();
}

/// Every tensor of forward's result, in order (as graph outputs are).
inline std::vector<Tensor> eagerOutputs(nn::ModuleBase &M,
                                        const std::vector<Tensor> &Inputs) {
  NoGradGuard G;
  std::vector<nn::Value> In(Inputs.begin(), Inputs.end());
  return M.call(In).tensors();
}

/// Runs the traced graph R on Inputs and compares with eager M.
inline void expectGraphEqualsEager(const fx::TraceResult &R,
                                   nn::ModuleBase &M,
                                   const std::vector<Tensor> &Inputs,
                                   double Atol = 1e-5) {
  std::vector<Tensor> Want = eagerOutputs(M, Inputs);
  std::vector<rt::Tensor> Got = runGraph(*R.Graph, Inputs);
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_TRUE(allClose(Got[I], Want[I], Atol)) << "output " << I;
}

/// Traces M with Specs (verifying the graph), runs it on Inputs and
/// compares with eager; returns the trace.
inline fx::TraceResult traceAndCompare(nn::ModuleBase &M,
                                       const std::vector<fx::InputSpec> &Specs,
                                       const std::vector<Tensor> &Inputs,
                                       double Atol = 1e-5) {
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(M, Specs);
  ir::verifyOrThrow(*R.Graph);
  expectGraphEqualsEager(R, M, Inputs, Atol);
  return R;
}

/// Number of nodes of op K in G.
inline size_t countOps(const ir::Graph &G, ir::OpKind K) {
  size_t N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

/// The names of G's initializers, in order.
inline std::vector<std::string> initializerNames(const ir::Graph &G) {
  std::vector<std::string> R;
  for (const ir::Value *V : G.initializers())
    R.push_back(V->name());
  return R;
}

/// Randomizes batch-norm statistics and affine parameters, so that eval
/// mode is not an identity.
inline void randomizeNorms(nn::ModuleBase &M) {
  NoGradGuard G;
  for (const auto &[Path, Sub] : M.named_modules()) {
    (void)Path;
    if (!Sub->as<nn::BatchNorm2d>())
      continue;
    for (const auto &[Key, T] : Sub->state_dict()) {
      auto S = T.sizes();
      if (Key == "running_mean" || Key == "bias")
        Tensor(T).copy_(randn(S) * 0.1);
      else if (Key == "running_var" || Key == "weight")
        Tensor(T).copy_(rand(S) + 0.5);
    }
  }
}

} // namespace nng::fxtest
