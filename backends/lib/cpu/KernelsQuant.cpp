//===- KernelsQuant.cpp - QuantizeLinear and DequantizeLinear loops -------===//
//
// The cpu backend's own linear (de)quantization loops. They compute the
// reference kernel's formulas (KernelsQuant.cpp) in the same float
// operations: quantize divides by the scale (x / scale, not x * (1 /
// scale), which differs in the last bit), maps NaN to the zero point,
// rounds half to even (nearbyint in the default rounding mode), adds the
// zero point and saturates; dequantize computes float(x - zero_point) *
// scale. So results equal the reference's bit for bit. The loops
// vectorize (division, vroundps/vrndscaleps, blends; target_clones picks
// AVX-512, AVX2 or baseline at run time) and split over threads; per-axis
// parameters apply per row of the innermost run, or per element when that
// run is short. runQuantizeLinear / runDequantizeLinear serve node kernels
// and hand anything unusual (i32 input to QuantizeLinear, bad parameters)
// to the reference kernel, which reports errors.
//
//===----------------------------------------------------------------------===//

#include "KernelsQuant.h"
#include "DnnlKernel.h"
#include "Kernels.h"
#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

#include <cmath>
#include <limits>

namespace nng::backends::cpu {

namespace {

/// Elements per parallel chunk (PyTorch's grain for elementwise loops).
constexpr int64_t ElementGrain = 1 << 15;
/// Innermost runs shorter than this use per-element parameters.
constexpr int64_t ShortRun = 16;

/// One element of QuantizeLinear, exactly as the reference computes it.
template <typename T>
__attribute__((always_inline)) inline T quantizeOne(float X, float S, float Z) {
  constexpr float Lo = std::numeric_limits<T>::lowest();
  constexpr float Hi = std::numeric_limits<T>::max();
  float Q = X / S;
  Q = Q != Q ? 0.0f : Q; // NaN quantizes to the zero point.
  // An integer below 2^24 plus the zero point is exact in float; larger
  // magnitudes saturate either way.
  Q = std::nearbyint(Q) + Z;
  Q = Q < Lo ? Lo : Q;
  Q = Q > Hi ? Hi : Q;
  return static_cast<T>(static_cast<int32_t>(Q));
}

NNG_VECTOR_CLONES
void quantizeU8(const float *__restrict X, uint8_t *__restrict Y, int64_t N,
                float S, float Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = quantizeOne<uint8_t>(X[I], S, Z);
}

NNG_VECTOR_CLONES
void quantizeI8(const float *__restrict X, int8_t *__restrict Y, int64_t N,
                float S, float Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = quantizeOne<int8_t>(X[I], S, Z);
}

NNG_VECTOR_CLONES
void quantizeU8Each(const float *__restrict X, uint8_t *__restrict Y, int64_t N,
                    const float *S, const float *Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = quantizeOne<uint8_t>(X[I], S[I], Z[I]);
}

NNG_VECTOR_CLONES
void quantizeI8Each(const float *__restrict X, int8_t *__restrict Y, int64_t N,
                    const float *S, const float *Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = quantizeOne<int8_t>(X[I], S[I], Z[I]);
}

/// One element of DequantizeLinear: the difference is exact in i32 (u8 and
/// i8 inputs; an i32 input has zero point 0), then one float product.
template <typename T>
__attribute__((always_inline)) inline float dequantizeOne(T X, float S,
                                                          int32_t Z) {
  return static_cast<float>(static_cast<int32_t>(X) - Z) * S;
}

template <typename T>
__attribute__((always_inline)) inline void
dequantizeRun(const T *__restrict X, float *__restrict Y, int64_t N, float S,
              int32_t Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = dequantizeOne(X[I], S, Z);
}

template <typename T>
__attribute__((always_inline)) inline void
dequantizeRunEach(const T *__restrict X, float *__restrict Y, int64_t N,
                  const float *S, const int32_t *Z) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = dequantizeOne(X[I], S[I], Z[I]);
}

NNG_VECTOR_CLONES
void dequantizeU8(const uint8_t *X, float *Y, int64_t N, float S, int32_t Z) {
  dequantizeRun(X, Y, N, S, Z);
}
NNG_VECTOR_CLONES
void dequantizeI8(const int8_t *X, float *Y, int64_t N, float S, int32_t Z) {
  dequantizeRun(X, Y, N, S, Z);
}
NNG_VECTOR_CLONES
void dequantizeI32(const int32_t *X, float *Y, int64_t N, float S, int32_t Z) {
  dequantizeRun(X, Y, N, S, Z);
}
NNG_VECTOR_CLONES
void dequantizeU8Each(const uint8_t *X, float *Y, int64_t N, const float *S,
                      const int32_t *Z) {
  dequantizeRunEach(X, Y, N, S, Z);
}
NNG_VECTOR_CLONES
void dequantizeI8Each(const int8_t *X, float *Y, int64_t N, const float *S,
                      const int32_t *Z) {
  dequantizeRunEach(X, Y, N, S, Z);
}
NNG_VECTOR_CLONES
void dequantizeI32Each(const int32_t *X, float *Y, int64_t N, const float *S,
                       const int32_t *Z) {
  dequantizeRunEach(X, Y, N, S, Z);
}

/// Runs a loop over the [Outer, Channels, Inner] geometry G in parallel:
/// Uniform(Offset, Count, K) over runs that share the parameters of
/// channel K, or Each(Offset, Count, S, Z) over runs of one [Channels,
/// Inner] block with the per-element parameters S and Z.
template <typename ZT, typename UniformFn, typename EachFn>
void forEachRun(const QuantGeometry &G, UniformFn Uniform, EachFn Each) {
  int64_t Total = G.Outer * G.Channels * G.Inner;
  if (G.Channels == 1) {
    parallelFor(0, Total, ElementGrain,
                [&](int64_t B, int64_t E) { Uniform(B, E - B, size_t(0)); });
    return;
  }
  if (G.Inner >= ShortRun) {
    int64_t Rows = G.Outer * G.Channels;
    parallelFor(0, Rows, std::max<int64_t>(1, ElementGrain / G.Inner),
                [&](int64_t B, int64_t E) {
                  for (int64_t R = B; R < E; ++R)
                    Uniform(R * G.Inner, G.Inner,
                            static_cast<size_t>(R % G.Channels));
                });
    return;
  }
  int64_t Block = G.Channels * G.Inner;
  std::vector<float> S(Block);
  std::vector<ZT> Z(Block);
  for (int64_t I = 0; I < Block; ++I) {
    S[I] = G.Scale[I / G.Inner];
    Z[I] = static_cast<ZT>(G.ZeroPoint[I / G.Inner]);
  }
  parallelFor(0, G.Outer, std::max<int64_t>(1, ElementGrain / Block),
              [&](int64_t B, int64_t E) {
                for (int64_t O = B; O < E; ++O)
                  Each(O * Block, Block, S.data(), Z.data());
              });
}

} // namespace

