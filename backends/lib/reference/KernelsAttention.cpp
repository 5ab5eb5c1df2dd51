//===- KernelsAttention.cpp - nng.Attention -------------------------------===//
//
// Reference kernel of nng.Attention, the oracle of the fused attention
// kernels: plain loops that compute what the unfused graph MatMul(Q, K^T) ->
// Mul(scale) -> Add(mask) -> Softmax(last axis) -> MatMul(P, V) computes on
// this backend, rounding to the element type where each of those nodes
// would (products accumulate in double, the softmax runs in double and
// subtracts the row maximum). The batch axes of Q, K, V and the mask
// broadcast together.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// The leading (batch) dims of a shape of rank >= 2.
Shape batchOf(const Shape &S) {
  return Shape(S.begin(), S.end() - 2);
}

/// S with its last two extents replaced.
Shape withMatrix(Shape S, int64_t R, int64_t C) {
  S.push_back(R);
  S.push_back(C);
  return S;
}

} // namespace

void kernelAttention(KernelContext &C) {
  const Tensor &Q = C.in(0), &K = C.in(1), &V = C.in(2);
  requireFloat(C, Q, "Q");
  requireSameDType(C, Q, K, "Q", "K");
  requireSameDType(C, Q, V, "Q", "V");
  if (Q.rank() < 2 || K.rank() < 2 || V.rank() < 2)
    C.fail("Q ", Q.shape().toString(), ", K ", K.shape().toString(), " and V ",
           V.shape().toString(), " must have rank >= 2 ([.., rows, features])");
  bool KT = C.attrInt("k_transposed") != 0;
  double Scale = C.attrFloat("scale");
  int64_t M = Q.size(-2), D = Q.size(-1);
  int64_t N = KT ? K.size(-1) : K.size(-2);
  int64_t KD = KT ? K.size(-2) : K.size(-1);
  int64_t Dv = V.size(-1);
  if (KD != D || V.size(-2) != N)
    C.fail("shapes do not agree: Q ", Q.shape().toString(), ", K ",
           K.shape().toString(), KT ? " (transposed)" : "", ", V ",
           V.shape().toString());
  Shape Batch = broadcastShapes(batchOf(Q.shape()), batchOf(K.shape()));
  Batch = broadcastShapes(Batch, batchOf(V.shape()));
  Tensor Mask;
  if (C.hasInput(3)) {
    requireSameDType(C, Q, C.in(3), "Q", "mask");
    Mask = C.in(3);
    std::vector<int64_t> MD(Mask.shape().begin(), Mask.shape().end());
    while (MD.size() < 2)
      MD.insert(MD.begin(), 1);
    Shape MS(MD);
    if ((MS[MS.rank() - 2] != 1 && MS[MS.rank() - 2] != M) ||
        (MS[MS.rank() - 1] != 1 && MS[MS.rank() - 1] != N))
      C.fail("mask ", Mask.shape().toString(),
             " does not broadcast to the scores [.., ", M, ", ", N, "]");
    Batch = broadcastShapes(Batch, batchOf(MS));
    Mask = Mask.contiguous().reshape(MS).broadcastTo(withMatrix(Batch, M, N));
  }
  Tensor QV = Q.broadcastTo(withMatrix(Batch, M, D));
  Tensor KV = K.broadcastTo(KT ? withMatrix(Batch, D, N) : withMatrix(Batch, N, D));
  Tensor VV = V.broadcastTo(withMatrix(Batch, N, Dv));
  Tensor &Y = C.allocOutput(0, withMatrix(Batch, M, Dv), Q.dtype());
  size_t BR = Batch.rank();
  auto lead = [&](const Tensor &X) {
    return Strides(X.strides().begin(), X.strides().begin() + BR);
  };
  std::vector<Strides> St = {lead(QV), lead(KV), lead(VV)};
  if (Mask.defined())
    St.push_back(lead(Mask));
  int64_t NB = Batch.numel();
  std::vector<int64_t> Offs(NB * 4, 0);
  walkStrided(Batch, St, 0, NB, [&](int64_t I, const int64_t *O) {
    for (size_t J = 0; J < St.size(); ++J)
      Offs[I * 4 + J] = O[J];
  });
  // Element strides of the matrices: Q (row, feature), K (key, feature),
  // V (key, feature), mask (row, key).
  int64_t QM = QV.strides()[BR], QD = QV.strides()[BR + 1];
  int64_t KN = KV.strides()[BR + (KT ? 1 : 0)], KDs = KV.strides()[BR + (KT ? 0 : 1)];
  int64_t VN = VV.strides()[BR], VD = VV.strides()[BR + 1];
  int64_t MM = Mask.defined() ? Mask.strides()[BR] : 0;
  int64_t MN = Mask.defined() ? Mask.strides()[BR + 1] : 0;
  visitDType(Q.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (IsFloatElem<T>) {
      const T *PQ = ptr<T>(QV), *PK = ptr<T>(KV), *PV = ptr<T>(VV);
      const T *PM = Mask.defined() ? ptr<T>(Mask) : nullptr;
      T *PY = mutPtr<T>(Y);
      // Rounds a double to the element type and back, as a node boundary.
      auto round = [](double X) { return toCalc(fromCalc<T>(X)); };
      parallelFor(0, NB * M, 1, [&](int64_t Begin, int64_t End) {
        std::vector<double> S(N);
        for (int64_t R = Begin; R < End; ++R) {
          int64_t Bt = R / M, I = R % M;
          const int64_t *O = &Offs[Bt * 4];
          const T *Row = PQ + O[0] + I * QM;
          double Max = -INFINITY;
          for (int64_t J = 0; J < N; ++J) {
            double Acc = 0;
            for (int64_t L = 0; L < D; ++L)
              Acc = Acc + toCalc(Row[L * QD]) * toCalc(PK[O[1] + J * KN + L * KDs]);
            double X = round(round(Acc) * Scale);
            if (PM)
              X = round(X + toCalc(PM[O[3] + I * MM + J * MN]));
            S[J] = X;
            Max = std::max(Max, X);
          }
          double Sum = 0;
          for (int64_t J = 0; J < N; ++J)
            Sum += S[J] = std::exp(S[J] - Max);
          for (int64_t J = 0; J < N; ++J)
            S[J] = round(S[J] / Sum);
          for (int64_t E = 0; E < Dv; ++E) {
            double Acc = 0;
            for (int64_t J = 0; J < N; ++J)
              Acc = Acc + S[J] * toCalc(PV[O[2] + J * VN + E * VD]);
            PY[R * Dv + E] = fromCalc<T>(Acc);
          }
        }
      });
    } else {
      C.fail("Q must be floating point, got ", dtypeName(Q.dtype()));
    }
  });
}

} // namespace nng::backends::reference
