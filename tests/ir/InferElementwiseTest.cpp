//===- InferElementwiseTest.cpp - Elementwise shape inference tests ------===//
//
// Unary ops, numpy broadcasting with static/symbolic/unknown dims, scalars
// and zero-size dims, comparisons and logical ops, Where, Pow and casts,
// including the error messages for dtype and shape mismatches.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferElementwise : public IrTest {};

TEST_F(InferElementwise, UnaryKeepsType) {
  EXPECT_EQ(infer(OpKind::Relu, {in("f32[N,3,224,224]")}), "f32[N,3,224,224]");
  EXPECT_EQ(infer(OpKind::Exp, {in("f64[]")}), "f64[]");
  EXPECT_EQ(infer(OpKind::Neg, {in("i64[0,4]")}), "i64[0,4]");
  EXPECT_EQ(infer(OpKind::Sigmoid, {in("f16[*]")}), "f16[*]");
  EXPECT_EQ(infer(OpKind::Identity, {in("bool[?,2]")}), "bool[?,2]");
  EXPECT_EQ(
      infer(OpKind::Gelu, {in("f32[B,T,C]")}, attrs({{"approximate", "tanh"}})),
      "f32[B,T,C]");
}

TEST_F(InferElementwise, UnaryChecksGeluMode) {
  std::string E = inferError(OpKind::Gelu, {in("f32[2]")},
                             attrs({{"approximate", "fast"}}));
  EXPECT_NE(E.find("'fast'"), std::string::npos) << E;
}

TEST_F(InferElementwise, SoftmaxAxisChecked) {
  EXPECT_EQ(infer(OpKind::Softmax, {in("f32[N,10]")}, attrs({{"axis", -2}})),
            "f32[N,10]");
  std::string E =
      inferError(OpKind::Softmax, {in("f32[N,10]")}, attrs({{"axis", 2}}));
  EXPECT_NE(E.find("axis 2 is out of range for rank 2"), std::string::npos)
      << E;
  EXPECT_NE(E.find("Softmax"), std::string::npos) << E;
}

TEST_F(InferElementwise, ClipBoundsMustMatchDType) {
  EXPECT_EQ(infer(OpKind::Clip, {in("f32[3]"), scalar(0.0f), scalar(6.0f)}),
            "f32[3]");
  EXPECT_EQ(infer(OpKind::Clip, {in("f32[3]"), nullptr, scalar(6.0f)}),
            "f32[3]");
  std::string E = inferError(OpKind::Clip, {in("f32[3]"), scalar<int64_t>(0)});
  EXPECT_NE(E.find("f32[3]"), std::string::npos) << E;
  EXPECT_NE(E.find("i64[]"), std::string::npos) << E;
}

TEST_F(InferElementwise, BroadcastStatic) {
  EXPECT_EQ(infer(OpKind::Add, {in("f32[2,3,4]"), in("f32[4]")}), "f32[2,3,4]");
  EXPECT_EQ(infer(OpKind::Mul, {in("f32[2,1,4]"), in("f32[3,1]")}),
            "f32[2,3,4]");
  EXPECT_EQ(infer(OpKind::Sub, {in("f32[]"), in("f32[5,6]")}), "f32[5,6]");
  EXPECT_EQ(infer(OpKind::Div, {in("f32[]"), in("f32[]")}), "f32[]");
}

TEST_F(InferElementwise, BroadcastZeroSize) {
  EXPECT_EQ(infer(OpKind::Add, {in("f32[0,3]"), in("f32[1,3]")}), "f32[0,3]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[0]"), in("f32[]")}), "f32[0]");
  std::string E = inferError(OpKind::Add, {in("f32[0]"), in("f32[2]")});
  EXPECT_NE(E.find("f32[0]"), std::string::npos) << E;
}

TEST_F(InferElementwise, BroadcastSymbolic) {
  // N with 1 is N, N with N is N, N with 5 is 5 (checked at run time).
  EXPECT_EQ(infer(OpKind::Add, {in("f32[N,3]"), in("f32[1,3]")}), "f32[N,3]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[N,3]"), in("f32[N,1]")}), "f32[N,3]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[N,3]"), in("f32[5,3]")}), "f32[5,3]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[3]"), in("f32[N,1]")}), "f32[N,3]");
  // Two different symbols, or a symbol and an unknown, give unknown.
  EXPECT_EQ(infer(OpKind::Add, {in("f32[N]"), in("f32[M]")}), "f32[?]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[N]"), in("f32[?]")}), "f32[?]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[?]"), in("f32[7]")}), "f32[7]");
  EXPECT_EQ(infer(OpKind::Add, {in("f32[?]"), in("f32[1]")}), "f32[?]");
}

