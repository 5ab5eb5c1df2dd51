//===- KernelsLinalg.cpp - MatMul and Gemm -------------------------------===//
//
// Reference kernels of numpy matmul (1-D operands, batch broadcasting over
// any number of leading axes) and Gemm (Y = alpha*A'B' + beta*C with C
// broadcast to (M, N)). Floating types accumulate in double; integer types
// accumulate exactly and wrap on overflow.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

namespace nng::backends::reference {

namespace {

/// Acc + X*Y in the calculation type V (wrapping for integers).
template <typename V> inline V fma(V Acc, V X, V Y) {
  if constexpr (std::is_integral_v<V>)
    return Wrap<V>::add(Acc, Wrap<V>::mul(X, Y));
  else
    return Acc + X * Y;
}

void requireNumeric(const KernelContext &C, const Tensor &X, const char *What) {
  if (X.dtype() == DType::Bool)
    C.fail(What, " must be numeric, got bool");
}

} // namespace

void kernelMatMul(KernelContext &C) {
  const Tensor &A = C.in(0), &B = C.in(1);
  requireSameDType(C, A, B, "A", "B");
  requireNumeric(C, A, "A");
  if (A.rank() == 0 || B.rank() == 0)
    C.fail("operands must have rank >= 1, got ", A.shape().toString(), " and ",
           B.shape().toString());
  // 1-D operands become matrices: A (K) -> (1, K), B (K) -> (K, 1).
  Tensor A2 = A.rank() == 1 ? A.contiguous().reshape(Shape{1, A.size(0)}) : A;
  Tensor B2 = B.rank() == 1 ? B.contiguous().reshape(Shape{B.size(0), 1}) : B;
  int64_t M = A2.size(-2), K = A2.size(-1), N = B2.size(-1);
  if (B2.size(-2) != K)
    C.fail("inner dimensions differ: A ", A.shape().toString(), " and B ",
           B.shape().toString());
  Shape BatchA(A2.shape().begin(), A2.shape().end() - 2);
  Shape BatchB(B2.shape().begin(), B2.shape().end() - 2);
  Shape Batch = broadcastShapes(BatchA, BatchB);
  Shape FullA = Batch, FullB = Batch;
  FullA.push_back(M);
  FullA.push_back(K);
  FullB.push_back(K);
  FullB.push_back(N);
  Tensor AV = A2.broadcastTo(FullA), BV = B2.broadcastTo(FullB);
  Shape OutShape = Batch;
  if (A.rank() > 1)
    OutShape.push_back(M);
  if (B.rank() > 1)
    OutShape.push_back(N);
  Tensor &Y = C.allocOutput(0, OutShape, A.dtype());
  // Per batch entry: the element offset of its matrix in A and in B.
  int64_t NB = Batch.numel();
  size_t BR = Batch.rank();
  Strides SA(AV.strides().begin(), AV.strides().begin() + BR);
  Strides SB(BV.strides().begin(), BV.strides().begin() + BR);
  std::vector<int64_t> OffA(NB), OffB(NB);
  walkStrided(Batch, {SA, SB}, 0, NB, [&](int64_t I, const int64_t *O) {
    OffA[I] = O[0];
    OffB[I] = O[1];
  });
  int64_t AM = AV.strides()[BR], AK = AV.strides()[BR + 1];
  int64_t BK = BV.strides()[BR], BN = BV.strides()[BR + 1];
  visitDType(A.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using V = CalcType<T>;
      const T *PA = ptr<T>(AV), *PB = ptr<T>(BV);
      T *PY = mutPtr<T>(Y);
      parallelFor(0, NB * M, 1, [&](int64_t Begin, int64_t End) {
        for (int64_t R = Begin; R < End; ++R) {
          int64_t Bt = R / M, I = R % M;
          const T *Row = PA + OffA[Bt] + I * AM;
          const T *Mat = PB + OffB[Bt];
          for (int64_t J = 0; J < N; ++J) {
            V Acc = V(0);
            for (int64_t L = 0; L < K; ++L)
              Acc = fma<V>(Acc, toCalc(Row[L * AK]),
                           toCalc(Mat[L * BK + J * BN]));
            PY[R * N + J] = fromCalc<T>(Acc);
          }
        }
      });
    }
  });
}

void kernelGemm(KernelContext &C) {
  const Tensor &A = C.in(0), &B = C.in(1);
  requireSameDType(C, A, B, "A", "B");
  requireNumeric(C, A, "A");
  requireRank(C, A, 2, "A");
  requireRank(C, B, 2, "B");
  bool TransA = C.attrInt("transA") != 0, TransB = C.attrInt("transB") != 0;
  double Alpha = C.attrFloat("alpha"), Beta = C.attrFloat("beta");
  Tensor AV = TransA ? A.permute({1, 0}) : A;
  Tensor BV = TransB ? B.permute({1, 0}) : B;
  int64_t M = AV.size(0), K = AV.size(1), N = BV.size(1);
  if (BV.size(0) != K)
    C.fail("inner dimensions differ: A ", A.shape().toString(),
           TransA ? " (transposed)" : "", " and B ", B.shape().toString(),
           TransB ? " (transposed)" : "");
  bool HasC = C.hasInput(2);
  Tensor CV;
  if (HasC) {
    const Tensor &Cin = C.in(2);
    requireSameDType(C, A, Cin, "A", "C");
    if (Cin.rank() > 2 ||
        broadcastShapes(Cin.shape(), Shape{M, N}) != Shape{M, N})
      C.fail("C ", Cin.shape().toString(), " must broadcast to (M, N) = (", M,
             ", ", N, ")");
    CV = Cin.broadcastTo(Shape{M, N});
  }
  Tensor &Y = C.allocOutput(0, Shape{M, N}, A.dtype());
  visitDType(A.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using V = CalcType<T>;
      const T *PA = ptr<T>(AV), *PB = ptr<T>(BV);
      const T *PC = HasC ? ptr<T>(CV) : nullptr;
      T *PY = mutPtr<T>(Y);
      const Strides &SA = AV.strides(), &SB = BV.strides();
      parallelFor(0, M, 1, [&](int64_t Begin, int64_t End) {
        for (int64_t I = Begin; I < End; ++I)
          for (int64_t J = 0; J < N; ++J) {
            V Acc = V(0);
            for (int64_t L = 0; L < K; ++L)
              Acc = fma<V>(Acc, toCalc(PA[I * SA[0] + L * SA[1]]),
                           toCalc(PB[L * SB[0] + J * SB[1]]));
            V Cv = HasC ? toCalc(PC[I * CV.strides()[0] + J * CV.strides()[1]])
                        : V(0);
            T R;
            if constexpr (std::is_integral_v<V>) {
              if (Alpha == 1.0 && Beta == 1.0)
                R = Wrap<V>::add(Acc, Cv);
              else
                R = saturateCast<T>(Alpha * static_cast<double>(Acc) +
                                    Beta * static_cast<double>(Cv));
            } else {
              R = fromCalc<T>(Alpha * Acc + Beta * Cv);
            }
            PY[I * N + J] = R;
          }
      });
    }
  });
}

} // namespace nng::backends::reference
