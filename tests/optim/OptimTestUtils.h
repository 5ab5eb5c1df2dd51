//===- OptimTestUtils.h - Helpers of the optimizer tests --------*- C++ -*-===//
//
// Small f32 parameter vectors and the message of an expected nng::Error;
// value comparisons come from the eager tests' helpers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "eager/EagerTestUtils.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/runtime/Error.h"

#include <string>
#include <vector>

namespace nng::test {

/// A 1-D f32 tensor holding V (a leaf requiring grad unless told not to).
inline Tensor vec(const std::vector<float> &V, bool RequiresGrad = true) {
  int64_t N = static_cast<int64_t>(V.size());
  return Tensor(rt::Tensor::fromVector<float>(V, Shape{N}), RequiresGrad);
}

/// The message of the nng::Error that Fn throws ("" if none).
template <typename F> std::string errorOf(F &&Fn) {
  try {
    Fn();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

} // namespace nng::test
