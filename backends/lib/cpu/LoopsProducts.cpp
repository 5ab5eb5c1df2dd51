//===- LoopsProducts.cpp - Products of a few rows ---------------------------===//
//
// Products whose left operand has a few rows (a decoder's step, a
// classifier's head at batch 1), where a oneDNN primitive per shape would
// cost more than the product: each a pass over the right operand (as it
// lies, or transposed), optionally with a bias and a residual, in parallel
// over chunks of its columns.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

namespace nng::backends::cpu {

namespace {
/// Row R of Y = A x B: Y[R] = sum_k A[R][k] * B[k] (rows of N floats).
NNG_VECTOR_CLONES
void rowTimesMatrix(const float *__restrict A, const float *__restrict B,
                    float *__restrict Y, int64_t K, int64_t N) {
  for (int64_t J = 0; J < N; ++J)
    Y[J] = 0;
  for (int64_t I = 0; I < K; ++I) {
    float X = A[I];
    const float *Row = B + I * N;
    for (int64_t J = 0; J < N; ++J)
      Y[J] += X * Row[J];
  }
}
} // namespace

void batchedFewRows(const float *A, const float *B, float *Y, int64_t Batches,
                    int64_t M, int64_t K, int64_t N) {
  int64_t Grain = std::max<int64_t>(1, ElementGrain / std::max<int64_t>(K * N, 1));
  parallelFor(0, Batches * M, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t R = Begin; R < End; ++R)
      rowTimesMatrix(A + R * K, B + (R / M) * K * N, Y + R * N, K, N);
  });
}

NNG_VECTOR_CLONES float dot(const float *__restrict A,
                            const float *__restrict B, int64_t K) {
  float Acc[16] = {};
  int64_t I = 0;
  for (; I + 16 <= K; I += 16)
    for (int J = 0; J < 16; ++J)
      Acc[J] += A[I + J] * B[I + J];
  float S = 0;
  for (int J = 0; J < 16; ++J)
    S += Acc[J];
  for (; I < K; ++I)
    S += A[I] * B[I];
  return S;
}

void batchedFewRowsTransB(const float *A, const float *Bt, float *Y,
                          int64_t Batches, int64_t M, int64_t K, int64_t N) {
  int64_t Grain = std::max<int64_t>(1, ElementGrain / std::max<int64_t>(K * M, 1));
  parallelFor(0, Batches * N, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t U = Begin; U < End; ++U) {
      int64_t Bi = U / N, J = U % N;
      const float *Row = Bt + U * K; // Row J of batch Bi.
      for (int64_t R = 0; R < M; ++R)
        Y[(Bi * M + R) * N + J] = dot(A + (Bi * M + R) * K, Row, K);
    }
  });
}

