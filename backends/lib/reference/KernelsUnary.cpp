//===- KernelsUnary.cpp - Elementwise unary math and activations ---------===//
//
// Reference kernels of the unary elementwise ops: math functions and
// activations compute in double for every floating dtype and round back to
// the input's dtype; Abs, Neg, Sign, Relu, Shrink and Clip also take integer
// types (computed exactly, wrapping like two's complement); Not, IsNaN and
// IsInf produce bool; nng.Gelu has the exact (erf) and tanh forms.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/ir/ElementwiseFormulas.h"

#include <cmath>
#include <limits>

namespace nng::backends::reference {

namespace {

namespace F = ir::formula;
/// The reference computes float activations in double.
constexpr ir::ScalarMath<double> D;

/// Y = F(X) for a floating X, computed in double; Y has X's dtype.
template <typename Fn> void mapFloat(KernelContext &C, Fn F) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "input");
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), X.dtype());
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (IsFloatElem<T>) {
      const T *PX = ptr<T>(Xc);
      T *PY = mutPtr<T>(Y);
      parallelFor(0, X.numel(), ElemGrain, [&](int64_t B, int64_t E) {
        for (int64_t I = B; I < E; ++I)
          PY[I] = fromDouble<T>(F(toDouble(PX[I])));
      });
    }
  });
}

/// Y = F(X) for any numeric X: F gets double for floating types and the
/// integer itself for integer types. Bool inputs are rejected.
template <typename Fn> void mapNumeric(KernelContext &C, Fn F) {
  const Tensor &X = C.in(0);
  if (X.dtype() == DType::Bool)
    C.fail("input must be numeric, got bool");
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), X.dtype());
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T *PX = ptr<T>(Xc);
      T *PY = mutPtr<T>(Y);
      parallelFor(0, X.numel(), ElemGrain, [&](int64_t B, int64_t E) {
        for (int64_t I = B; I < E; ++I)
          PY[I] = fromCalc<T>(F(toCalc(PX[I])));
      });
    }
  });
}

/// Y = F(X) with a bool output, for a floating X.
template <typename Fn> void predicateFloat(KernelContext &C, Fn F) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "input");
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), DType::Bool);
  bool *PY = mutPtr<bool>(Y);
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (IsFloatElem<T>) {
      const T *PX = ptr<T>(Xc);
      for (int64_t I = 0; I < X.numel(); ++I)
        PY[I] = F(toDouble(PX[I]));
    }
  });
}

} // namespace

void kernelAbs(KernelContext &C) {
  mapNumeric(C, [](auto V) -> decltype(V) {
    using T = decltype(V);
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(V);
    else if constexpr (std::is_signed_v<T>)
      return V < 0 ? Wrap<T>::neg(V) : V;
    else
      return V;
  });
}

void kernelNeg(KernelContext &C) {
  if (isIntegral(C.in(0).dtype()) && !isSigned(C.in(0).dtype()))
    C.fail("Neg needs a signed type, got ", dtypeName(C.in(0).dtype()));
  mapNumeric(C, [](auto V) -> decltype(V) {
    using T = decltype(V);
    if constexpr (std::is_floating_point_v<T>)
      return -V;
    else
      return Wrap<T>::neg(V);
  });
}

void kernelSign(KernelContext &C) {
  mapNumeric(C, [](auto V) -> decltype(V) {
    using T = decltype(V);
    if (V > T(0))
      return T(1);
    if constexpr (std::is_signed_v<T>)
      if (V < T(0))
        return T(-1);
    return V; // 0, -0 or NaN.
  });
}

void kernelRelu(KernelContext &C) {
  if (isIntegral(C.in(0).dtype()) && !isSigned(C.in(0).dtype()))
    C.fail("Relu needs a float or signed integer type, got ",
           dtypeName(C.in(0).dtype()));
  mapNumeric(C, [](auto V) -> decltype(V) {
    return F::relu(ir::ScalarMath<decltype(V)>(), V); // NaN stays NaN.
  });
}

void kernelShrink(KernelContext &C) {
  double Bias = C.attrFloat("bias"), Lambd = C.attrFloat("lambd");
  mapNumeric(C, [&](auto V) -> decltype(V) {
    using T = decltype(V);
    double X = static_cast<double>(V);
    double R = X < -Lambd ? X + Bias : X > Lambd ? X - Bias : 0.0;
    return static_cast<T>(R);
  });
}

void kernelClip(KernelContext &C) {
  const Tensor &X = C.in(0);
  for (size_t I = 1; I < 3; ++I) {
    if (!C.hasInput(I))
      continue;
    requireSameDType(C, X, C.in(I), "input", I == 1 ? "min" : "max");
    if (C.in(I).numel() != 1)
      C.fail(I == 1 ? "min" : "max", " must be a scalar, got shape ",
             C.in(I).shape().toString());
  }
  if (X.dtype() == DType::Bool)
    C.fail("input must be numeric, got bool");
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), X.dtype());
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using V = CalcType<T>;
      bool HasLo = C.hasInput(1), HasHi = C.hasInput(2);
      // A missing bound never compares true.
      using Lim = std::numeric_limits<V>;
      V Lo = Lim::has_infinity ? -Lim::infinity() : Lim::lowest();
      V Hi = Lim::has_infinity ? Lim::infinity() : Lim::max();
      if (HasLo)
        Lo = toCalc(ptr<T>(C.in(1))[0]);
      if (HasHi)
        Hi = toCalc(ptr<T>(C.in(2))[0]);
      const T *PX = ptr<T>(Xc);
      T *PY = mutPtr<T>(Y);
      for (int64_t I = 0; I < X.numel(); ++I)
        PY[I] =
            fromCalc<T>(F::clip(ir::ScalarMath<V>(), toCalc(PX[I]), Lo, Hi));
    }
  });
}

