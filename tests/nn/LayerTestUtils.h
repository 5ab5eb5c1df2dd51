//===- LayerTestUtils.h - Helpers of the layer tests ---------- -*- C++ -*-===//
//
// Shared by tests/nn/Layer*Test.cpp: deterministic tensors and parameter
// fills that tests/nn's reference values were computed with in PyTorch
// 1.13 (v_i = sin(0.7 i + offset) * scale, rounded to the dtype; the
// parameters in named_parameters() order get offsets 1, 2, ...), value
// comparison, the state_dict signature (key, shape, dtype), and gradient
// checks of a module: input gradients with autograd::gradcheck, parameter
// gradients by central differences on the module itself (f64).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Gradcheck.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Module.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace nng::test {

/// sin(0.7 i + Offset) * Scale in the given shape.
inline Tensor seq(const std::vector<int64_t> &Shape, double Offset,
                  double Scale = 1.0, DType T = DType::F32) {
  int64_t N = 1;
  for (int64_t S : Shape)
    N *= S;
  std::vector<double> V(N);
  for (int64_t I = 0; I < N; ++I)
    V[I] = std::sin(0.7 * static_cast<double>(I) + Offset) * Scale;
  return tensor(V, Shape, T);
}

/// Fills every parameter (named_parameters order j) with seq(shape, j+1,
/// Scale), as the reference script does.
inline void fillParams(nn::ModuleBase &M, double Scale = 0.5) {
  NoGradGuard NoGrad;
  int J = 0;
  for (auto &[Name, P] : M.named_parameters()) {
    Tensor Dst = P;
    Dst.copy_(seq(P.sizes(), J + 1, Scale, P.dtype()));
    ++J;
  }
}

/// Expects T's shape and values (row-major) within Tol.
inline void expectValues(const Tensor &T, const std::vector<int64_t> &Shape,
                         const std::vector<double> &Expected,
                         double Tol = 1e-5) {
  ASSERT_TRUE(T.defined());
  ASSERT_EQ(T.sizes(), Shape);
  std::vector<double> Got = T.to_vector<double>();
  ASSERT_EQ(Got.size(), Expected.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Expected[I], Tol) << "element " << I;
}

/// "key [d0, d1] dtype" per state_dict entry, in order.
inline std::vector<std::string> stateSignature(const nn::ModuleBase &M) {
  std::vector<std::string> R;
  for (const auto &[Key, T] : M.state_dict())
    R.push_back(Key + " " + T.shape().toString() + " " +
                std::string(dtypeName(T.dtype())));
  return R;
}

/// Checks d(sum(Fn(inputs) * R))/d(parameter) of M (already f64) against
/// central differences for every parameter element (up to MaxPerParam of
/// each, spread evenly), with R a fixed pseudo-random weighting.
inline void checkParameterGradients(nn::ModuleBase &M,
                                    const std::function<Tensor()> &Fn,
                                    int64_t MaxPerParam = 40,
                                    double Tol = 1e-6) {
  Tensor Out = Fn();
  Tensor R = seq(Out.sizes(), 0.3, 1.0, Out.dtype());
  auto Loss = [&]() { return sum(Fn() * R).item<double>(); };
  M.zero_grad();
  sum(Out * R).backward();
  for (auto &[Name, P] : M.named_parameters()) {
    if (!P.requires_grad())
      continue;
    Tensor G = P.grad();
    ASSERT_TRUE(G.defined()) << "no gradient for " << Name;
    std::vector<double> GV = G.to_vector<double>();
    rt::Tensor Data = P.data();
    int64_t N = P.numel();
    int64_t Step = std::max<int64_t>(1, N / MaxPerParam);
    for (int64_t I = 0; I < N; I += Step) {
      double X0 = Data.getFlat(I);
      const double Eps = 1e-6;
      Data.setFlat(I, X0 + Eps);
      double Plus = Loss();
      Data.setFlat(I, X0 - Eps);
      double Minus = Loss();
      Data.setFlat(I, X0);
      double Numerical = (Plus - Minus) / (2 * Eps);
      EXPECT_NEAR(GV[I], Numerical, Tol + 1e-4 * std::abs(Numerical))
          << "parameter " << Name << " element " << I;
    }
  }
}

/// Input gradients of a one-input module through autograd::gradcheck.
inline void checkInputGradients(
    const std::function<Tensor(const std::vector<Tensor> &)> &Fn,
    const std::vector<Tensor> &Inputs) {
  autograd::GradcheckResult R = autograd::gradcheck(Fn, Inputs);
  EXPECT_TRUE(R.Ok) << R.Message;
}

/// Runs Fn and expects an nng::Error whose message contains every Needle.
inline void expectError(const std::function<void()> &Fn,
                        const std::vector<std::string> &Needles) {
  try {
    Fn();
    ADD_FAILURE() << "expected an nng::Error";
  } catch (const Error &E) {
    std::string What = E.what();
    for (const std::string &N : Needles)
      EXPECT_NE(What.find(N), std::string::npos)
          << "'" << N << "' not in: " << What;
  }
}

} // namespace nng::test
