//===- KernelsBinary.cpp - Elementwise binary and variadic ops -----------===//
//
// Reference kernels of the broadcasting elementwise ops: arithmetic (Add,
// Sub, Mul, Div, Pow, Mod, PRelu, BitShift), variadic Max/Min/Sum/Mean,
// comparisons and logical ops (bool results) and Where. Inputs broadcast the
// numpy way over any rank. Floating types compute in double and round back;
// integers compute exactly and wrap on overflow; Div truncates; integer
// division by zero is an error. Equal and Where also take str tensors
// (interned, so Equal compares ids).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// C = F(A, B) where A, B and C share a numeric dtype; F gets and returns the
/// calculation type (double for floats, the integer type otherwise).
template <typename Fn> void arith(KernelContext &C, Fn F) {
  const Tensor &A = C.in(0), &B = C.in(1);
  requireSameDType(C, A, B, "A", "B");
  if (A.dtype() == DType::Bool)
    C.fail("inputs must be numeric, got bool");
  visitDType(A.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      binaryLoop<T, T, T>(C, A, B, A.dtype(), [&](T X, T Y) {
        return fromCalc<T>(F(toCalc(X), toCalc(Y)));
      });
  });
}

/// C = Pred(A, B) as bool, for A and B of one dtype.
template <typename Fn> void compare(KernelContext &C, Fn Pred) {
  const Tensor &A = C.in(0), &B = C.in(1);
  requireSameDType(C, A, B, "A", "B");
  visitDType(A.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    binaryLoop<T, T, bool>(C, A, B, DType::Bool, [&](T X, T Y) {
      return static_cast<bool>(Pred(toCalc(X), toCalc(Y)));
    });
  });
}

/// C = Op(A, B) for bool A and B.
template <typename Fn> void logical(KernelContext &C, Fn Op) {
  const Tensor &A = C.in(0), &B = C.in(1);
  if (A.dtype() != DType::Bool || B.dtype() != DType::Bool)
    C.fail("inputs must be bool, got ", dtypeName(A.dtype()), " and ",
           dtypeName(B.dtype()));
  binaryLoop<bool, bool, bool>(C, A, B, DType::Bool,
                               [&](bool X, bool Y) { return Op(X, Y); });
}

/// Folds the broadcast inputs with Combine (in the calculation type) and
/// applies Finish(Acc, Count) to the result.
template <typename Fn, typename FinFn>
void variadic(KernelContext &C, bool FloatOnly, Fn Combine, FinFn Finish) {
  const Tensor &A = C.in(0);
  for (size_t I = 1; I < C.Inputs.size(); ++I)
    requireSameDType(C, A, C.in(I), "data_0", "every other input");
  if (FloatOnly)
    requireFloat(C, A, "data_0");
  if (A.dtype() == DType::Bool)
    C.fail("inputs must be numeric, got bool");
  BroadcastViews BV = broadcastInputs(C.Inputs);
  Tensor &Out = C.allocOutput(0, BV.Out, A.dtype());
  size_t K = BV.Views.size();
  visitDType(A.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      std::vector<const T *> Ps;
      for (const Tensor &V : BV.Views)
        Ps.push_back(ptr<T>(V));
      T *PO = mutPtr<T>(Out);
      parallelWalk(BV.Out, BV.strides(), [&](int64_t I, const int64_t *O) {
        CalcType<T> Acc = toCalc(Ps[0][O[0]]);
        for (size_t J = 1; J < K; ++J)
          Acc = Combine(Acc, toCalc(Ps[J][O[J]]));
        PO[I] = fromCalc<T>(Finish(Acc, K));
      });
    }
  });
}

/// Exact integer power with wrap-around; B < 0 follows 1/A^-B truncated.
template <typename T> T intPow(const KernelContext &C, T A, int64_t B) {
  if (B < 0) {
    if (A == T(0))
      C.fail("integer 0 raised to the negative power ", B);
    if (A == T(1))
      return T(1);
    if constexpr (std::is_signed_v<T>)
      if (A == T(-1))
        return (B % 2) ? T(-1) : T(1);
    return T(0);
  }
  T R = 1, Base = A;
  while (B) {
    if (B & 1)
      R = Wrap<T>::mul(R, Base);
    Base = Wrap<T>::mul(Base, Base);
    B >>= 1;
  }
  return R;
}

template <typename T> bool isNaNCalc(T V) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(V);
  else
    return false;
}

} // namespace

