//===- KernelsSort.cpp - TopK, Unique and CumSum --------------------------===//
//
// Reference kernels of TopK (largest or smallest K along an axis, ties by
// the lower index, NaN ordered above every number), Unique (flattened or
// slices along an axis; sorted ascending or in order of first occurrence;
// Y, indices, inverse_indices, counts) and CumSum (exclusive, reverse;
// floats accumulate in double, integers wrap). Values are compared in
// their own type, so large integers stay exact.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace nng::backends::reference {

namespace {

/// A < B with NaN above every number and equal to NaN.
template <typename T> bool lessNaNLast(T A, T B) {
  if constexpr (IsFloatElem<T>) {
    double X = toDouble(A), Y = toDouble(B);
    if (std::isnan(X))
      return false;
    if (std::isnan(Y))
      return true;
    return X < Y;
  } else {
    return A < B;
  }
}

/// X viewed as [Outer, N, Inner] around Axis.
struct AxisView {
  int64_t Outer = 1, N = 1, Inner = 1;
};

AxisView axisView(const Shape &S, int64_t Axis) {
  AxisView V;
  V.N = S[Axis];
  for (int64_t D = 0; D < static_cast<int64_t>(S.rank()); ++D) {
    if (D < Axis)
      V.Outer *= S[D];
    if (D > Axis)
      V.Inner *= S[D];
  }
  return V;
}

} // namespace

void kernelTopK(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  if (X.rank() == 0)
    C.fail("X must have rank >= 1");
  if (X.dtype() == DType::Bool)
    C.fail("X must be numeric, got bool");
  std::vector<int64_t> KV = intsOf(C, C.in(1), "K");
  if (KV.size() != 1)
    C.fail("K must have one element, got ", intsToString(KV));
  int64_t Axis = normAxis(C, C.attrInt("axis"), X.rank());
  AxisView V = axisView(X.shape(), Axis);
  int64_t K = KV[0];
  if (K < 0 || K > V.N)
    C.fail("K = ", K, " must be in [0, ", V.N, "] (axis ", Axis, " of X ",
           X.shape().toString(), ")");
  bool Largest = C.attrInt("largest") != 0;
  Shape Out = X.shape();
  Out[Axis] = K;
  Tensor &Values = C.allocOutput(0, Out, X.dtype());
  Tensor &Indices = C.allocOutput(1, Out, DType::I64);
  int64_t *PI = mutPtr<int64_t>(Indices);
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *PX = ptr<T>(X);
    T *PV = mutPtr<T>(Values);
    std::vector<int64_t> Order(V.N);
    for (int64_t O = 0; O < V.Outer; ++O)
      for (int64_t I = 0; I < V.Inner; ++I) {
        const T *Row = PX + O * V.N * V.Inner + I;
        std::iota(Order.begin(), Order.end(), 0);
        // Equal values keep the lower index first: a total order, so only
        // the first K need sorting (a detector's TopK keeps 1000 of 1.3M).
        auto Before = [&](int64_t A, int64_t B) {
          T VA = Row[A * V.Inner], VB = Row[B * V.Inner];
          if (Largest ? lessNaNLast(VB, VA) : lessNaNLast(VA, VB))
            return true;
          if (Largest ? lessNaNLast(VA, VB) : lessNaNLast(VB, VA))
            return false;
          return A < B;
        };
        if (K * 4 >= V.N)
          std::sort(Order.begin(), Order.end(), Before);
        else
          std::partial_sort(Order.begin(), Order.begin() + K, Order.end(),
                            Before);
        for (int64_t J = 0; J < K; ++J) {
          int64_t At = (O * K + J) * V.Inner + I;
          PV[At] = Row[Order[J] * V.Inner];
          PI[At] = Order[J];
        }
      }
  });
}

