//===- DerivativesArithmetic.cpp - Backward of elementwise math ------------===//
//
// Backward formulas of the broadcasting binary ops (Add, Sub, Mul, Div, Pow,
// Max, Min, Sum, Mean, Where), the unary math ops (Neg, Exp, Log, Sqrt,
// Reciprocal, Abs, Sin, Cos, Erf, Sign, Tanh, Sigmoid), Clip, Cast and
// Identity. A gradient flowing into a broadcast operand is summed back to
// that operand's shape with sumToShape.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "Derivatives.h"
#include "nngraph/frontend/TensorOps.h"

#include <cmath>

namespace nng::autograd {

using detail::sumToShape;
using ir::OpKind;

namespace {

using Grads = std::vector<Tensor>;

const Tensor &in(const BackwardContext &C, size_t I) { return C.Inputs[I]; }
const Tensor &out(const BackwardContext &C) { return C.Outputs[0]; }
const Tensor &gout(const BackwardContext &C) { return C.GradOutputs[0]; }

Tensor zeroOf(const Tensor &T) { return detail::scalarOf(T.dtype(), 0.0); }

/// G reduced to the shape of input I.
Tensor to(const BackwardContext &C, size_t I, const Tensor &G) {
  return sumToShape(G, in(C, I).shape());
}

Grads addBackward(const BackwardContext &C) {
  Grads R(2);
  if (C.needs(0))
    R[0] = to(C, 0, gout(C));
  if (C.needs(1))
    R[1] = to(C, 1, gout(C));
  return R;
}

Grads subBackward(const BackwardContext &C) {
  Grads R(2);
  if (C.needs(0))
    R[0] = to(C, 0, gout(C));
  if (C.needs(1))
    R[1] = to(C, 1, neg(gout(C)));
  return R;
}

Grads mulBackward(const BackwardContext &C) {
  Grads R(2);
  if (C.needs(0))
    R[0] = to(C, 0, gout(C) * in(C, 1));
  if (C.needs(1))
    R[1] = to(C, 1, gout(C) * in(C, 0));
  return R;
}

Grads divBackward(const BackwardContext &C) {
  Grads R(2);
  if (C.needs(0))
    R[0] = to(C, 0, gout(C) / in(C, 1));
  if (C.needs(1))
    R[1] = to(C, 1, neg(gout(C) * out(C) / in(C, 1)));
  return R;
}

Grads powBackward(const BackwardContext &C) {
  Grads R(2);
  const Tensor &X = in(C, 0), &E = in(C, 1), &G = gout(C);
  if (C.needs(0)) {
    // E * X^(E-1); where E == 0 the gradient is 0 (also at X == 0).
    Tensor D = E.to(X.dtype()) * pow(X, E.to(X.dtype()) - 1.0);
    R[0] = to(C, 0, where(eq(E, zeros({}, E.dtype())), zeroOf(X), G * D));
  }
  if (C.needs(1)) {
    // Z * log(X); 0 where X == 0 (PyTorch's convention for E >= 0).
    Tensor D = out(C) * log(X);
    R[1] = to(C, 1, where(eq(X, zeroOf(X)), zeroOf(G), G * D));
  }
  return R;
}

/// Max/Min: each input gets the gradient where it equals the result,
/// shared evenly between tied inputs (PyTorch's maximum/minimum).
Grads extremumBackward(const BackwardContext &C) {
  size_t N = C.Inputs.size();
  Grads R(N);
  std::vector<Tensor> Masks;
  Tensor Count;
  for (size_t I = 0; I < N; ++I) {
    Tensor M = eq(in(C, I), out(C)).to(gout(C).dtype());
    Count = Count.defined() ? Count + M : M;
    Masks.push_back(M);
  }
  for (size_t I = 0; I < N; ++I)
    if (C.needs(I))
      R[I] = to(C, I, gout(C) * Masks[I] / Count);
  return R;
}

Grads variadicSumBackward(const BackwardContext &C) {
  Grads R(C.Inputs.size());
  for (size_t I = 0; I < R.size(); ++I)
    if (C.needs(I))
      R[I] = to(C, I, gout(C));
  return R;
}

Grads variadicMeanBackward(const BackwardContext &C) {
  Grads R(C.Inputs.size());
  double N = static_cast<double>(R.size());
  for (size_t I = 0; I < R.size(); ++I)
    if (C.needs(I))
      R[I] = to(C, I, gout(C) / N);
  return R;
}

Grads whereBackward(const BackwardContext &C) {
  Grads R(3);
  const Tensor &Cond = in(C, 0), &G = gout(C);
  if (C.needs(1))
    R[1] = to(C, 1, where(Cond, G, zeroOf(G)));
  if (C.needs(2))
    R[2] = to(C, 2, where(Cond, zeroOf(G), G));
  return R;
}

Grads negBackward(const BackwardContext &C) { return {neg(gout(C))}; }
Grads identityBackward(const BackwardContext &C) { return {gout(C)}; }
Grads expBackward(const BackwardContext &C) { return {gout(C) * out(C)}; }
Grads logBackward(const BackwardContext &C) { return {gout(C) / in(C, 0)}; }
Grads sqrtBackward(const BackwardContext &C) {
  return {gout(C) / (out(C) * 2.0)};
}
Grads reciprocalBackward(const BackwardContext &C) {
  return {neg(gout(C) * out(C) * out(C))};
}
Grads absBackward(const BackwardContext &C) {
  return {gout(C) * sign(in(C, 0))};
}
Grads sinBackward(const BackwardContext &C) {
  return {gout(C) * cos(in(C, 0))};
}
Grads cosBackward(const BackwardContext &C) {
  return {neg(gout(C) * sin(in(C, 0)))};
}
Grads erfBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  return {gout(C) * exp(neg(X * X)) * (2.0 / std::sqrt(M_PI))};
}
Grads signBackward(const BackwardContext &C) {
  return {zeros_like(in(C, 0))};
}
Grads tanhBackward(const BackwardContext &C) {
  return {gout(C) * (1.0 - out(C) * out(C))};
}
Grads sigmoidBackward(const BackwardContext &C) {
  return {gout(C) * out(C) * (1.0 - out(C))};
}

Grads clipBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  Tensor Keep;
  if (C.Inputs.size() > 1 && in(C, 1).defined())
    Keep = ge(X, in(C, 1));
  if (C.Inputs.size() > 2 && in(C, 2).defined()) {
    Tensor M = le(X, in(C, 2));
    Keep = Keep.defined() ? logical_and(Keep, M) : M;
  }
  if (!Keep.defined())
    return {gout(C)};
  return {where(Keep, gout(C), zeroOf(gout(C)))};
}

