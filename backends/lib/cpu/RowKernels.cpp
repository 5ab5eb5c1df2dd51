//===- RowKernels.cpp - Softmax and layer normalization over rows ---------===//
//
// The backend's own loops over the rows of a plain tensor: Softmax,
// LogSoftmax and LayerNormalization, with the reference kernels' semantics
// (the row maximum ignores NaN and is 0 when it is not finite; a NaN or an
// infinity in a row makes the whole row NaN where the reference's does)
// computed in f32. Reductions keep 16 partial sums in a fixed order, so
// results are the same run to run and thread count to thread count; exp is
// a vectorizable polynomial (Cephes' expf: within 2 ulp of the correctly
// rounded result for arguments in [-86.9, 88.7]; below, where exp is under
// 2^-125, it returns 0, above +inf). target_clones picks the AVX-512, AVX2
// or baseline copy from the CPU at run time.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "VectorMath.h"
#include "nngraph/runtime/Parallel.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace nng::backends::cpu {

namespace {

/// Partial accumulators per reduction (one AVX-512 register of floats).
constexpr int64_t Lanes = 16;

/// Rows per parallel chunk: about 16K elements, at least one row.
int64_t rowGrain(int64_t Len) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(Len, 1)); }

/// The reference's row maximum: NaN never wins, and a maximum that is not
/// finite (an empty, all -inf or +inf row) becomes 0.
NNG_VECTOR_CLONES
float rowMax(const float *X, int64_t N) {
  float Acc[Lanes];
  for (int64_t L = 0; L < Lanes; ++L)
    Acc[L] = -INFINITY;
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L)
      Acc[L] = Acc[L] < X[I + L] ? X[I + L] : Acc[L];
  float M = -INFINITY;
  for (int64_t L = 0; L < Lanes; ++L)
    M = M < Acc[L] ? Acc[L] : M;
  for (; I < N; ++I)
    M = M < X[I] ? X[I] : M;
  return std::isfinite(M) ? M : 0.0f;
}

/// Sum of X[0, N) in a fixed order (16 partial sums, then the tail).
NNG_VECTOR_CLONES
float rowSum(const float *X, int64_t N) {
  float Acc[Lanes] = {};
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L)
      Acc[L] += X[I + L];
  float S = 0;
  for (int64_t L = 0; L < Lanes; ++L)
    S += Acc[L];
  for (; I < N; ++I)
    S += X[I];
  return S;
}

/// Sum of (X - M)^2 in the same fixed order.
NNG_VECTOR_CLONES
float rowSquares(const float *X, int64_t N, float M) {
  float Acc[Lanes] = {};
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L) {
      float D = X[I + L] - M;
      Acc[L] += D * D;
    }
  float S = 0;
  for (int64_t L = 0; L < Lanes; ++L)
    S += Acc[L];
  for (; I < N; ++I)
    S += (X[I] - M) * (X[I] - M);
  return S;
}

NNG_VECTOR_CLONES
void expShifted(const float *X, float *Y, int64_t N, float M) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = expFloat(X[I] - M);
}

NNG_VECTOR_CLONES
void divideBy(float *Y, int64_t N, float S) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = Y[I] / S;
}

NNG_VECTOR_CLONES
void subtract(const float *X, float *Y, int64_t N, float L) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = X[I] - L;
}

NNG_VECTOR_CLONES
void normalizeRow(const float *X, float *Y, int64_t N, float M, float Inv,
                  const float *Scale, const float *Bias) {
  if (Bias)
    for (int64_t I = 0; I < N; ++I)
      Y[I] = (X[I] - M) * Inv * Scale[I] + Bias[I];
  else
    for (int64_t I = 0; I < N; ++I)
      Y[I] = (X[I] - M) * Inv * Scale[I];
}

} // namespace

void softmaxRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                 bool Log) {
  parallelFor(0, Rows, rowGrain(Len), [&](int64_t B, int64_t E) {
    for (int64_t R = B; R < E; ++R) {
      const float *In = X + R * Len;
      float *Out = Y + R * Len;
      float M = rowMax(In, Len);
      // Out holds the exponentials first (it does not overlap In).
      expShifted(In, Out, Len, M);
      float S = rowSum(Out, Len);
      if (Log)
        subtract(In, Out, Len, M + std::log(S));
      else
        divideBy(Out, Len, S);
    }
  });
}

void layerNormRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                   float Eps, const float *Scale, const float *Bias) {
  parallelFor(0, Rows, rowGrain(Len), [&](int64_t B, int64_t E) {
    for (int64_t R = B; R < E; ++R) {
      const float *In = X + R * Len;
      float M = rowSum(In, Len) / static_cast<float>(Len);
      float Var = rowSquares(In, Len, M) / static_cast<float>(Len);
      float Inv = 1.0f / std::sqrt(Var + Eps);
      normalizeRow(In, Y + R * Len, Len, M, Inv, Scale, Bias);
    }
  });
}

} // namespace nng::backends::cpu