std::optional<QuantGeometry> quantGeometry(const Tensor &Scale,
                                           const Tensor *ZeroPoint,
                                           const Shape &XS, int64_t Axis) {
  if (!Scale.defined() || Scale.dtype() != DType::F32 || Scale.rank() > 1 ||
      Scale.numel() == 0)
    return std::nullopt;
  if (ZeroPoint && ZeroPoint->defined() && ZeroPoint->shape() != Scale.shape())
    return std::nullopt;
  QuantGeometry G;
  for (double V : Scale.toDoubleVector()) {
    if (!(V > 0) && !(V < 0))
      return std::nullopt; // 0 or NaN: the reference reports it.
    G.Scale.push_back(static_cast<float>(V));
  }
  if (ZeroPoint && ZeroPoint->defined())
    for (int64_t Z : ZeroPoint->toIntVector())
      G.ZeroPoint.push_back(static_cast<int32_t>(Z));
  else
    G.ZeroPoint.assign(G.Scale.size(), 0);
  int64_t R = static_cast<int64_t>(XS.rank());
  G.Inner = XS.numel();
  if (Scale.rank() == 1 && !(Scale.numel() == 1 && R == 0)) {
    if (Axis < -R || Axis >= R)
      return std::nullopt;
    if (Axis < 0)
      Axis += R;
    int64_t Channels = XS[Axis];
    if (Scale.numel() == Channels && Channels > 1) {
      G.Channels = Channels;
      G.Outer = 1;
      G.Inner = 1;
      for (int64_t D = 0; D < R; ++D)
        (D < Axis ? G.Outer : G.Inner) *= D == Axis ? 1 : XS[D];
    } else if (Scale.numel() != 1) {
      return std::nullopt;
    }
  }
  G.Scale.resize(G.Channels);
  G.ZeroPoint.resize(G.Channels);
  return G;
}