void kernelExp(KernelContext &C) {
  mapFloat(C, [](double X) { return std::exp(X); });
}
void kernelLog(KernelContext &C) {
  mapFloat(C, [](double X) { return std::log(X); });
}
void kernelSqrt(KernelContext &C) {
  mapFloat(C, [](double X) { return std::sqrt(X); });
}
void kernelReciprocal(KernelContext &C) {
  mapFloat(C, [](double X) { return F::reciprocal(D, X); });
}
void kernelFloor(KernelContext &C) {
  mapFloat(C, [](double X) { return std::floor(X); });
}
void kernelCeil(KernelContext &C) {
  mapFloat(C, [](double X) { return std::ceil(X); });
}
void kernelRound(KernelContext &C) {
  // nearbyint in the default rounding mode rounds half to even.
  mapFloat(C, [](double X) { return std::nearbyint(X); });
}
void kernelSin(KernelContext &C) {
  mapFloat(C, [](double X) { return std::sin(X); });
}
void kernelCos(KernelContext &C) {
  mapFloat(C, [](double X) { return std::cos(X); });
}
void kernelTan(KernelContext &C) {
  mapFloat(C, [](double X) { return std::tan(X); });
}
void kernelAsin(KernelContext &C) {
  mapFloat(C, [](double X) { return std::asin(X); });
}
void kernelAcos(KernelContext &C) {
  mapFloat(C, [](double X) { return std::acos(X); });
}
void kernelAtan(KernelContext &C) {
  mapFloat(C, [](double X) { return std::atan(X); });
}
void kernelSinh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::sinh(X); });
}
void kernelCosh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::cosh(X); });
}
void kernelAsinh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::asinh(X); });
}
void kernelAcosh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::acosh(X); });
}
void kernelAtanh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::atanh(X); });
}
void kernelTanh(KernelContext &C) {
  mapFloat(C, [](double X) { return std::tanh(X); });
}
void kernelErf(KernelContext &C) {
  mapFloat(C, [](double X) { return std::erf(X); });
}
void kernelSigmoid(KernelContext &C) {
  mapFloat(C, [](double X) { return F::sigmoid(D, X); });
}

void kernelLeakyRelu(KernelContext &C) {
  double Alpha = C.attrFloat("alpha");
  mapFloat(C, [&](double X) { return F::leakyRelu(D, X, Alpha); });
}

void kernelElu(KernelContext &C) {
  double Alpha = C.attrFloat("alpha");
  mapFloat(C, [&](double X) { return F::elu(D, X, Alpha); });
}

void kernelSelu(KernelContext &C) {
  double Alpha = C.attrFloat("alpha"), Gamma = C.attrFloat("gamma");
  mapFloat(C, [&](double X) {
    return X <= 0 ? Gamma * (Alpha * std::exp(X) - Alpha) : Gamma * X;
  });
}

void kernelCelu(KernelContext &C) {
  double Alpha = C.attrFloat("alpha");
  if (Alpha == 0)
    C.fail("alpha must be non-zero");
  mapFloat(C, [&](double X) {
    return std::max(0.0, X) + std::min(0.0, Alpha * std::expm1(X / Alpha));
  });
}

void kernelThresholdedRelu(KernelContext &C) {
  double Alpha = C.attrFloat("alpha");
  mapFloat(C, [&](double X) { return X > Alpha ? X : 0.0; });
}

void kernelSoftplus(KernelContext &C) {
  // ln(1 + e^x), arranged so that large |x| neither overflows nor cancels.
  mapFloat(C, [](double X) {
    return X > 0 ? X + std::log1p(std::exp(-X)) : std::log1p(std::exp(X));
  });
}

void kernelSoftsign(KernelContext &C) {
  mapFloat(C, [](double X) { return X / (1.0 + std::fabs(X)); });
}

void kernelHardSigmoid(KernelContext &C) {
  double Alpha = C.attrFloat("alpha"), Beta = C.attrFloat("beta");
  mapFloat(C, [&](double X) { return F::hardSigmoid(D, X, Alpha, Beta); });
}

void kernelHardSwish(KernelContext &C) {
  mapFloat(C, [](double X) { return F::hardSwish(D, X); });
}

void kernelGelu(KernelContext &C) {
  const std::string &Approx = C.attrString("approximate");
  if (Approx == "none") {
    mapFloat(C, [](double X) { return F::gelu(D, X); });
  } else if (Approx == "tanh") {
    mapFloat(C, [](double X) { return F::geluTanh(D, X); });
  } else {
    C.fail("approximate must be 'none' or 'tanh', got '", Approx, "'");
  }
}

void kernelNot(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (X.dtype() != DType::Bool)
    C.fail("input must be bool, got ", dtypeName(X.dtype()));
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), DType::Bool);
  const bool *PX = ptr<bool>(Xc);
  bool *PY = mutPtr<bool>(Y);
  for (int64_t I = 0; I < X.numel(); ++I)
    PY[I] = !PX[I];
}

void kernelIsNaN(KernelContext &C) {
  predicateFloat(C, [](double X) { return std::isnan(X); });
}

void kernelIsInf(KernelContext &C) {
  bool Neg = C.attrInt("detect_negative") != 0;
  bool Pos = C.attrInt("detect_positive") != 0;
  predicateFloat(C, [&](double X) {
    return std::isinf(X) && ((X > 0 && Pos) || (X < 0 && Neg));
  });
}

void kernelIdentity(KernelContext &C) {
  C.Outputs.resize(1);
  C.Outputs[0] = C.in(0).clone();
}

} // namespace nng::backends::reference
