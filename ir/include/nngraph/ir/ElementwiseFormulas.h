//===- ElementwiseFormulas.h - Each elementwise formula, once ---*- C++ -*-===//
//
// The elementwise ops that are more than one operation (Relu, LeakyRelu,
// Clip, HardSigmoid, HardSwish, Elu, both GELUs, Reciprocal) are written
// here once, over an algebra M that says what a value is and how the
// primitive operations compute. Every executor instantiates the same
// formula with its own algebra:
//
//   - ScalarMath<double>: the reference kernels (standalone ops and the
//     fused ops' activations), which compute in double;
//   - ScalarMath<float>: the cpu backend's own loops (the activations it
//     runs after a primitive) and eager's fast path;
//   - the kernel IR's builder (RegionKernel.cpp's table, BuilderMath): the
//     fused regions, JIT-compiled for CPUs and generated for CUDA.
//
// So the numerics are the same everywhere: NaN through a clamp, -0 through
// Relu, std::min's answer for a NaN (HardSigmoid gives 1), the order of the
// roundings. An algebra provides: a value type V; c(double), a constant;
// add, sub, mul, div; lt and gt, giving a condition; select(cond, a, b);
// and, where a formula uses them, exp, expm1, erf and tanh. Minimum and
// maximum are std::min's and std::max's selects, not an algebra's own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/FusedActivation.h"

#include <cmath>

namespace nng::ir {

/// The algebra of plain C++ arithmetic in T (float, double, or an integer
/// type for the formulas that only compare and select).
template <typename T> struct ScalarMath {
  using V = T;
  static constexpr V c(double X) { return static_cast<T>(X); }
  static constexpr V add(V A, V B) { return A + B; }
  static constexpr V sub(V A, V B) { return A - B; }
  static constexpr V mul(V A, V B) { return A * B; }
  static constexpr V div(V A, V B) { return A / B; }
  static constexpr bool lt(V A, V B) { return A < B; }
  static constexpr bool gt(V A, V B) { return A > B; }
  static constexpr V select(bool C, V A, V B) { return C ? A : B; }
  static V exp(V X) { return std::exp(X); }
  static V expm1(V X) { return std::expm1(X); }
  static V erf(V X) { return std::erf(X); }
  static V tanh(V X) { return std::tanh(X); }
};

namespace formula {

/// std::min(A, B): B when B < A, else A (so a NaN B gives A).
template <typename M>
typename M::V minOf(const M &D, typename M::V A, typename M::V B) {
  return D.select(D.lt(B, A), B, A);
}
/// std::max(A, B): B when A < B, else A (so a NaN B gives A).
template <typename M>
typename M::V maxOf(const M &D, typename M::V A, typename M::V B) {
  return D.select(D.lt(A, B), B, A);
}

/// Relu: x < 0 ? 0 : x (NaN and -0 stay).
template <typename M> typename M::V relu(const M &D, typename M::V X) {
  return D.select(D.lt(X, D.c(0)), D.c(0), X);
}

/// LeakyRelu: x < 0 ? x * alpha : x.
template <typename M>
typename M::V leakyRelu(const M &D, typename M::V X, double Alpha) {
  return D.select(D.lt(X, D.c(0)), D.mul(X, D.c(Alpha)), X);
}

/// Clip: x < lo ? lo : x, then > hi ? hi : x. NaN stays NaN; lo > hi gives
/// hi everywhere, as ONNX says. A missing bound is an infinity (whose
/// compare is false for every x, NaN included: it folds away).
template <typename M>
typename M::V clip(const M &D, typename M::V X, typename M::V Lo,
                   typename M::V Hi) {
  X = D.select(D.lt(X, Lo), Lo, X);
  return D.select(D.gt(X, Hi), Hi, X);
}

/// HardSigmoid: max(0, min(1, alpha x + beta)), std::min's and std::max's
/// answers: a NaN gives 1.
template <typename M>
typename M::V hardSigmoid(const M &D, typename M::V X, double Alpha,
                          double Beta) {
  typename M::V Y = D.add(D.mul(D.c(Alpha), X), D.c(Beta));
  return maxOf(D, D.c(0), minOf(D, D.c(1), Y));
}

/// HardSwish: x hardSigmoid(x) with alpha 1/6, beta 1/2.
template <typename M> typename M::V hardSwish(const M &D, typename M::V X) {
  return D.mul(X, hardSigmoid(D, X, 1.0 / 6.0, 0.5));
}

/// Elu: x < 0 ? alpha (exp(x) - 1) : x.
template <typename M>
typename M::V elu(const M &D, typename M::V X, double Alpha) {
  return D.select(D.lt(X, D.c(0)), D.mul(D.c(Alpha), D.expm1(X)), X);
}

/// Sigmoid: 1 / (1 + exp(-x)). (The kernel IR has it as one instruction,
/// which its code generators compute their own way and its interpreter
/// computes by this formula.)
template <typename M> typename M::V sigmoid(const M &D, typename M::V X) {
  return D.div(D.c(1), D.add(D.c(1), D.exp(D.sub(D.c(0), X))));
}

/// GELU: 0.5 x (1 + erf(x / sqrt(2))), the division as a product by the
/// reciprocal.
template <typename M> typename M::V gelu(const M &D, typename M::V X) {
  typename M::V Inner = D.erf(D.mul(X, D.c(1.0 / GeluSqrt2)));
  return D.mul(D.mul(D.c(0.5), X), D.add(D.c(1), Inner));
}

/// GELU's tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
template <typename M> typename M::V geluTanh(const M &D, typename M::V X) {
  typename M::V X3 = D.mul(D.mul(X, X), X);
  typename M::V T = D.add(X, D.mul(D.c(GeluTanhCubic), X3));
  typename M::V Inner = D.tanh(D.mul(D.c(GeluTanhScale), T));
  return D.mul(D.mul(D.c(0.5), X), D.add(D.c(1), Inner));
}

/// Reciprocal: 1 / x.
template <typename M> typename M::V reciprocal(const M &D, typename M::V X) {
  return D.div(D.c(1), X);
}

} // namespace formula

} // namespace nng::ir
