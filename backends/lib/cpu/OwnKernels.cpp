//===- OwnKernels.cpp - The cpu backend's own vector loops ----------------===//
//
// Loops where oneDNN's result differs from the reference's: its relu, clip
// and max pooling map NaN to numbers (they are built on vmaxps), where ONNX
// (and the reference kernels) keep NaN. These loops use the reference's
// exact comparisons, which compilers turn into compare-and-blend vector
// code; target_clones picks the AVX-512, AVX2 or baseline copy from the CPU
// at run time. They are layout-agnostic (elementwise) or take the channel
// block of a blocked layout (max pooling). stridedCopy makes a strided view
// (a transpose, a slice) dense: rows of the source's innermost run, copied
// whole when they are contiguous, gathered otherwise. preluFloats is
// PRelu's x < 0 ? slope * x : x with the slope broadcast by strides (oneDNN's
// prelu differs on infinite and NaN slopes, see LowerActivation.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cassert>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

namespace nng::backends::cpu {

namespace {

/// Elements per parallel chunk of an elementwise loop (PyTorch's grain).
constexpr int64_t ElementGrain = 1 << 15;

// (No __restrict: X and Y may be the same buffer.)
/// The clamp of X into Y; true when X held a NaN (an OR of compares, which
/// vectorizes with the loop).
NNG_VECTOR_CLONES
bool clampRange(const float *X, float *Y, int64_t N, float Lo, float Hi) {
  int NaN = 0;
  for (int64_t I = 0; I < N; ++I) {
    float V = X[I];
    NaN |= V != V;
    V = V < Lo ? Lo : V;
    Y[I] = V > Hi ? Hi : V;
  }
  return NaN != 0;
}

NNG_VECTOR_CLONES
void leakyRange(const float *X, float *Y, int64_t N, float Alpha) {
  for (int64_t I = 0; I < N; ++I) {
    float V = X[I];
    Y[I] = V < 0.0f ? V * Alpha : V;
  }
}

/// The reference's HardSigmoid, in double as it computes: std::min(1, v)
/// is 1 for a NaN v, so NaN gives 1.
NNG_VECTOR_CLONES
void hardSigmoidRange(const float *X, float *Y, int64_t N, double Alpha,
                      double Beta) {
  for (int64_t I = 0; I < N; ++I) {
    double V = Alpha * static_cast<double>(X[I]) + Beta;
    V = V < 1.0 ? V : 1.0;
    Y[I] = static_cast<float>(0.0 < V ? V : 0.0);
  }
}

} // namespace

bool clampFloats(const float *X, float *Y, int64_t N, float Lo, float Hi) {
  std::atomic<bool> NaN{false};
  parallelFor(0, N, ElementGrain, [&](int64_t B, int64_t E) {
    if (clampRange(X + B, Y + B, E - B, Lo, Hi))
      NaN.store(true, std::memory_order_relaxed);
  });
  return NaN.load(std::memory_order_relaxed);
}

namespace {

/// The largest magnitude bit pattern of N floats (an integer max, which
/// vectorizes): above 0x7f800000 means a NaN, equal an infinity.
NNG_VECTOR_CLONES
uint32_t maxMagnitudeBitsOf(const float *X, int64_t N) {
  uint32_t M = 0;
  for (int64_t I = 0; I < N; ++I) {
    uint32_t B;
    std::memcpy(&B, X + I, sizeof(B));
    B &= 0x7fffffffu;
    M = M < B ? B : M;
  }
  return M;
}

} // namespace

bool allWithin(const float *X, int64_t N, float Limit) {
  uint32_t LimitBits;
  std::memcpy(&LimitBits, &Limit, sizeof(LimitBits));
  std::atomic<bool> Out{false};
  parallelFor(0, N, ElementGrain, [&](int64_t B, int64_t E) {
    if (maxMagnitudeBitsOf(X + B, E - B) > LimitBits)
      Out.store(true, std::memory_order_relaxed);
  });
  return !Out.load(std::memory_order_relaxed);
}

void leakyReluFloats(const float *X, float *Y, int64_t N, float Alpha) {
  parallelFor(0, N, ElementGrain, [&](int64_t B, int64_t E) {
    leakyRange(X + B, Y + B, E - B, Alpha);
  });
}

void hardSigmoidFloats(const float *X, float *Y, int64_t N, float Alpha,
                       float Beta) {
  parallelFor(0, N, ElementGrain, [&](int64_t B, int64_t E) {
    hardSigmoidRange(X + B, Y + B, E - B, Alpha, Beta);
  });
}

namespace {

/// The reference's max: a NaN anywhere in the window wins.
inline float nanMax(float A, float B) { return (A < B || B != B) ? B : A; }

/// One output row of a 2-d max pool over Blk interleaved channels:
/// Src[h][w][Blk], Dst[ow][Blk] for output row Oh. Fixed: Blk is the
/// compile-time Fixed (nChw16c's 16: its loops become whole vectors, with
/// no remainder code per window element), else G.Block (NHWC: all channels
/// in one block, in chunks of 64 accumulators).
template <int64_t Fixed>
[[gnu::always_inline]] inline void maxPoolRowOf(const float *__restrict Src,
                                                float *__restrict Dst,
                                                const MaxPoolGeometry &G,
                                                int64_t Oh) {
  const int64_t Blk = Fixed ? Fixed : G.Block;
  for (int64_t Ow = 0; Ow < G.OW; ++Ow) {
    for (int64_t C0 = 0; C0 < Blk; C0 += 64) {
      int64_t CN = std::min<int64_t>(64, Blk - C0);
      float Acc[64];
#pragma GCC unroll 1
      for (int64_t C = 0; C < CN; ++C)
        Acc[C] = -INFINITY;
      for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
        int64_t H = Oh * G.SH - G.PT + Kh * G.DH;
        if (H < 0 || H >= G.H)
          continue;
        for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
          int64_t W = Ow * G.SW - G.PL + Kw * G.DW;
          if (W < 0 || W >= G.W)
            continue;
          const float *X = Src + (H * G.W + W) * Blk + C0;
          // (Not unrolled: GCC vectorizes the loop, not its unrolled copy.)
#pragma GCC unroll 1
          for (int64_t C = 0; C < CN; ++C)
            Acc[C] = nanMax(Acc[C], X[C]);
        }
      }
      float *Y = Dst + Ow * Blk + C0;
#pragma GCC unroll 1
      for (int64_t C = 0; C < CN; ++C)
        Y[C] = Acc[C];
    }
  }
}

