//===- LoopsElementwise.cpp - Elementwise f32 loops with the reference's NaN ===//
//
// Elementwise loops where oneDNN's result differs from the reference's:
// its relu and clip map NaN to numbers (they are built on vmaxps), where
// ONNX (and the reference kernels) keep NaN. These loops use the
// reference's exact comparisons, which compilers turn into compare-and-blend
// vector code; target_clones picks the AVX-512, AVX2 or baseline copy from
// the CPU at run time. Also the guards' magnitude test (allWithin), the
// four arithmetic ops of f32 and PRelu's x < 0 ? slope * x : x with the
// slope broadcast by strides (oneDNN's prelu differs on infinite and NaN
// slopes, see LowerActivation.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/ir/ElementwiseFormulas.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

namespace nng::backends::cpu {

namespace {

namespace F = ir::formula;
constexpr ir::ScalarMath<float> Flt;
constexpr ir::ScalarMath<double> Dbl;

// (No __restrict: X and Y may be the same buffer.)
/// The clamp of X into Y; true when X held a NaN (an OR of compares, which
/// vectorizes with the loop).
NNG_VECTOR_CLONES
bool clampRange(const float *X, float *Y, int64_t N, float Lo, float Hi) {
  int NaN = 0;
  for (int64_t I = 0; I < N; ++I) {
    float V = X[I];
    NaN |= V != V;
    Y[I] = F::clip(Flt, V, Lo, Hi);
  }
  return NaN != 0;
}

NNG_VECTOR_CLONES
void leakyRange(const float *X, float *Y, int64_t N, float Alpha) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = F::leakyRelu(Flt, X[I], Alpha);
}

/// The reference's HardSigmoid, in double as it computes (a NaN gives 1).
NNG_VECTOR_CLONES
void hardSigmoidRange(const float *X, float *Y, int64_t N, double Alpha,
                      double Beta) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = static_cast<float>(
        F::hardSigmoid(Dbl, static_cast<double>(X[I]), Alpha, Beta));
}

} // namespace

bool epilogueRange(const Epilogue &E, const float *X, float *Y, int64_t N) {
  if (E.K == Epilogue::Clamp)
    return clampRange(X, Y, N, E.Lo, E.Hi);
  if (E.K == Epilogue::Leaky)
    leakyRange(X, Y, N, E.Alpha);
  return false;
}

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
