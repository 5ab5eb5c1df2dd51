//===- LoopsRows.cpp - Softmax and layer normalization over rows ----------===//
//
// The backend's own loops over the rows of a plain tensor: Softmax,
// LogSoftmax and LayerNormalization, with the reference kernels' semantics
// (the row maximum ignores NaN and is 0 when it is not finite; a NaN or an
// infinity in a row makes the whole row NaN where the reference's does)
// computed in f32. Reductions keep 16 partial sums in a fixed order, so
// results are the same run to run and thread count to thread count; exp is
// a vectorizable polynomial (Cephes' expf: within 2 ulp of the correctly
// rounded result for arguments in [-86.9, 88.7]; below, where exp is under
// 2^-125, it returns 0, above +inf). InstanceNormalization's rows (a
// channel's extent, or all of a GroupNorm(1, C) export's [1, 1, C * L])
// are summed and normalized in double, as the reference does, in blocks of
// a fixed size spread over the threads: a single long row is as parallel
// as many short ones, and the sums' order never depends on the thread
// count. target_clones picks the AVX-512, AVX2 or baseline copy from the
// CPU at run time.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "VectorMath.h"
#include "nngraph/runtime/Parallel.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

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

/// Sum of X[0, N) in double (8 partial sums in a fixed order).
NNG_VECTOR_CLONES
double blockSum(const float *X, int64_t N) {
  double Acc[8] = {};
  int64_t I = 0;
  for (; I + 8 <= N; I += 8)
    for (int64_t L = 0; L < 8; ++L)
      Acc[L] += X[I + L];
  double S = 0;
  for (int64_t L = 0; L < 8; ++L)
    S += Acc[L];
  for (; I < N; ++I)
    S += X[I];
  return S;
}

/// Sum of (X - M)^2 over X[0, N) in double, in the same order.
NNG_VECTOR_CLONES
double blockSquares(const float *X, int64_t N, double M) {
  double Acc[8] = {};
  int64_t I = 0;
  for (; I + 8 <= N; I += 8)
    for (int64_t L = 0; L < 8; ++L) {
      double D = X[I + L] - M;
      Acc[L] += D * D;
    }
  double S = 0;
  for (int64_t L = 0; L < 8; ++L)
    S += Acc[L];
  for (; I < N; ++I)
    S += (X[I] - M) * (X[I] - M);
  return S;
}

/// Y = (X - M) * Inv * Scale + Bias over N floats, in double.
NNG_VECTOR_CLONES
void normalizeBlock(const float *X, float *Y, int64_t N, double M, double Inv,
                    double Scale, double Bias) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = static_cast<float>((X[I] - M) * Inv * Scale + Bias);
}

/// Floats per block of an instance-normalization row.
constexpr int64_t NormBlock = 8192;

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

void instanceNormRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                      int64_t Channels, double Eps, const float *Scale,
                      const float *Bias) {
  if (Rows <= 0 || Len <= 0)
    return;
  // Work items: (row, block) pairs; each pass runs over all of them, the
  // rows' statistics between passes from the blocks' sums in order.
  int64_t PerRow = (Len + NormBlock - 1) / NormBlock;
  int64_t Items = Rows * PerRow;
  int64_t Grain = std::max<int64_t>(1, NormBlock / std::min(Len, NormBlock));
  std::vector<double> Part(Items), Mean(Rows), Inv(Rows);
  auto Block = [&](int64_t W, auto Fn) {
    int64_t R = W / PerRow, B0 = W % PerRow * NormBlock;
    Fn(R, B0, std::min(NormBlock, Len - B0));
  };
  auto RowTotals = [&](std::vector<double> &Out) {
    for (int64_t R = 0; R < Rows; ++R) {
      double S = 0;
      for (int64_t B = 0; B < PerRow; ++B)
        S += Part[R * PerRow + B];
      Out[R] = S / static_cast<double>(Len);
    }
  };
  parallelFor(0, Items, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t W = Begin; W < End; ++W)
      Block(W, [&](int64_t R, int64_t B0, int64_t N) {
        Part[W] = blockSum(X + R * Len + B0, N);
      });
  });
  RowTotals(Mean);
  parallelFor(0, Items, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t W = Begin; W < End; ++W)
      Block(W, [&](int64_t R, int64_t B0, int64_t N) {
        Part[W] = blockSquares(X + R * Len + B0, N, Mean[R]);
      });
  });
  RowTotals(Inv);
  for (int64_t R = 0; R < Rows; ++R)
    Inv[R] = 1.0 / std::sqrt(Inv[R] + Eps);
  parallelFor(0, Items, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t W = Begin; W < End; ++W)
      Block(W, [&](int64_t R, int64_t B0, int64_t N) {
        int64_t Ch = R % Channels;
        normalizeBlock(X + R * Len + B0, Y + R * Len + B0, N, Mean[R], Inv[R],
                       Scale[Ch], Bias[Ch]);
      });
  });
}

} // namespace nng::backends::cpu