void quantizeFloats(const float *X, void *Y, DType Out,
                    const QuantGeometry &G) {
  if (Out == DType::U8) {
    auto *P = static_cast<uint8_t *>(Y);
    forEachRun<float>(
        G,
        [&](int64_t Off, int64_t N, size_t K) {
          quantizeU8(X + Off, P + Off, N, G.Scale[K],
                     static_cast<float>(G.ZeroPoint[K]));
        },
        [&](int64_t Off, int64_t N, const float *S, const float *Z) {
          quantizeU8Each(X + Off, P + Off, N, S, Z);
        });
    return;
  }
  auto *P = static_cast<int8_t *>(Y);
  forEachRun<float>(
      G,
      [&](int64_t Off, int64_t N, size_t K) {
        quantizeI8(X + Off, P + Off, N, G.Scale[K],
                   static_cast<float>(G.ZeroPoint[K]));
      },
      [&](int64_t Off, int64_t N, const float *S, const float *Z) {
        quantizeI8Each(X + Off, P + Off, N, S, Z);
      });
}

void dequantizeToFloats(const void *X, DType In, float *Y,
                        const QuantGeometry &G) {
  auto Run = [&](const auto *P, auto Uniform, auto Each) {
    forEachRun<int32_t>(
        G,
        [&](int64_t Off, int64_t N, size_t K) {
          Uniform(P + Off, Y + Off, N, G.Scale[K], G.ZeroPoint[K]);
        },
        [&](int64_t Off, int64_t N, const float *S, const int32_t *Z) {
          Each(P + Off, Y + Off, N, S, Z);
        });
  };
  switch (In) {
  case DType::U8:
    Run(static_cast<const uint8_t *>(X), dequantizeU8, dequantizeU8Each);
    break;
  case DType::I8:
    Run(static_cast<const int8_t *>(X), dequantizeI8, dequantizeI8Each);
    break;
  default:
    Run(static_cast<const int32_t *>(X), dequantizeI32, dequantizeI32Each);
    break;
  }
}

// --- Node kernels
// --------------------------------------------------------------

bool runQuantizeLinear(reference::KernelContext &C) {
  const Tensor &X = C.in(0);
  DType Out = C.hasInput(2) ? C.in(2).dtype() : DType::U8;
  if (!isF32(X) || !C.hasInput(1) || (Out != DType::U8 && Out != DType::I8))
    return false; // i32 inputs, bad dtypes: the reference kernel.
  std::optional<QuantGeometry> G =
      quantGeometry(C.in(1), C.hasInput(2) ? &C.in(2) : nullptr, X.shape(),
                    C.attrInt("axis"));
  if (!G)
    return false;
  Tensor XC = dense(X);
  Tensor &Y = C.allocOutput(0, X.shape(), Out);
  quantizeFloats(static_cast<const float *>(XC.rawData()), Y.rawData(), Out,
                 *G);
  return true;
}

bool runDequantizeLinear(reference::KernelContext &C) {
  const Tensor &X = C.in(0);
  DType In = X.defined() ? X.dtype() : DType::F32;
  if ((In != DType::U8 && In != DType::I8 && In != DType::I32) ||
      !C.hasInput(1) || (C.hasInput(2) && C.in(2).dtype() != In))
    return false;
  std::optional<QuantGeometry> G =
      quantGeometry(C.in(1), C.hasInput(2) ? &C.in(2) : nullptr, X.shape(),
                    C.attrInt("axis"));
  if (!G)
    return false;
  if (In == DType::I32)
    for (int32_t Z : G->ZeroPoint)
      if (Z != 0)
        return false;
  Tensor XC = dense(X);
  Tensor &Y = C.allocOutput(0, X.shape(), DType::F32);
  dequantizeToFloats(XC.rawData(), In, static_cast<float *>(Y.rawData()), *G);
  return true;
}

} // namespace nng::backends::cpu