NNG_VECTOR_CLONES
void maxPoolRow(const float *__restrict Src, float *__restrict Dst,
                const MaxPoolGeometry &G, int64_t Oh) {
  maxPoolRowOf<0>(Src, Dst, G, Oh);
}

NNG_VECTOR_CLONES
void maxPoolRow16(const float *__restrict Src, float *__restrict Dst,
                  const MaxPoolGeometry &G, int64_t Oh) {
  maxPoolRowOf<16>(Src, Dst, G, Oh);
}

} // namespace

void maxPool2d(const float *Src, float *Dst, const MaxPoolGeometry &G) {
  // Planes: (batch, channel block) pairs; each is H*W*Blk in, OH*OW*Blk out.
  int64_t Planes = G.N * G.CBlocks;
  int64_t InPlane = G.H * G.W * G.Block, OutPlane = G.OH * G.OW * G.Block;
  parallelFor(0, Planes * G.OH, 1, [&](int64_t B, int64_t E) {
    for (int64_t I = B; I < E; ++I) {
      int64_t Plane = I / G.OH, Oh = I % G.OH;
      const float *S = Src + Plane * InPlane;
      float *D = Dst + Plane * OutPlane + Oh * G.OW * G.Block;
      if (G.Block == 16)
        maxPoolRow16(S, D, G, Oh);
      else
        maxPoolRow(S, D, G, Oh);
    }
  });
}

namespace {

/// Dst[I] = Src[I * Stride] for I < N, elements of type T.
template <typename T>
void gatherRow(const char *Src, char *Dst, int64_t N, int64_t Stride) {
  const T *S = reinterpret_cast<const T *>(Src);
  T *D = reinterpret_cast<T *>(Dst);
  for (int64_t I = 0; I < N; ++I)
    D[I] = S[I * Stride];
}

} // namespace