void kernelAdd(KernelContext &C) {
  arith(C, [](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V>)
      return Wrap<V>::add(X, Y);
    else
      return X + Y;
  });
}

void kernelSub(KernelContext &C) {
  arith(C, [](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V>)
      return Wrap<V>::sub(X, Y);
    else
      return X - Y;
  });
}

void kernelMul(KernelContext &C) {
  arith(C, [](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V>)
      return Wrap<V>::mul(X, Y);
    else
      return X * Y;
  });
}

void kernelDiv(KernelContext &C) {
  arith(C, [&](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V>) {
      if (Y == 0)
        C.fail("integer division by zero (", +X, " / 0)");
      if constexpr (std::is_signed_v<V>)
        if (X == std::numeric_limits<V>::lowest() && Y == V(-1))
          return X;                 // Wraps around.
      return static_cast<V>(X / Y); // C++ truncates toward zero.
    } else {
      return X / Y;
    }
  });
}

void kernelMod(KernelContext &C) {
  bool FMod = C.attrInt("fmod") != 0;
  if (isFloatingPoint(C.in(0).dtype()) && !FMod)
    C.fail("fmod must be 1 for floating-point inputs (dtype ",
           dtypeName(C.in(0).dtype()), ")");
  arith(C, [&](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V>) {
      if (Y == 0)
        C.fail("integer modulo by zero (", +X, " % 0)");
      if constexpr (std::is_signed_v<V>) {
        if (Y == V(-1))
          return V(0);               // Also avoids lowest % -1 overflowing.
        V R = static_cast<V>(X % Y); // Sign of the dividend (C fmod).
        if (!FMod && R != 0 && ((R < 0) != (Y < 0)))
          R = static_cast<V>(R + Y); // Sign of the divisor (Python %).
        return R;
      } else {
        return static_cast<V>(X % Y);
      }
    } else {
      return std::fmod(X, Y);
    }
  });
}

void kernelPow(KernelContext &C) {
  const Tensor &X = C.in(0), &Y = C.in(1);
  if (X.dtype() == DType::Bool || Y.dtype() == DType::Bool)
    C.fail("inputs must be numeric, got ", dtypeName(X.dtype()), " and ",
           dtypeName(Y.dtype()));
  // f32 x ** 2 (an STFT's power spectrum): x * x, the same float as the
  // double pow rounded (a float's square is exact in double), without a
  // pow call per element.
  if (X.dtype() == DType::F32 && isFloatingPoint(Y.dtype()) &&
      Y.numel() == 1 && Y.rank() <= X.rank() && X.isContiguous() &&
      Y.getFlat(0) == 2.0) {
    Tensor &Out = C.allocOutput(0, X.shape(), DType::F32);
    const float *PX = X.data<float>();
    float *PO = Out.data<float>();
    for (int64_t I = 0, E = X.numel(); I < E; ++I)
      PO[I] = PX[I] * PX[I];
    return;
  }
  visitDType(X.dtype(), [&](auto TagX) {
    using T = typename decltype(TagX)::type;
    visitDType(Y.dtype(), [&](auto TagY) {
      using U = typename decltype(TagY)::type;
      if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<U, bool>) {
        binaryLoop<T, U, T>(C, X, Y, X.dtype(), [&](T A, U B) -> T {
          if constexpr (IsIntElem<T> && IsIntElem<U>) {
            return intPow<T>(C, A, static_cast<int64_t>(B));
          } else {
            double R = std::pow(toDouble(A), toDouble(B));
            if constexpr (IsIntElem<T>)
              return saturateCast<T>(R);
            else
              return fromDouble<T>(R);
          }
        });
      }
    });
  });
}

void kernelPRelu(KernelContext &C) {
  const Tensor &X = C.in(0), &Slope = C.in(1);
  if (broadcastShapes(X.shape(), Slope.shape()) != X.shape())
    C.fail("slope ", Slope.shape().toString(),
           " must broadcast to the shape of X ", X.shape().toString());
  if (isIntegral(X.dtype()) && !isSigned(X.dtype()))
    C.fail("PRelu needs a float or signed integer type, got ",
           dtypeName(X.dtype()));
  arith(C, [](auto V, auto S) -> decltype(V) {
    using T = decltype(V);
    if constexpr (std::is_integral_v<T>)
      return V < 0 ? Wrap<T>::mul(S, V) : V;
    else
      return V < 0 ? S * V : V;
  });
}