Grads castBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  if (!X.is_floating_point())
    return {Tensor()};
  return {gout(C).to(X.dtype())};
}

} // namespace

void registerArithmeticDerivatives() {
  setBackward(OpKind::Add, addBackward);
  setBackward(OpKind::Sub, subBackward);
  setBackward(OpKind::Mul, mulBackward);
  setBackward(OpKind::Div, divBackward);
  setBackward(OpKind::Pow, powBackward);
  setBackward(OpKind::Max, extremumBackward);
  setBackward(OpKind::Min, extremumBackward);
  setBackward(OpKind::Sum, variadicSumBackward);
  setBackward(OpKind::Mean, variadicMeanBackward);
  setBackward(OpKind::Where, whereBackward);
  setBackward(OpKind::Neg, negBackward);
  setBackward(OpKind::Identity, identityBackward);
  setBackward(OpKind::Exp, expBackward);
  setBackward(OpKind::Log, logBackward);
  setBackward(OpKind::Sqrt, sqrtBackward);
  setBackward(OpKind::Reciprocal, reciprocalBackward);
  setBackward(OpKind::Abs, absBackward);
  setBackward(OpKind::Sin, sinBackward);
  setBackward(OpKind::Cos, cosBackward);
  setBackward(OpKind::Erf, erfBackward);
  setBackward(OpKind::Sign, signBackward);
  setBackward(OpKind::Tanh, tanhBackward);
  setBackward(OpKind::Sigmoid, sigmoidBackward);
  setBackward(OpKind::Clip, clipBackward);
  setBackward(OpKind::Cast, castBackward);
}

} // namespace nng::autograd