void stridedCopy(const char *Src, char *Dst, const StridedView &V,
                 size_t Elem) {
  // Drop size-1 axes and merge axes that are contiguous in the source.
  std::vector<int64_t> Sz, St;
  int64_t Numel = 1;
  for (size_t D = 0; D < V.Sizes.size(); ++D) {
    Numel *= V.Sizes[D];
    if (V.Sizes[D] == 1)
      continue;
    if (!Sz.empty() && St.back() == V.Strides[D] * V.Sizes[D]) {
      Sz.back() *= V.Sizes[D];
      St.back() = V.Strides[D];
    } else {
      Sz.push_back(V.Sizes[D]);
      St.push_back(V.Strides[D]);
    }
  }
  if (Numel == 0)
    return;
  Src += V.Offset * static_cast<int64_t>(Elem);
  if (Sz.empty()) {
    std::memcpy(Dst, Src, Elem);
    return;
  }
  const int64_t Inner = Sz.back(), InnerStride = St.back();
  const int64_t Outer = Numel / Inner, Rank = static_cast<int64_t>(Sz.size());
  const int64_t RowBytes = Inner * static_cast<int64_t>(Elem);
  parallelFor(0, Outer, std::max<int64_t>(1, 16384 / Inner),
              [&](int64_t B, int64_t E) {
    // The source offset of row B, then advanced like an odometer.
    std::vector<int64_t> Idx(Rank - 1);
    int64_t Off = 0;
    for (int64_t D = Rank - 2, R = B; D >= 0; --D) {
      Idx[D] = R % Sz[D];
      R /= Sz[D];
      Off += Idx[D] * St[D];
    }
    for (int64_t Row = B; Row < E; ++Row) {
      const char *S = Src + Off * static_cast<int64_t>(Elem);
      char *D = Dst + Row * RowBytes;
      if (InnerStride == 1)
        std::memcpy(D, S, RowBytes);
      else if (Elem == 4)
        gatherRow<uint32_t>(S, D, Inner, InnerStride);
      else if (Elem == 8)
        gatherRow<uint64_t>(S, D, Inner, InnerStride);
      else if (Elem == 2)
        gatherRow<uint16_t>(S, D, Inner, InnerStride);
      else if (Elem == 1)
        gatherRow<uint8_t>(S, D, Inner, InnerStride);
      else
        for (int64_t I = 0; I < Inner; ++I)
          std::memcpy(D + I * Elem, S + I * InnerStride * Elem, Elem);
      for (int64_t Ax = Rank - 2; Ax >= 0; --Ax) {
        Off += St[Ax];
        if (++Idx[Ax] < Sz[Ax])
          break;
        Off -= St[Ax] * Sz[Ax];
        Idx[Ax] = 0;
      }
    }
  });
}

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

namespace {
template <BinaryKind K> float apply(float X, float Y) {
  if constexpr (K == BinaryKind::Add)
    return X + Y;
  else if constexpr (K == BinaryKind::Sub)
    return X - Y;
  else if constexpr (K == BinaryKind::Mul)
    return X * Y;
  else
    return X / Y;
}

template <BinaryKind K>
NNG_VECTOR_CLONES void binaryRange(const float *A, const float *B, bool Scalar,
                                   float *Y, int64_t Begin, int64_t End) {
  if (Scalar) {
    float S = B[0];
    for (int64_t I = Begin; I < End; ++I)
      Y[I] = apply<K>(A[I], S);
    return;
  }
  for (int64_t I = Begin; I < End; ++I)
    Y[I] = apply<K>(A[I], B[I]);
}
} // namespace

void binaryFloats(BinaryKind K, const float *A, const float *B, bool Scalar,
                  float *Y, int64_t Count) {
  auto Fn = K == BinaryKind::Add   ? &binaryRange<BinaryKind::Add>
            : K == BinaryKind::Sub ? &binaryRange<BinaryKind::Sub>
            : K == BinaryKind::Mul ? &binaryRange<BinaryKind::Mul>
                                   : &binaryRange<BinaryKind::Div>;
  parallelFor(0, Count, ElementGrain, [&](int64_t Begin, int64_t End) {
    Fn(A, B, Scalar, Y, Begin, End);
  });
}