TEST_F(InferElementwise, BroadcastUnknownRank) {
  EXPECT_EQ(infer(OpKind::Add, {in("f32[*]"), in("f32[3]")}), "f32[*]");
  EXPECT_EQ(infer(OpKind::Mul, {in("f32[2]"), in("f32[*]")}), "f32[*]");
}

TEST_F(InferElementwise, BroadcastMismatchNamesBothShapes) {
  std::string E = inferError(OpKind::Add, {in("f32[2,3]"), in("f32[4]")});
  EXPECT_NE(E.find("f32[2,3]"), std::string::npos) << E;
  EXPECT_NE(E.find("f32[4]"), std::string::npos) << E;
  EXPECT_NE(E.find("Add"), std::string::npos) << E;
}

TEST_F(InferElementwise, BroadcastDTypeMismatchNamesBothTypes) {
  std::string E = inferError(OpKind::Add, {in("f32[2]"), in("i64[2]")});
  EXPECT_NE(E.find("f32[2]"), std::string::npos) << E;
  EXPECT_NE(E.find("i64[2]"), std::string::npos) << E;
  EXPECT_NE(E.find("same dtype"), std::string::npos) << E;
  // The node is named.
  EXPECT_NE(E.find("node %y"), std::string::npos) << E;
}

TEST_F(InferElementwise, PReluKeepsXShape) {
  EXPECT_EQ(infer(OpKind::PRelu, {in("f32[N,3,8,8]"), in("f32[3,1,1]")}),
            "f32[N,3,8,8]");
  std::string E = inferError(OpKind::PRelu, {in("f32[3]"), in("f32[2,3]")});
  EXPECT_NE(E.find("must broadcast to X"), std::string::npos) << E;
}

TEST_F(InferElementwise, ModAndBitShiftChecks) {
  EXPECT_EQ(infer(OpKind::Mod, {in("i32[4]"), in("i32[]")}), "i32[4]");
  EXPECT_EQ(
      infer(OpKind::Mod, {in("f32[4]"), in("f32[4]")}, attrs({{"fmod", 1}})),
      "f32[4]");
  EXPECT_NE(
      inferError(OpKind::Mod, {in("f32[4]"), in("f32[4]")}).find("fmod=1"),
      std::string::npos);
  EXPECT_EQ(infer(OpKind::BitShift, {in("u8[4]"), in("u8[1]")},
                  attrs({{"direction", "LEFT"}})),
            "u8[4]");
  EXPECT_NE(inferError(OpKind::BitShift, {in("u8[4]"), in("u8[1]")},
                       attrs({{"direction", "UP"}}))
                .find("'UP'"),
            std::string::npos);
  EXPECT_NE(inferError(OpKind::BitShift, {in("u8[4]"), in("u8[1]")})
                .find("'direction' is required"),
            std::string::npos);
}

TEST_F(InferElementwise, Variadic) {
  EXPECT_EQ(infer(OpKind::Sum, {in("f32[3]")}), "f32[3]");
  EXPECT_EQ(infer(OpKind::Max, {in("f32[2,1]"), in("f32[3]"), in("f32[]")}),
            "f32[2,3]");
  EXPECT_EQ(
      infer(OpKind::Mean, {in("f32[N,1]"), in("f32[1,4]"), in("f32[N,4]")}),
      "f32[N,4]");
  std::string E =
      inferError(OpKind::Min, {in("f32[2]"), in("f32[2]"), in("f64[2]")});
  EXPECT_NE(E.find("data_0[2]"), std::string::npos) << E;
  EXPECT_NE(E.find("f64[2]"), std::string::npos) << E;
}

TEST_F(InferElementwise, CompareGivesBool) {
  EXPECT_EQ(infer(OpKind::Equal, {in("i64[N,1]"), in("i64[4]")}), "bool[N,4]");
  EXPECT_EQ(infer(OpKind::Less, {in("f32[]"), in("f32[]")}), "bool[]");
  EXPECT_NE(
      inferError(OpKind::Greater, {in("f32[2]"), in("i32[2]")}).find("i32[2]"),
      std::string::npos);
}

