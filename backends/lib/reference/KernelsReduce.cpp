//===- KernelsReduce.cpp - Reductions, arg-reductions and softmax --------===//
//
// Reference kernels of the Reduce* ops (axes from the attribute, or for
// ReduceSum from the optional input with noop_with_empty_axes; no axes means
// all; keepdims), ArgMax/ArgMin (select_last_index) and Softmax, LogSoftmax
// and Hardmax along one axis (opset-13 semantics). Each moves the reduced
// axes last in a contiguous copy and reduces rows. Floating types reduce in
// double; integer sums and products are exact and wrap. Reducing an empty
// set gives the identity (0 for sums, 1 for products, -inf/+inf or the type's
// limits for max/min, NaN for a float mean).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// X viewed as [Outer, Inner] rows, reduced axes last, and the output shape.
struct RowPlan {
  Tensor Rows;
  Shape OutShape;
  int64_t Outer = 1, Inner = 1;
};

/// Plans a reduction of X over Axes (already normalized, distinct).
RowPlan rowPlan(const Tensor &X, const std::vector<bool> &Reduced,
                bool KeepDims) {
  RowPlan P;
  std::vector<int64_t> Perm, Tail;
  for (size_t D = 0; D < X.rank(); ++D) {
    int64_t E = X.shape()[D];
    if (Reduced[D]) {
      Tail.push_back(static_cast<int64_t>(D));
      P.Inner *= E;
      if (KeepDims)
        P.OutShape.push_back(1);
    } else {
      Perm.push_back(static_cast<int64_t>(D));
      P.Outer *= E;
      P.OutShape.push_back(E);
    }
  }
  Perm.insert(Perm.end(), Tail.begin(), Tail.end());
  P.Rows = X.permute(Perm).contiguous();
  return P;
}

/// Output 0 = Reduce(Row, Inner) over the op's axes; Reduce is called with
/// a typed row pointer and returns the calculation value for the output.
template <typename Fn> void reduceOp(KernelContext &C, Fn Reduce) {
  const Tensor &X = C.in(0);
  if (X.dtype() == DType::Bool)
    C.fail("data must be numeric, got bool");
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<int64_t> Axes;
  if (C.N.op() == ir::OpKind::ReduceSum) {
    if (C.hasInput(1))
      Axes = intsOf(C, C.in(1), "axes");
    if (Axes.empty() && C.attrInt("noop_with_empty_axes") != 0) {
      C.Outputs[0] = X.clone();
      return;
    }
  } else {
    Axes = C.attrInts("axes");
  }
  std::vector<bool> Reduced(R, Axes.empty());
  for (int64_t A : Axes) {
    int64_t D = normAxis(C, A, R);
    if (Reduced[D])
      C.fail("axes ", intsToString(Axes), " repeat axis ", D);
    Reduced[D] = true;
  }
  RowPlan P = rowPlan(X, Reduced, C.attrInt("keepdims") != 0);
  Tensor &Y = C.allocOutput(0, P.OutShape, X.dtype());
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T *PX = ptr<T>(P.Rows);
      T *PY = mutPtr<T>(Y);
      parallelFor(0, P.Outer, 1, [&](int64_t B, int64_t E) {
        for (int64_t O = B; O < E; ++O)
          PY[O] = Reduce(PX + O * P.Inner, P.Inner);
      });
    }
  });
}

template <typename T> using CT = CalcType<T>;

/// Sum of F(x) over the row, wrapping for integers.
template <typename T, typename Fn> CT<T> sumOf(const T *Row, int64_t N, Fn F) {
  CT<T> Acc = 0;
  for (int64_t I = 0; I < N; ++I) {
    CT<T> V = F(toCalc(Row[I]));
    if constexpr (std::is_integral_v<CT<T>>)
      Acc = Wrap<CT<T>>::add(Acc, V);
    else
      Acc += V;
  }
  return Acc;
}