void kernelUnique(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  bool HasAxis = C.N.attrs().has("axis");
  int64_t Axis = 0;
  AxisView V;
  if (HasAxis) {
    Axis = normAxis(C, C.attrInt("axis"), static_cast<int64_t>(X.rank()));
    V = axisView(X.shape(), Axis);
  } else {
    V.N = X.numel();
  }
  // Order the slices (the elements when there is no axis): stably, so the
  // first of a run of equal slices is its first occurrence.
  std::vector<int64_t> Order(V.N);
  std::iota(Order.begin(), Order.end(), 0);
  auto Compare = [&](int64_t A, int64_t B) -> int {
    return visitDType(X.dtype(), [&](auto Tag) -> int {
      using T = typename decltype(Tag)::type;
      const T *PX = ptr<T>(X);
      for (int64_t O = 0; O < V.Outer; ++O)
        for (int64_t I = 0; I < V.Inner; ++I) {
          T EA = PX[(O * V.N + A) * V.Inner + I];
          T EB = PX[(O * V.N + B) * V.Inner + I];
          if (lessNaNLast(EA, EB))
            return -1;
          if (lessNaNLast(EB, EA))
            return 1;
        }
      return 0;
    });
  };
  std::stable_sort(Order.begin(), Order.end(),
                   [&](int64_t A, int64_t B) { return Compare(A, B) < 0; });
  // Groups of equal slices in sorted order: first occurrence and count.
  std::vector<int64_t> First, Count, GroupOf(V.N);
  for (int64_t J = 0; J < V.N; ++J) {
    if (J == 0 || Compare(Order[J - 1], Order[J]) != 0) {
      First.push_back(Order[J]);
      Count.push_back(0);
    }
    ++Count.back();
    GroupOf[Order[J]] = static_cast<int64_t>(First.size()) - 1;
  }
  int64_t U = static_cast<int64_t>(First.size());
  // Output order of the groups: sorted, or by first occurrence.
  std::vector<int64_t> Rank(U);
  std::iota(Rank.begin(), Rank.end(), 0);
  if (C.attrInt("sorted") == 0)
    std::sort(Rank.begin(), Rank.end(),
              [&](int64_t A, int64_t B) { return First[A] < First[B]; });
  std::vector<int64_t> Pos(U); // Group -> output position.
  for (int64_t P = 0; P < U; ++P)
    Pos[Rank[P]] = P;
  Shape YShape{U};
  if (HasAxis) {
    YShape = X.shape();
    YShape[Axis] = U;
  }
  Tensor &Y = C.allocOutput(0, YShape, X.dtype());
  size_t Row = V.Inner * X.elementSize();
  const char *PX = static_cast<const char *>(X.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t O = 0; O < V.Outer; ++O)
    for (int64_t P = 0; P < U; ++P)
      std::memcpy(PY + (O * U + P) * Row, PX + (O * V.N + First[Rank[P]]) * Row,
                  Row);
  if (C.Outputs.size() > 1) {
    int64_t *PI = mutPtr<int64_t>(C.allocOutput(1, Shape{U}, DType::I64));
    for (int64_t P = 0; P < U; ++P)
      PI[P] = First[Rank[P]];
  }
  if (C.Outputs.size() > 2) {
    int64_t *PI = mutPtr<int64_t>(C.allocOutput(2, Shape{V.N}, DType::I64));
    for (int64_t J = 0; J < V.N; ++J)
      PI[J] = Pos[GroupOf[J]];
  }
  if (C.Outputs.size() > 3) {
    int64_t *PI = mutPtr<int64_t>(C.allocOutput(3, Shape{U}, DType::I64));
    for (int64_t P = 0; P < U; ++P)
      PI[P] = Count[Rank[P]];
  }
}

void kernelCumSum(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  if (X.dtype() == DType::Bool)
    C.fail("x must be numeric, got bool");
  if (C.in(1).numel() != 1 || !isIntegral(C.in(1).dtype()))
    C.fail("axis must be an integer scalar, got ", dtypeName(C.in(1).dtype()),
           C.in(1).shape().toString());
  if (X.rank() == 0)
    C.fail("x must have rank >= 1");
  int64_t Axis = normAxis(C, C.in(1).getFlatInt(0), X.rank());
  bool Exclusive = C.attrInt("exclusive") != 0,
       Reverse = C.attrInt("reverse") != 0;
  AxisView V = axisView(X.shape(), Axis);
  Tensor &Y = C.allocOutput(0, X.shape(), X.dtype());
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = CalcType<T>;
      const T *PX = ptr<T>(X);
      T *PY = mutPtr<T>(Y);
      for (int64_t O = 0; O < V.Outer; ++O)
        for (int64_t I = 0; I < V.Inner; ++I) {
          Acc Sum = 0;
          for (int64_t S = 0; S < V.N; ++S) {
            int64_t J = Reverse ? V.N - 1 - S : S;
            int64_t At = (O * V.N + J) * V.Inner + I;
            Acc Val = toCalc(PX[At]);
            if (Exclusive)
              PY[At] = fromCalc<T>(Sum);
            if constexpr (IsIntElem<T>)
              Sum = Wrap<T>::add(Sum, Val);
            else
              Sum += Val;
            if (!Exclusive)
              PY[At] = fromCalc<T>(Sum);
          }
        }
    }
  });
}

} // namespace nng::backends::reference