TEST_F(InferElementwise, LogicalOps) {
  EXPECT_EQ(infer(OpKind::And, {in("bool[2,3]"), in("bool[3]")}), "bool[2,3]");
  EXPECT_EQ(infer(OpKind::Not, {in("bool[N]")}), "bool[N]");
  std::string E = inferError(OpKind::Or, {in("bool[2]"), in("f32[2]")});
  EXPECT_NE(E.find("must be bool"), std::string::npos) << E;
  EXPECT_NE(inferError(OpKind::Not, {in("i64[2]")}).find("i64[2]"),
            std::string::npos);
}

TEST_F(InferElementwise, ToBool) {
  EXPECT_EQ(infer(OpKind::IsNaN, {in("f32[N,2]")}), "bool[N,2]");
  EXPECT_EQ(infer(OpKind::IsInf, {in("f64[]")}), "bool[]");
  EXPECT_NE(inferError(OpKind::IsNaN, {in("i32[2]")}).find("floating-point"),
            std::string::npos);
}

TEST_F(InferElementwise, Where) {
  EXPECT_EQ(infer(OpKind::Where, {in("bool[N,1]"), in("f32[4]"), in("f32[]")}),
            "f32[N,4]");
  EXPECT_EQ(infer(OpKind::Where, {in("bool[2,3]"), in("i64[]"), in("i64[]")}),
            "i64[2,3]");
  EXPECT_NE(
      inferError(OpKind::Where, {in("f32[2]"), in("f32[2]"), in("f32[2]")})
          .find("condition"),
      std::string::npos);
  std::string E =
      inferError(OpKind::Where, {in("bool[2]"), in("f32[2]"), in("f16[2]")});
  EXPECT_NE(E.find("f16[2]"), std::string::npos) << E;
  EXPECT_NE(
      inferError(OpKind::Where, {in("bool[3]"), in("f32[2]"), in("f32[2]")})
          .find("bool[3]"),
      std::string::npos);
}

TEST_F(InferElementwise, PowAllowsMixedExponent) {
  EXPECT_EQ(infer(OpKind::Pow, {in("f32[N,3]"), in("i64[]")}), "f32[N,3]");
  EXPECT_EQ(infer(OpKind::Pow, {in("i32[3]"), in("f32[2,1]")}), "i32[2,3]");
  EXPECT_NE(
      inferError(OpKind::Pow, {in("bool[3]"), in("f32[]")}).find("numeric"),
      std::string::npos);
}

TEST_F(InferElementwise, Cast) {
  EXPECT_EQ(infer(OpKind::Cast, {in("f32[N,3]")}, attrs({{"to", 7}})),
            "i64[N,3]");
  EXPECT_EQ(infer(OpKind::Cast, {in("i64[]")}, attrs({{"to", 9}})), "bool[]");
  EXPECT_EQ(infer(OpKind::Cast, {in("i64[*]")}, attrs({{"to", 10}})), "f16[*]");
  EXPECT_EQ(infer(OpKind::Cast, {in("f32[2]")}, attrs({{"to", 8}})), "str[2]");
  EXPECT_EQ(infer(OpKind::Cast, {in("str[2]")}, attrs({{"to", 1}})), "f32[2]");
  std::string E = inferError(OpKind::Cast, {in("f32[2]")}, attrs({{"to", 14}}));
  EXPECT_NE(E.find("to = 14"), std::string::npos) << E;
  EXPECT_NE(inferError(OpKind::Cast, {in("f32[2]")}).find("'to'"),
            std::string::npos);
}

TEST_F(InferElementwise, CastLike) {
  EXPECT_EQ(infer(OpKind::CastLike, {in("f32[N,3]"), in("f16[]")}), "f16[N,3]");
}

TEST_F(InferElementwise, RunTimeInferenceIsExact) {
  auto R = inferConcrete(OpKind::Add, {zeros({4, 1}), zeros({3})});
  EXPECT_EQ(R.at(0), "f32[4,3]");
  R = inferConcrete(OpKind::Where,
                    {zeros({2, 1}, DType::Bool), zeros({}), zeros({5})});
  EXPECT_EQ(R.at(0), "f32[2,5]");
  EXPECT_THROW(inferConcrete(OpKind::Add, {zeros({4}), zeros({3})}), Error);
}

} // namespace
