//===- DTypeNamesTest.cpp - The names other formats give dtypes ----------===//
//
// Spot checks of each column of DTypes.def's names section, the reverse
// lookups, and consistency with the dtypes' sizes (a .npy descr ends in the
// item size).
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/DTypeNames.h"

#include <gtest/gtest.h>
#include <string>

using namespace nng;

namespace {
std::string str(const char *S) { return S ? S : "(null)"; }
} // namespace

TEST(DTypeNames, Columns) {
  EXPECT_EQ(str(torchName(DType::F32)), "float32");
  EXPECT_EQ(str(torchName(DType::Bool)), "bool");
  EXPECT_EQ(torchName(DType::String), nullptr);
  EXPECT_EQ(str(torchStorageName(DType::I64)), "LongStorage");
  EXPECT_EQ(str(torchStorageName(DType::BF16)), "BFloat16Storage");
  EXPECT_EQ(torchStorageName(DType::U16), nullptr);
  EXPECT_EQ(str(torchTensorTypeName(DType::U8)), "ByteTensor");
  EXPECT_EQ(torchTensorTypeName(DType::U64), nullptr);
  EXPECT_EQ(str(numpyDescr(DType::F64)), "<f8");
  EXPECT_EQ(str(numpyDescr(DType::Bool)), "|b1");
  EXPECT_EQ(numpyDescr(DType::BF16), nullptr);
  EXPECT_EQ(str(numpyName(DType::Bool)), "bool_");
  EXPECT_EQ(numpyName(DType::BF16), nullptr);
  EXPECT_EQ(str(safetensorsName(DType::Bool)), "BOOL");
  EXPECT_EQ(str(safetensorsName(DType::BF16)), "BF16");
  EXPECT_EQ(safetensorsName(DType::String), nullptr);
}

TEST(DTypeNames, ReverseLookupsRoundTrip) {
  for (int I = 0; I < NumDTypes; ++I) {
    DType T = static_cast<DType>(I);
    if (const char *N = torchStorageName(T))
      EXPECT_EQ(dtypeFromTorchStorageName(N), T) << N;
    if (const char *N = safetensorsName(T))
      EXPECT_EQ(dtypeFromSafetensorsName(N), T) << N;
    if (const char *D = numpyDescr(T))
      EXPECT_EQ(std::string(D + 2), std::to_string(dtypeSize(T))) << D;
  }
  EXPECT_FALSE(dtypeFromTorchStorageName("ComplexFloatStorage"));
  EXPECT_FALSE(dtypeFromSafetensorsName("F8_E4M3"));
  EXPECT_FALSE(dtypeFromSafetensorsName(""));
}
