//===- InferConstantTest.cpp - Inference tests for Shape/Constant/Range --===//
//
// Shape (start/end), Size, ConstantOfShape, Constant (every value
// attribute) and Range (integer and float counts, empty ranges), and a
// graph-level inferTypes run where a Constant feeds a Reshape.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferConstant : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
};

TEST_F(InferConstant, Shape) {
  Value *X = in("f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::Shape, {X}), "i64[3]");
  EXPECT_EQ(infer(OpKind::Shape, {X}, attrs({{"start", 1}})), "i64[2]");
  EXPECT_EQ(infer(OpKind::Shape, {X}, attrs({{"start", -1}})), "i64[1]");
  EXPECT_EQ(infer(OpKind::Shape, {X}, attrs({{"end", -1}})), "i64[2]");
  EXPECT_EQ(infer(OpKind::Shape, {X}, attrs({{"start", 2}, {"end", 1}})),
            "i64[0]");
  EXPECT_EQ(infer(OpKind::Shape, {X}, attrs({{"start", -10}, {"end", 10}})),
            "i64[3]");
  EXPECT_EQ(infer(OpKind::Shape, {in("f32[]")}), "i64[0]");
  EXPECT_EQ(infer(OpKind::Shape, {in("f32[*]")}), "i64[?]");
}

TEST_F(InferConstant, Size) {
  EXPECT_EQ(infer(OpKind::Size, {in("f32[N,3]")}), "i64[]");
  EXPECT_EQ(infer(OpKind::Size, {in("bool[*]")}), "i64[]");
}

TEST_F(InferConstant, ConstantOfShape) {
  EXPECT_EQ(infer(OpKind::ConstantOfShape, {ints({2, 3})}), "f32[2,3]");
  EXPECT_EQ(infer(OpKind::ConstantOfShape, {ints({2, 0})},
                  attrs({{"value",
                          nng::rt::Tensor::fromVector<int64_t>({7}, Shape{1})}})),
            "i64[2,0]");
  EXPECT_EQ(infer(OpKind::ConstantOfShape, {ints({})}), "f32[]");
  EXPECT_EQ(infer(OpKind::ConstantOfShape, {in("i64[2]")}), "f32[?,?]");
  EXPECT_EQ(infer(OpKind::ConstantOfShape, {in("i64[?]")}), "f32[*]");
  EXPECT_TRUE(has(inferError(OpKind::ConstantOfShape, {ints({2, -1})}),
                  "negative extent -1"));
  EXPECT_TRUE(has(inferError(OpKind::ConstantOfShape, {ints({2})},
                             attrs({{"value", nng::rt::Tensor::fromVector<float>(
                                                  {1, 2}, Shape{2})}})),
                  "one element"));
  EXPECT_TRUE(
      has(inferError(OpKind::ConstantOfShape, {in("i32[2]")}), "must be i64"));
}

TEST_F(InferConstant, Constant) {
  EXPECT_EQ(infer(OpKind::Constant, {},
                  attrs({{"value", nng::rt::Tensor::fromVector<float>(
                                       {1, 2, 3, 4}, Shape{2, 2})}})),
            "f32[2,2]");
  EXPECT_EQ(infer(OpKind::Constant, {},
                  attrs({{"value", nng::rt::Tensor::scalar<int64_t>(3)}})),
            "i64[]");
  EXPECT_EQ(infer(OpKind::Constant, {}, attrs({{"value_float", 1.5f}})),
            "f32[]");
  EXPECT_EQ(infer(OpKind::Constant, {},
                  attrs({{"value_floats", std::vector<float>{1, 2, 3}}})),
            "f32[3]");
  EXPECT_EQ(infer(OpKind::Constant, {}, attrs({{"value_int", 4}})), "i64[]");
  EXPECT_EQ(infer(OpKind::Constant, {}, attrs({{"value_ints", Ints{4, 5}}})),
            "i64[2]");
  EXPECT_EQ(infer(OpKind::Constant, {}, attrs({{"value_ints", Ints{}}})),
            "i64[0]");
  EXPECT_TRUE(has(inferError(OpKind::Constant, {}), "exactly one"));
  EXPECT_TRUE(has(inferError(OpKind::Constant, {},
                             attrs({{"value_int", 1}, {"value_float", 1.0f}})),
                  "got 2"));
  EXPECT_EQ(infer(OpKind::Constant, {}, attrs({{"value_string", "hi"}})),
            "str[]");
  EXPECT_EQ(infer(OpKind::Constant, {},
                  attrs({{"value_strings",
                          std::vector<std::string>{"a", "b", "c"}}})),
            "str[3]");
}

TEST_F(InferConstant, Range) {
  EXPECT_EQ(infer(OpKind::Range, {scalar<int64_t>(0), scalar<int64_t>(10),
                                  scalar<int64_t>(3)}),
            "i64[4]");
  EXPECT_EQ(infer(OpKind::Range, {scalar<int64_t>(10), scalar<int64_t>(0),
                                  scalar<int64_t>(-3)}),
            "i64[4]");
  EXPECT_EQ(infer(OpKind::Range,
                  {scalar<int32_t>(5), scalar<int32_t>(0), scalar<int32_t>(1)}),
            "i32[0]");
  EXPECT_EQ(infer(OpKind::Range, {scalar(1.0f), scalar(0.0f), scalar(-0.3f)}),
            "f32[4]");
  EXPECT_EQ(infer(OpKind::Range, {scalar(0.0), scalar(1.0), scalar(0.25)}),
            "f64[4]");
  EXPECT_EQ(infer(OpKind::Range,
                  {in("i64[]"), scalar<int64_t>(3), scalar<int64_t>(1)}),
            "i64[?]");
  EXPECT_TRUE(
      has(inferError(OpKind::Range, {scalar<int64_t>(0), scalar<int64_t>(3),
                                     scalar<int64_t>(0)}),
          "delta is 0"));
  EXPECT_TRUE(has(inferError(OpKind::Range, {scalar<int64_t>(0), scalar(3.0f),
                                             scalar<int64_t>(1)}),
                  "f32[]"));
  EXPECT_TRUE(
      has(inferError(OpKind::Range, {in("i64[1]"), in("i64[]"), in("i64[]")}),
          "scalar"));
}

TEST_F(InferConstant, GraphConstantFeedsReshape) {
  // Constant -> Reshape: the shape is known statically through the Constant.
  Value *X = in("f32[N,3,4]");
  Node *C = node(
      OpKind::Constant, {},
      attrs({{"value", nng::rt::Tensor::fromVector<int64_t>({0, -1}, Shape{2})}}));
  Node *R = node(OpKind::Reshape, {X, C->output()});
  Node *S = node(OpKind::Shape, {R->output()});
  G.setOutputs({S->output()});
  inferTypes(G);
  EXPECT_EQ(C->output()->type().toString(), "i64[2]");
  EXPECT_EQ(R->output()->type().toString(), "f32[N,12]");
  EXPECT_EQ(S->output()->type().toString(), "i64[2]");
}

TEST_F(InferConstant, InferTypesMergesDeclaredTypes) {
  Value *X = in("f32[N,3]");
  Node *N = node(OpKind::Relu, {X});
  N->output()->setType(ty("f32[8,?]"));
  inferTypes(G);
  EXPECT_EQ(N->output()->type().toString(), "f32[8,3]");
  N->output()->setType(ty("f32[8,4]"));
  try {
    inferTypes(G);
    ADD_FAILURE() << "contradiction not reported";
  } catch (const Error &E) {
    std::string M = E.what();
    EXPECT_TRUE(has(M, "f32[8,4]") && has(M, "f32[N,3]")) << M;
  }
}

} // namespace
