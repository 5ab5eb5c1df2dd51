//===- Gradcheck.h - Checking gradients against finite differences -*- C++ -*-===//
//
// torch.autograd.gradcheck in C++: the analytical Jacobian (one backward
// per output element) of a function of tensors is compared with central
// finite differences computed in f64. The result says which input, which
// element and which output element disagree, by how much.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace nng::autograd {

/// The outcome of a gradcheck.
struct GradcheckResult {
  bool Ok = true;
  /// Empty when Ok; otherwise names the input, element, output element and
  /// both values.
  std::string Message;
  /// Largest |analytical - numerical| seen.
  double MaxAbsError = 0;
  explicit operator bool() const { return Ok; }
};

/// A differentiable function of tensors returning one tensor.
using GradcheckFn = std::function<Tensor(const std::vector<Tensor> &)>;

/// Checks the gradients of Fn at Inputs with respect to the inputs that
/// require grad: every Jacobian entry must satisfy
/// |analytical - numerical| <= Atol + Rtol * |numerical|, where numerical
/// is (f(x + Eps) - f(x - Eps)) / (2 Eps). Floating inputs are copied to
/// f64 first (the check is meant for f64); integer inputs pass through.
GradcheckResult gradcheck(const GradcheckFn &Fn,
                          const std::vector<Tensor> &Inputs, double Eps = 1e-6,
                          double Atol = 1e-5, double Rtol = 1e-3);

} // namespace nng::autograd