void kernelBitShift(KernelContext &C) {
  const std::string &Dir = C.attrString("direction");
  if (Dir != "LEFT" && Dir != "RIGHT")
    C.fail("direction must be LEFT or RIGHT, got '", Dir, "'");
  DType T = C.in(0).dtype();
  if (T != DType::U8 && T != DType::U16 && T != DType::U32 && T != DType::U64)
    C.fail("BitShift needs an unsigned integer type, got ", dtypeName(T));
  bool Left = Dir == "LEFT";
  arith(C, [&](auto X, auto Y) -> decltype(X) {
    using V = decltype(X);
    if constexpr (std::is_integral_v<V> && std::is_unsigned_v<V>) {
      // Shifting by the bit width or more gives 0 (undefined in C++).
      if (Y >= sizeof(V) * 8)
        return V(0);
      return static_cast<V>(Left ? X << Y : X >> Y);
    } else {
      return X;
    }
  });
}

void kernelMax(KernelContext &C) {
  variadic(
      C, false,
      [](auto A, auto B) -> decltype(A) {
        if (isNaNCalc(A) || isNaNCalc(B))
          return isNaNCalc(A) ? A : B; // NaN propagates, like numpy.
        return A < B ? B : A;
      },
      [](auto A, size_t) { return A; });
}

void kernelMin(KernelContext &C) {
  variadic(
      C, false,
      [](auto A, auto B) -> decltype(A) {
        if (isNaNCalc(A) || isNaNCalc(B))
          return isNaNCalc(A) ? A : B;
        return B < A ? B : A;
      },
      [](auto A, size_t) { return A; });
}

void kernelSum(KernelContext &C) {
  variadic(
      C, false,
      [](auto A, auto B) -> decltype(A) {
        using V = decltype(A);
        if constexpr (std::is_integral_v<V>)
          return Wrap<V>::add(A, B);
        else
          return A + B;
      },
      [](auto A, size_t) { return A; });
}

void kernelMean(KernelContext &C) {
  variadic(
      C, true, [](auto A, auto B) -> decltype(A) { return A + B; },
      [](auto A, size_t K) -> decltype(A) {
        return A / static_cast<decltype(A)>(K);
      });
}

void kernelEqual(KernelContext &C) {
  const Tensor &A = C.in(0), &B = C.in(1);
  if (isString(A.dtype()) && isString(B.dtype())) {
    // Interned: equal strings have equal ids.
    binaryLoop<StringId, StringId, bool>(
        C, A, B, DType::Bool, [](StringId X, StringId Y) { return X == Y; });
    return;
  }
  compare(C, [](auto A, auto B) { return A == B; });
}
void kernelLess(KernelContext &C) {
  compare(C, [](auto A, auto B) { return A < B; });
}
void kernelLessOrEqual(KernelContext &C) {
  compare(C, [](auto A, auto B) { return A <= B; });
}
void kernelGreater(KernelContext &C) {
  compare(C, [](auto A, auto B) { return A > B; });
}
void kernelGreaterOrEqual(KernelContext &C) {
  compare(C, [](auto A, auto B) { return A >= B; });
}

void kernelAnd(KernelContext &C) {
  logical(C, [](bool A, bool B) { return A && B; });
}
void kernelOr(KernelContext &C) {
  logical(C, [](bool A, bool B) { return A || B; });
}
void kernelXor(KernelContext &C) {
  logical(C, [](bool A, bool B) { return A != B; });
}

void kernelWhere(KernelContext &C) {
  const Tensor &Cond = C.in(0), &X = C.in(1), &Y = C.in(2);
  if (Cond.dtype() != DType::Bool)
    C.fail("condition must be bool, got ", dtypeName(Cond.dtype()));
  requireSameDType(C, X, Y, "X", "Y");
  BroadcastViews BV = broadcastInputs({Cond, X, Y});
  Tensor &Out = C.allocOutput(0, BV.Out, X.dtype());
  visitDTypeOrString(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const bool *PC = ptr<bool>(BV.Views[0]);
    const T *PX = ptr<T>(BV.Views[1]);
    const T *PY = ptr<T>(BV.Views[2]);
    T *PO = mutPtr<T>(Out);
    parallelWalk(BV.Out, BV.strides(), [&](int64_t I, const int64_t *O) {
      PO[I] = PC[O[0]] ? PX[O[1]] : PY[O[2]];
    });
  });
}

} // namespace nng::backends::reference
