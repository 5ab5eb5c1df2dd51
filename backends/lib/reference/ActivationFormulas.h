//===- ActivationFormulas.h - The reference's activations, once -*- C++ -*-===//
//
// The scalar formulas of the activations, in double, as the reference
// computes them: the standalone ops' kernels (KernelsUnary.cpp) and the
// fused ops' activations (KernelsFused.cpp, the 'activation' of
// nng.FusedConv, FusedGemm and FusedMatMul) both call these, so a fused
// activation rounds exactly as its standalone op does. (The recurrent ops'
// activations are ONNX's RNN definitions, some of which differ: their own
// table, RecurrentActivations.h.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/FusedActivation.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::reference::activation {

inline double relu(double X) { return X < 0 ? 0.0 : X; }
inline double leakyRelu(double X, double Alpha) {
  return X < 0 ? Alpha * X : X;
}
inline double sigmoid(double X) { return 1.0 / (1.0 + std::exp(-X)); }
/// min > max gives max everywhere, as Clip does; NaN stays NaN.
inline double clip(double X, double Lo, double Hi) {
  if (X < Lo)
    X = Lo;
  if (X > Hi)
    X = Hi;
  return X;
}
inline double hardSigmoid(double X, double Alpha, double Beta) {
  return std::max(0.0, std::min(1.0, Alpha * X + Beta));
}
inline double hardSwish(double X) {
  return X * std::max(0.0, std::min(1.0, X / 6.0 + 0.5));
}
inline double elu(double X, double Alpha) {
  return X < 0 ? Alpha * std::expm1(X) : X;
}
inline double gelu(double X) {
  return 0.5 * X * (1.0 + std::erf(X / ir::GeluSqrt2));
}
inline double geluTanh(double X) {
  double Cube = ir::GeluTanhCubic * X * X * X;
  return 0.5 * X * (1.0 + std::tanh(ir::GeluTanhScale * (X + Cube)));
}

} // namespace nng::backends::reference::activation
