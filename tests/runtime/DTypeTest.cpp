//===- DTypeTest.cpp - Element types and 16-bit float conversion ---------===//

#include "nngraph/runtime/DType.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace nng;

TEST(DType, NamesRoundTrip) {
  for (int I = 0; I < NumDTypes; ++I) {
    DType T = static_cast<DType>(I);
    auto P = parseDType(dtypeName(T));
    ASSERT_TRUE(P.has_value()) << dtypeName(T);
    EXPECT_EQ(*P, T);
  }
  EXPECT_FALSE(parseDType("f33").has_value());
}

TEST(DType, Properties) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_TRUE(isFloatingPoint(DType::F16));
  EXPECT_FALSE(isFloatingPoint(DType::I8));
  EXPECT_TRUE(isIntegral(DType::U8));
  EXPECT_FALSE(isIntegral(DType::Bool));
  EXPECT_TRUE(isSigned(DType::I16));
  EXPECT_FALSE(isSigned(DType::U32));
  EXPECT_EQ(dtypeOf<float>(), DType::F32);
  EXPECT_EQ(dtypeOf<Half>(), DType::F16);
}

TEST(DType, OnnxNumbers) {
  EXPECT_EQ(dtypeToOnnx(DType::F32), 1);
  EXPECT_EQ(dtypeToOnnx(DType::I64), 7);
  EXPECT_EQ(dtypeToOnnx(DType::BF16), 16);
  EXPECT_EQ(*dtypeFromOnnx(10), DType::F16);
  EXPECT_EQ(*dtypeFromOnnx(8), DType::String);
  EXPECT_EQ(dtypeToOnnx(DType::String), 8);
  EXPECT_FALSE(dtypeFromOnnx(14).has_value()); // complex64
}

TEST(Half, ExactValues) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(floatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalfBits(5.9604644775390625e-08f), 0x0001); // 2^-24
  EXPECT_EQ(floatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
  EXPECT_EQ(halfBitsToFloat(0x3555), 0.333251953125f);
}

TEST(Half, RoundTripsEveryPattern) {
  for (uint32_t B = 0; B < 0x10000; ++B) {
    float F = halfBitsToFloat(static_cast<uint16_t>(B));
    if (std::isnan(F))
      continue;
    EXPECT_EQ(floatToHalfBits(F), B) << std::hex << B;
  }
}

TEST(Half, TiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: rounds to even (1).
  EXPECT_EQ(floatToHalfBits(1.0f + 0.00048828125f), 0x3c00);
  // 1 + 3*2^-11 lies halfway between 1+2^-10 and 1+2^-9: rounds to 1+2^-9.
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * 0.00048828125f), 0x3c02);
}

TEST(BFloat16, RoundTrip) {
  EXPECT_EQ(BFloat16(1.0f).Bits, 0x3f80);
  EXPECT_EQ(float(BFloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(float(BFloat16(1.00390625f)), 1.0f); // tie to even
  EXPECT_TRUE(std::isnan(float(BFloat16(NAN))));
}