namespace {
/// linearFewRows sums W's rows in at most MaxRowChunks chunks of at least
/// MinChunkRows contiguous rows (fixed by K alone: its sums do not depend
/// on the thread count), each into partial sums of its own, which a second
/// loop adds up. A thread so reads W as one run of whole rows, which the
/// prefetchers follow at the memory's full speed: on a 2-core EPYC the
/// benchmark decoder's products read 38 GB/s, as fast as a plain sum of
/// the weights, where tiles of columns across the rows (a short run per
/// row) read 28-32 GB/s. More threads than chunks split the columns too.
constexpr int64_t MaxRowChunks = 8, MinChunkRows = 64;
/// Rows of W added at once (four streams, one load of the partial sums).
constexpr int64_t RowsAtOnce = 4;

/// Sixteen floats, loaded from and stored to any float address (GCC's
/// vector extension: one AVX-512 register, two AVX2 ones, four SSE ones).
typedef float Floats16 __attribute__((vector_size(64), aligned(4), may_alias));

/// Part ([M, N]) columns [C0, C1) = the M rows of A ([M, K]) times rows
/// [K0, K1) of W ([K, N], row-major), W read row after row.
template <int M>
__attribute__((always_inline)) inline void
sumRowsOfW(const float *__restrict A, const float *__restrict W,
           float *__restrict Part, int64_t K, int64_t N, int64_t K0,
           int64_t K1, int64_t C0, int64_t C1) {
  for (int R = 0; R < M; ++R)
    std::fill(Part + R * N + C0, Part + R * N + C1, 0.0f);
  int64_t I = K0;
  for (; I + RowsAtOnce <= K1; I += RowsAtOnce) {
    const float *W0 = W + I * N;
    float X[M][RowsAtOnce];
    for (int R = 0; R < M; ++R)
      for (int J = 0; J < RowsAtOnce; ++J)
        X[R][J] = A[R * K + I + J];
    int64_t C = C0;
    for (; C + 16 <= C1; C += 16) {
      Floats16 V0 = *reinterpret_cast<const Floats16 *>(W0 + C);
      Floats16 V1 = *reinterpret_cast<const Floats16 *>(W0 + N + C);
      Floats16 V2 = *reinterpret_cast<const Floats16 *>(W0 + 2 * N + C);
      Floats16 V3 = *reinterpret_cast<const Floats16 *>(W0 + 3 * N + C);
#pragma GCC unroll 8
      for (int R = 0; R < M; ++R) {
        Floats16 &S = *reinterpret_cast<Floats16 *>(Part + R * N + C);
        S += X[R][0] * V0 + X[R][1] * V1 + X[R][2] * V2 + X[R][3] * V3;
      }
    }
    for (; C < C1; ++C) // The last columns.
      for (int R = 0; R < M; ++R)
        Part[R * N + C] += X[R][0] * W0[C] + X[R][1] * W0[N + C] +
                           X[R][2] * W0[2 * N + C] + X[R][3] * W0[3 * N + C];
  }
  for (; I < K1; ++I) // The chunk's last rows.
    for (int R = 0; R < M; ++R)
      for (int64_t C = C0; C < C1; ++C)
        Part[R * N + C] += A[R * K + I] * W[I * N + C];
}

NNG_VECTOR_CLONES
void rowsTimesChunk(const float *__restrict A, const float *__restrict W,
                    float *__restrict Part, int64_t M, int64_t K, int64_t N,
                    int64_t K0, int64_t K1, int64_t C0, int64_t C1) {
  switch (M) {
#define NNG_ROWS_CASE(R)                                                       \
  case R:                                                                      \
    sumRowsOfW<R>(A, W, Part, K, N, K0, K1, C0, C1);                           \
    break;
    NNG_ROWS_CASE(1)
    NNG_ROWS_CASE(2)
    NNG_ROWS_CASE(3)
    NNG_ROWS_CASE(4)
    NNG_ROWS_CASE(5)
    NNG_ROWS_CASE(6)
    NNG_ROWS_CASE(7)
    NNG_ROWS_CASE(8)
#undef NNG_ROWS_CASE
  }
}

/// Y[C0, C1) = the sum of the Chunks partial rows from P (Stride apart)
/// + Bias + Residual, elementwise (Y may be Residual).
NNG_VECTOR_CLONES
void addChunks(float *__restrict P, int64_t Chunks, int64_t Stride,
               const float *Bias, const float *Residual, float *Y, int64_t C0,
               int64_t C1) {
  for (int64_t Chunk = 1; Chunk < Chunks; ++Chunk) {
    const float *__restrict Q = P + Chunk * Stride;
    for (int64_t C = C0; C < C1; ++C)
      P[C] += Q[C];
  }
  if (Bias)
    for (int64_t C = C0; C < C1; ++C)
      P[C] += Bias[C];
  if (Residual)
    for (int64_t C = C0; C < C1; ++C)
      Y[C] = P[C] + Residual[C];
  else
    for (int64_t C = C0; C < C1; ++C)
      Y[C] = P[C];
}
} // namespace

void linearFewRows(const float *A, const float *W, bool TransB,
                   const float *Bias, const float *Residual, float *Y,
                   int64_t M, int64_t K, int64_t N) {
  auto Finish = [&](int64_t R, int64_t J, float Sum) {
    if (Bias)
      Sum += Bias[J];
    if (Residual)
      Sum += Residual[R * N + J];
    Y[R * N + J] = Sum;
  };
  if (TransB) { // W is [N, K]: a dot product per row of W and of A.
    int64_t Grain = std::max<int64_t>(1, ElementGrain / std::max<int64_t>(K, 1));
    parallelFor(0, N, Grain, [&](int64_t Begin, int64_t End) {
      for (int64_t J = Begin; J < End; ++J)
        for (int64_t R = 0; R < M; ++R)
          Finish(R, J, dot(A + R * K, W + J * K, K));
    });
    return;
  }
  assert(M >= 1 && M <= OwnLoopRows && "linearFewRows takes few rows");
  int64_t Chunks = std::clamp<int64_t>(K / MinChunkRows, 1, MaxRowChunks);
  int64_t Bands = std::min<int64_t>((numThreads() + Chunks - 1) / Chunks,
                                    std::max<int64_t>(N / 256, 1));
  int64_t BandWidth = (N + Bands - 1) / Bands;
  BandWidth = (BandWidth + 15) / 16 * 16;
  // The chunks' partial sums, kept by the calling thread from run to run.
  thread_local std::vector<float> Parts;
  size_t Need = static_cast<size_t>(Chunks * M * N);
  if (Parts.size() < Need)
    Parts.resize(Need);
  float *P = Parts.data();
  parallelFor(0, Chunks * Bands, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t T = Begin; T < End; ++T) {
      int64_t Chunk = T / Bands, Band = T % Bands;
      int64_t C0 = std::min(N, Band * BandWidth);
      int64_t C1 = std::min(N, C0 + BandWidth);
      rowsTimesChunk(A, W, P + Chunk * M * N, M, K, N, K * Chunk / Chunks,
                     K * (Chunk + 1) / Chunks, C0, C1);
    }
  });
  parallelFor(0, N, std::max<int64_t>(1, ElementGrain / M),
              [&](int64_t Begin, int64_t End) {
                for (int64_t R = 0; R < M; ++R)
                  addChunks(P + R * N, Chunks, M * N, Bias,
                            Residual ? Residual + R * N : nullptr, Y + R * N,
                            Begin, End);
              });
}

} // namespace nng::backends::cpu
