//===- EagerTestUtils.h - Helpers of the eager tests ------------*- C++ -*-===//
//
// Random f64 inputs for gradient checks (values kept away from the kinks
// of relu/abs/max when asked), and value comparisons.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nng::test {

/// Uniform values in [Lo, Hi) as an f64 tensor requiring grad.
inline Tensor uniformInput(const std::vector<int64_t> &Sizes, double Lo = -1,
                           double Hi = 1, bool RequiresGrad = true) {
  Tensor T = rand(Sizes, DType::F64) * (Hi - Lo) + Lo;
  T = T.detach();
  if (RequiresGrad)
    T.requires_grad_(true);
  return T;
}

/// Values with magnitude in [0.2, 1.2) and random sign (no kinks at 0).
inline Tensor awayFromZero(const std::vector<int64_t> &Sizes) {
  Tensor U = rand(Sizes, DType::F64);
  Tensor S = rand(Sizes, DType::F64);
  Tensor T = where(S > 0.5, U + 0.2, neg(U + 0.2)).detach();
  T.requires_grad_(true);
  return T;
}

inline void expectValues(const Tensor &T, const std::vector<double> &Want,
                         double Tol = 1e-6) {
  std::vector<double> Got = T.to_vector<double>();
  ASSERT_EQ(Got.size(), Want.size()) << T.toString();
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], Tol) << "element " << I << " of "
                                      << T.toString();
}

} // namespace nng::test