void concatRuns(const std::vector<const float *> &Src,
                const std::vector<int64_t> &Runs, float *Dst, int64_t Outer) {
  int64_t Row = 0;
  for (int64_t R : Runs)
    Row += R;
  int64_t Grain = std::max<int64_t>(1, ElementGrain / std::max<int64_t>(Row, 1));
  parallelFor(0, Outer, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t O = Begin; O < End; ++O) {
      float *To = Dst + O * Row;
      for (size_t I = 0; I < Src.size(); ++I) {
        if (Runs[I] == 0)
          continue; // An empty input (an empty cache).
        std::memcpy(To, Src[I] + O * Runs[I], Runs[I] * sizeof(float));
        To += Runs[I];
      }
    }
  });
}

namespace {

/// PRelu over one run: Y = X < 0 ? S * X : X, the slope one value (Step 0)
/// or a run of its own (Step 1).
NNG_VECTOR_CLONES
void preluRange(const float *X, const float *S, int64_t Step, float *Y,
                int64_t N) {
  if (Step == 0) {
    float A = S[0];
    for (int64_t I = 0; I < N; ++I) {
      float V = X[I];
      Y[I] = V < 0.0f ? A * V : V;
    }
    return;
  }
  for (int64_t I = 0; I < N; ++I) {
    float V = X[I];
    Y[I] = V < 0.0f ? S[I] * V : V;
  }
}

} // namespace

void preluFloats(const float *X, const float *Slope, float *Y, const Shape &XS,
                 const Shape &SlopeShape) {
  if (XS.numel() == 0)
    return;
  // X's axes with the slope's stride along each (0 where it broadcasts;
  // the slope's shape padded with leading ones), size-1 axes dropped and
  // neighbours that step alike merged: the last is the inner run.
  size_t R = XS.rank(), Pad = R - SlopeShape.rank();
  std::vector<int64_t> Sizes, Strides;
  int64_t SlopeStride = 1;
  for (size_t D = R; D-- > 0;) {
    int64_t Size = XS[D];
    int64_t SD = D < Pad ? 1 : SlopeShape[D - Pad];
    int64_t St = SD == 1 ? 0 : SlopeStride;
    SlopeStride *= SD;
    if (Size == 1)
      continue;
    if (!Sizes.empty() &&
        ((St == 0 && Strides.front() == 0) ||
         (St != 0 && St == Strides.front() * Sizes.front()))) {
      Sizes.front() *= Size;
      continue;
    }
    Sizes.insert(Sizes.begin(), Size);
    Strides.insert(Strides.begin(), St);
  }
  if (Sizes.empty()) { // A single element.
    Sizes = {1};
    Strides = {0};
  }
  int64_t Len = Sizes.back(), Step = Strides.back() ? 1 : 0;
  int64_t Outer = XS.numel() / std::max<int64_t>(Len, 1);
  // Work items: chunks of the inner runs (a long run splits too).
  int64_t Chunk = std::min(Len, ElementGrain);
  int64_t PerRun = (Len + Chunk - 1) / std::max<int64_t>(Chunk, 1);
  int64_t Grain =
      std::max<int64_t>(1, ElementGrain / std::max<int64_t>(Chunk, 1));
  parallelFor(0, Outer * PerRun, Grain, [&](int64_t B, int64_t E) {
    for (int64_t W = B; W < E; ++W) {
      int64_t O = W / PerRun, C0 = W % PerRun * Chunk;
      // The slope's offset of outer index O.
      int64_t Off = 0, Rest = O;
      for (size_t D = Sizes.size() - 1; D-- > 0;) {
        Off += Rest % Sizes[D] * Strides[D];
        Rest /= Sizes[D];
      }
      int64_t N = std::min(Chunk, Len - C0), At = O * Len + C0;
      preluRange(X + At, Slope + Off + C0 * Step, Step, Y + At, N);
    }
  });
}

} // namespace nng::backends::cpu