/// Max (Sign 1) or min (Sign -1) of the row; NaN propagates.
template <typename T> CT<T> extremum(const T *Row, int64_t N, bool Max) {
  using V = CT<T>;
  V Best;
  if constexpr (std::is_floating_point_v<V>)
    Best = Max ? -INFINITY : INFINITY;
  else
    Best =
        Max ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
  for (int64_t I = 0; I < N; ++I) {
    V X = toCalc(Row[I]);
    if constexpr (std::is_floating_point_v<V>)
      if (std::isnan(X))
        return X;
    if (Max ? X > Best : X < Best)
      Best = X;
  }
  return Best;
}

/// The row's value as a double result converted back to T (integers
/// truncate and saturate).
template <typename T> T fromResult(double V) {
  if constexpr (IsIntElem<T>)
    return saturateCast<T>(V);
  else
    return fromDouble<T>(V);
}

auto identity = [](auto V) { return V; };

} // namespace

void kernelReduceSum(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    return fromCalc<T>(sumOf(Row, N, identity));
  });
}

void kernelReduceSumSquare(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    return fromCalc<T>(sumOf(Row, N, [](auto V) -> decltype(V) {
      if constexpr (std::is_integral_v<decltype(V)>)
        return Wrap<decltype(V)>::mul(V, V);
      else
        return V * V;
    }));
  });
}

void kernelReduceL1(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    return fromCalc<T>(sumOf(Row, N, [](auto V) -> decltype(V) {
      using V_ = decltype(V);
      if constexpr (std::is_floating_point_v<V_>)
        return std::fabs(V);
      else if constexpr (std::is_signed_v<V_>)
        return V < 0 ? Wrap<V_>::neg(V) : V;
      else
        return V;
    }));
  });
}

void kernelReduceL2(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    double S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += toDouble(Row[I]) * toDouble(Row[I]);
    return fromResult<T>(std::sqrt(S));
  });
}

void kernelReduceProd(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    using V = CT<T>;
    V Acc = 1;
    for (int64_t I = 0; I < N; ++I) {
      if constexpr (std::is_integral_v<V>)
        Acc = Wrap<V>::mul(Acc, toCalc(Row[I]));
      else
        Acc *= toCalc(Row[I]);
    }
    return fromCalc<T>(Acc);
  });
}

void kernelReduceMean(KernelContext &C) {
  reduceOp(C, [&](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    auto S = sumOf(Row, N, identity);
    if constexpr (std::is_integral_v<decltype(S)>) {
      if (N == 0)
        C.fail("integer mean of an empty set");
      return static_cast<T>(S / static_cast<decltype(S)>(N));
    } else {
      return fromCalc<T>(S / static_cast<double>(N));
    }
  });
}

void kernelReduceMax(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    return fromCalc<T>(extremum(Row, N, true));
  });
}

void kernelReduceMin(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    return fromCalc<T>(extremum(Row, N, false));
  });
}

void kernelReduceLogSum(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    double S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += toDouble(Row[I]);
    return fromResult<T>(std::log(S));
  });
}

void kernelReduceLogSumExp(KernelContext &C) {
  reduceOp(C, [](auto *Row, int64_t N) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(Row)>>;
    double M = -INFINITY;
    for (int64_t I = 0; I < N; ++I)
      M = std::max(M, toDouble(Row[I]));
    if (!std::isfinite(M)) // Empty, all -inf, or an inf: no shift needed.
      M = 0;
    double S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += std::exp(toDouble(Row[I]) - M);
    return fromResult<T>(M + std::log(S));
  });
}

