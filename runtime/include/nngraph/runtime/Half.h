//===- Half.h - 16-bit floating-point storage types ------------*- C++ -*-===//
//
// IEEE half (f16) and bfloat16 as storage types: they hold the bits and
// convert to and from float with round-to-nearest-even. Arithmetic happens in
// float; these types only move data.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>

namespace nng {

/// Converts an IEEE binary16 bit pattern to float (exact).
float halfBitsToFloat(uint16_t Bits);
/// Converts a float to the nearest IEEE binary16 bit pattern (ties to even).
uint16_t floatToHalfBits(float F);

/// IEEE 754 binary16 storage type.
struct Half {
  uint16_t Bits = 0;
  Half() = default;
  Half(float F) : Bits(floatToHalfBits(F)) {}
  operator float() const { return halfBitsToFloat(Bits); }
  static Half fromBits(uint16_t B) {
    Half H;
    H.Bits = B;
    return H;
  }
};

/// bfloat16 storage type: the upper half of a float, rounded to nearest even.
struct BFloat16 {
  uint16_t Bits = 0;
  BFloat16() = default;
  BFloat16(float F) {
    uint32_t U;
    std::memcpy(&U, &F, 4);
    if ((U & 0x7fffffffu) > 0x7f800000u) { // NaN: keep it quiet, keep sign.
      Bits = static_cast<uint16_t>((U >> 16) | 0x40);
      return;
    }
    uint32_t Rounding = 0x7fffu + ((U >> 16) & 1u);
    Bits = static_cast<uint16_t>((U + Rounding) >> 16);
  }
  operator float() const {
    uint32_t U = static_cast<uint32_t>(Bits) << 16;
    float F;
    std::memcpy(&F, &U, 4);
    return F;
  }
  static BFloat16 fromBits(uint16_t B) {
    BFloat16 H;
    H.Bits = B;
    return H;
  }
};

} // namespace nng
