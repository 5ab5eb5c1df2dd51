//===- TypeTest.cpp - Tests for Dim, TensorType and mergeTypes -----------===//
//
// Parsing and printing of types (static, symbolic, unknown dims, scalars,
// unknown rank), malformed text, static-shape queries, and mergeTypes'
// rules (static beats symbol beats unknown; contradictions give nullopt).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Type.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::ir;

namespace {

TEST(Type, Dims) {
  Dim S(3), Y = Dim::symbol("N"), U;
  EXPECT_TRUE(S.isStatic() && !S.isSymbolic() && !S.isUnknown());
  EXPECT_TRUE(Y.isSymbolic() && !Y.isStatic() && !Y.isUnknown());
  EXPECT_TRUE(U.isUnknown() && !U.isStatic() && !U.isSymbolic());
  EXPECT_EQ(S.value(), 3);
  EXPECT_EQ(Y.symbol(), "N");
  EXPECT_EQ(S.toString(), "3");
  EXPECT_EQ(Y.toString(), "N");
  EXPECT_EQ(U.toString(), "?");
  EXPECT_EQ(Dim(0).toString(), "0");
  EXPECT_EQ(Dim::unknown(), U);
  EXPECT_NE(Dim::symbol("N"), Dim::symbol("M"));
}

TEST(Type, ParsePrintRoundTrip) {
  for (const char *Text :
       {"f32[N,3,224,224]", "i64[]", "f32[?,10]", "f32[*]", "bool[0]",
        "bf16[batch_size,seq.len]", "u8[1,2,3,4,5,6,7]", "f16[_x,?,N2]",
        "f64[9223372036854775807]"}) {
    auto T = TensorType::parse(Text);
    ASSERT_TRUE(T.has_value()) << Text;
    EXPECT_EQ(T->toString(), Text);
  }
  auto T = TensorType::parse("i32[N,?,5]");
  ASSERT_TRUE(T);
  EXPECT_EQ(T->dtype(), DType::I32);
  EXPECT_EQ(T->rank(), 3);
  EXPECT_TRUE(T->dim(0).isSymbolic());
  EXPECT_TRUE(T->dim(1).isUnknown());
  EXPECT_EQ(T->dim(2).value(), 5);
  EXPECT_FALSE(TensorType::parse("f32[*]")->hasRank());
  EXPECT_EQ(TensorType::parse("f32[]")->rank(), 0);
}

TEST(Type, ParseRejectsMalformedText) {
  for (const char *Text :
       {"f32", "f32[", "x32[2]", "f32[2,]", "f32[,2]", "f32[2x]", "f32[-1]",
        "f32[2]]", "f32[N-1]", "[2]", "f32[1.5]", "f32[2 ,3]", "f32[**]",
        "f32[99999999999999999999]"})
    EXPECT_FALSE(TensorType::parse(Text).has_value()) << Text;
}

TEST(Type, StaticQueries) {
  TensorType A(DType::F32, Shape{2, 3, 4});
  EXPECT_EQ(A.toString(), "f32[2,3,4]");
  EXPECT_TRUE(A.isStatic());
  EXPECT_EQ(*A.staticShape(), (Shape{2, 3, 4}));
  EXPECT_EQ(*A.staticNumel(), 24);
  TensorType S(DType::I64, Shape{});
  EXPECT_TRUE(S.isStatic());
  EXPECT_EQ(*S.staticNumel(), 1);
  TensorType Z(DType::F32, Shape{0, 5});
  EXPECT_EQ(*Z.staticNumel(), 0);
  TensorType N = *TensorType::parse("f32[N,3]");
  EXPECT_FALSE(N.isStatic());
  EXPECT_FALSE(N.staticShape().has_value());
  EXPECT_FALSE(N.staticNumel().has_value());
  TensorType R(DType::F32);
  EXPECT_FALSE(R.isStatic());
  EXPECT_FALSE(R.staticShape().has_value());
  TensorType D;
  EXPECT_EQ(D.toString(), "f32[*]");
}

std::string merge(const char *A, const char *B) {
  auto M = mergeTypes(*TensorType::parse(A), *TensorType::parse(B));
  return M ? M->toString() : "none";
}

TEST(Type, MergeTypes) {
  EXPECT_EQ(merge("f32[N,3]", "f32[8,?]"), "f32[8,3]");
  EXPECT_EQ(merge("f32[?,?]", "f32[N,M]"), "f32[N,M]");
  EXPECT_EQ(merge("f32[N,?]", "f32[?,M]"), "f32[N,M]");
  EXPECT_EQ(merge("f32[N]", "f32[M]"), "f32[N]");
  EXPECT_EQ(merge("f32[*]", "f32[2,N]"), "f32[2,N]");
  EXPECT_EQ(merge("f32[2,N]", "f32[*]"), "f32[2,N]");
  EXPECT_EQ(merge("i64[]", "i64[]"), "i64[]");
  EXPECT_EQ(merge("f32[2]", "f32[3]"), "none");
  EXPECT_EQ(merge("f32[2]", "f32[2,1]"), "none");
  EXPECT_EQ(merge("f32[2]", "f16[2]"), "none");
  EXPECT_EQ(merge("f32[*]", "i64[*]"), "none");
  EXPECT_EQ(merge("f32[]", "f32[1]"), "none");
}

} // namespace