namespace {
/// ArgMax (Max) or ArgMin along the 'axis' attribute.
void argReduce(KernelContext &C, bool Max) {
  const Tensor &X = C.in(0);
  if (X.dtype() == DType::Bool)
    C.fail("data must be numeric, got bool");
  int64_t R = static_cast<int64_t>(X.rank());
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  if (X.size(Axis) == 0)
    C.fail("axis ", Axis, " of ", X.shape().toString(),
           " is empty: there is no ", Max ? "maximum" : "minimum");
  bool Last = C.attrInt("select_last_index") != 0;
  std::vector<bool> Reduced(R, false);
  Reduced[Axis] = true;
  RowPlan P = rowPlan(X, Reduced, C.attrInt("keepdims") != 0);
  Tensor &Y = C.allocOutput(0, P.OutShape, DType::I64);
  int64_t *PY = mutPtr<int64_t>(Y);
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T *PX = ptr<T>(P.Rows);
      for (int64_t O = 0; O < P.Outer; ++O) {
        const T *Row = PX + O * P.Inner;
        int64_t BestAt = 0;
        CT<T> Best = toCalc(Row[0]);
        for (int64_t I = 1; I < P.Inner; ++I) {
          CT<T> V = toCalc(Row[I]);
          bool Better;
          if constexpr (std::is_floating_point_v<CT<T>>)
            if (std::isnan(Best))
              break; // The first NaN wins, as in numpy.
          if constexpr (std::is_floating_point_v<CT<T>>)
            if (std::isnan(V)) {
              Best = V;
              BestAt = I;
              break;
            }
          Better = Max ? (V > Best || (Last && V == Best))
                       : (V < Best || (Last && V == Best));
          if (Better) {
            Best = V;
            BestAt = I;
          }
        }
        PY[O] = BestAt;
      }
    }
  });
}

/// Applies RowFn(In, Out, N) to each row along the 'axis' attribute, in
/// double; output 0 has X's shape and dtype.
template <typename Fn> void alongAxis(KernelContext &C, Fn RowFn) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "input");
  int64_t R = static_cast<int64_t>(X.rank());
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  std::vector<bool> Reduced(R, false);
  Reduced[Axis] = true;
  RowPlan P = rowPlan(X, Reduced, true);
  Tensor In = toF64(P.Rows);
  Tensor Out = Tensor::empty(In.shape(), DType::F64);
  const double *PI = ptr<double>(In);
  double *PO = mutPtr<double>(Out);
  parallelFor(0, P.Outer, 1, [&](int64_t B, int64_t E) {
    for (int64_t O = B; O < E; ++O)
      RowFn(PI + O * P.Inner, PO + O * P.Inner, P.Inner);
  });
  // Undo the permutation that moved Axis last.
  std::vector<int64_t> Perm;
  for (int64_t D = 0; D < R; ++D)
    if (D != Axis)
      Perm.push_back(D);
  Perm.push_back(Axis);
  C.Outputs[0] = Out.permute(inversePerm(Perm)).to(X.dtype());
}

double rowMax(const double *In, int64_t N) {
  double M = -INFINITY;
  for (int64_t I = 0; I < N; ++I)
    M = std::max(M, In[I]);
  return std::isfinite(M) ? M : 0.0;
}
} // namespace

void kernelArgMax(KernelContext &C) { argReduce(C, true); }
void kernelArgMin(KernelContext &C) { argReduce(C, false); }

void kernelSoftmax(KernelContext &C) {
  alongAxis(C, [](const double *In, double *Out, int64_t N) {
    double M = rowMax(In, N), S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += Out[I] = std::exp(In[I] - M);
    for (int64_t I = 0; I < N; ++I)
      Out[I] /= S;
  });
}

void kernelLogSoftmax(KernelContext &C) {
  alongAxis(C, [](const double *In, double *Out, int64_t N) {
    double M = rowMax(In, N), S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += std::exp(In[I] - M);
    double L = M + std::log(S);
    for (int64_t I = 0; I < N; ++I)
      Out[I] = In[I] - L;
  });
}

void kernelHardmax(KernelContext &C) {
  alongAxis(C, [](const double *In, double *Out, int64_t N) {
    int64_t Best = 0;
    for (int64_t I = 0; I < N; ++I) {
      Out[I] = 0.0;
      if (In[I] > In[Best])
        Best = I;
    }
    if (N > 0)
      Out[Best] = 1.0;
  });
}

} // namespace nng::backends::reference
