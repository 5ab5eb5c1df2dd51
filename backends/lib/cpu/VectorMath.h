//===- VectorMath.h - Vectorizable f32 math of the own loops ---*- C++ -*-===//
//
// Inline f32 functions without calls, so loops over them vectorize, and a
// vector of 16 floats: the row kernels (LoopsRows.cpp), the attention
// kernel (LowerAttention.cpp) and the packed product (LoopsPackedGemm.cpp)
// share them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace nng::backends::cpu {

/// 16 floats as one value: GCC lowers its arithmetic to one AVX-512
/// register, two AVX2 ones or four SSE ones, in each target_clones copy.
/// The helpers taking or returning it are inlined, so the ABI GCC warns
/// about for the baseline target never applies.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float V16 __attribute__((vector_size(64)));
inline V16 load16(const float *P) {
  V16 V;
  __builtin_memcpy(&V, P, sizeof V);
  return V;
}
inline void store16(float *P, V16 V) { __builtin_memcpy(P, &V, sizeof V); }

/// exp(Xc) of a finite Xc as a polynomial P of r = Xc - n ln 2 and n =
/// round(Xc / ln 2) (exp(Xc) = P * 2^n), the parts of expFloat and
/// expNonPositive.
inline float expParts(float Xc, float &N) {
  // n by the 1.5 * 2^23 trick; r = x - n ln 2 in two parts.
  constexpr float Magic = 12582912.0f;
  N = (Xc * 1.44269504088896341f + Magic) - Magic;
  float R = Xc - N * 0.693359375f;
  R = R - N * -2.12194440e-4f;
  float P = 1.9875691500e-4f;
  P = P * R + 1.3981999507e-3f;
  P = P * R + 8.3334519073e-3f;
  P = P * R + 4.1665795894e-2f;
  P = P * R + 1.6666665459e-1f;
  P = P * R + 5.0000001201e-1f;
  return P * R * R + R + 1.0f;
}

/// 2^E for an integral E in [-126, 127], as a float's exponent bits.
inline float powerOfTwo(float E) {
  return std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(E) +
                                                    127)
                              << 23);
}

/// exp(X) in f32 without calls, so loops over it vectorize. NaN stays NaN,
/// exp(+inf) = +inf, exp(-inf) = 0.
inline float expFloat(float X) {
  constexpr float Hi = 88.7f, Lo = -86.9f;
  float Xc = X > Hi ? Hi : X;
  Xc = Xc < Lo ? Lo : Xc;
  Xc = Xc == Xc ? Xc : 0.0f; // NaN: any finite value; fixed below.
  float N;
  float P = expParts(Xc, N);
  // 2^n as 2^(n-1) * 2, so n = 128 (x near 88.7) stays finite.
  float Y = P * powerOfTwo(N - 1.0f) * 2.0f;
  Y = X > Hi ? INFINITY : Y;
  Y = X < Lo ? 0.0f : Y;
  return X == X ? Y : X;
}

/// exp(X) for X <= 0 or NaN (a softmax's score minus the row's maximum),
/// with expFloat's polynomial but fewer selects, as one vector of 16 takes
/// a third of expFloat's instructions: below -87.3 (where exp leaves the
/// normal floats) it is 0; NaN stays NaN.
inline float expNonPositive(float X) {
  constexpr float Lo = -87.3f;
  const bool In = X >= Lo; // False for NaN.
  float N;
  const float P = expParts(In ? X : Lo, N);
  const float Y = P * powerOfTwo(N); // N >= -126: a normal float.
  return In ? Y : (X < Lo ? 0.0f : X);
}

/// 1 / (1 + exp(-X)) without calls (vectorizable); NaN stays NaN.
inline float sigmoidFloat(float X) { return 1.0f / (1.0f + expFloat(-X)); }

/// tanh(X) without calls (vectorizable), within a few ulp: an odd series
/// near 0 (where 1 - e^-2|x| would cancel), else (1 - e) / (1 + e) with
/// e = exp(-2|x|). NaN stays NaN, tanh(+-inf) = +-1, tanh(-0) = -0.
inline float tanhFloat(float X) {
  float A = X < 0 ? -X : X;
  float X2 = X * X;
  float Series =
      X * (1.0f + X2 * (-1.0f / 3 + X2 * (2.0f / 15 + X2 * (-17.0f / 315))));
  float E = expFloat(-2.0f * A);
  float T = (1.0f - E) / (1.0f + E);
  T = X < 0 ? -T : T;
  return A < 0.125f ? Series : T;
}

} // namespace nng::backends::cpu
