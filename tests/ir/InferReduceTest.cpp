//===- InferReduceTest.cpp - Inference tests for reductions --------------===//
//
// ReduceSum (axes input, noop_with_empty_axes), the attribute-axes Reduce*
// ops, keepdims, negative axes, scalars, zero-size dims, unknown axes, and
// ArgMax/ArgMin.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferReduce : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
};

TEST_F(InferReduce, ReduceSumAxesInput) {
  Value *X = in("f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({1})}), "f32[N,1,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({1})}, attrs({{"keepdims", 0}})),
            "f32[N,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({-1, 0})}), "f32[1,3,1]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X}), "f32[1,1,1]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X}, attrs({{"keepdims", 0}})), "f32[]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({})}, attrs({{"keepdims", 0}})),
            "f32[]");
}

TEST_F(InferReduce, NoopWithEmptyAxes) {
  Value *X = in("f32[N,3,4]");
  auto Noop = attrs({{"noop_with_empty_axes", 1}});
  EXPECT_EQ(infer(OpKind::ReduceSum, {X}, Noop), "f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({})}, Noop), "f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, in("i64[0]")}, Noop), "f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, ints({2})}, Noop), "f32[N,3,1]");
}

TEST_F(InferReduce, UnknownAxes) {
  Value *X = in("f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceSum, {X, in("i64[1]")}), "f32[?,?,?]");
  EXPECT_EQ(
      infer(OpKind::ReduceSum, {X, in("i64[1]")}, attrs({{"keepdims", 0}})),
      "f32[?,?]");
  EXPECT_EQ(
      infer(OpKind::ReduceSum, {X, in("i64[?]")}, attrs({{"keepdims", 0}})),
      "f32[*]");
  EXPECT_EQ(inferConcrete(OpKind::ReduceSum, {zeros({2, 3, 4}), i64s({1})},
                          attrs({{"keepdims", 0}}))
                .at(0),
            "f32[2,4]");
}

TEST_F(InferReduce, AttributeAxes) {
  Value *X = in("f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceMean, {X}, attrs({{"axes", Ints{1, 2}}})),
            "f32[N,1,1]");
  EXPECT_EQ(infer(OpKind::ReduceMean, {X},
                  attrs({{"axes", Ints{1, 2}}, {"keepdims", 0}})),
            "f32[N]");
  EXPECT_EQ(infer(OpKind::ReduceMax, {X}), "f32[1,1,1]");
  EXPECT_EQ(infer(OpKind::ReduceMin, {X}, attrs({{"axes", Ints{-3}}})),
            "f32[1,3,4]");
  EXPECT_EQ(infer(OpKind::ReduceProd, {in("i64[]")}), "i64[]");
  EXPECT_EQ(
      infer(OpKind::ReduceL2, {in("f32[0,3]")}, attrs({{"axes", Ints{0}}})),
      "f32[1,3]");
  EXPECT_EQ(infer(OpKind::ReduceLogSumExp, {in("f32[*]")}), "f32[*]");
}

TEST_F(InferReduce, Errors) {
  Value *X = in("f32[N,3,4]");
  std::string E = inferError(OpKind::ReduceSum, {X, ints({3})});
  EXPECT_TRUE(has(E, "axes 3 is out of range for rank 3") &&
              has(E, "ReduceSum"))
      << E;
  E = inferError(OpKind::ReduceMean, {X}, attrs({{"axes", Ints{1, -2}}}));
  EXPECT_TRUE(has(E, "twice")) << E;
  E = inferError(OpKind::ReduceSum, {X, in("i32[1]")});
  EXPECT_TRUE(has(E, "must be i64")) << E;
  E = inferError(OpKind::ReduceMax, {in("bool[3]")});
  EXPECT_TRUE(has(E, "bool")) << E;
}

TEST_F(InferReduce, ArgMaxArgMin) {
  Value *X = in("f32[N,5]");
  EXPECT_EQ(infer(OpKind::ArgMax, {X}, attrs({{"axis", 1}})), "i64[N,1]");
  EXPECT_EQ(infer(OpKind::ArgMax, {X}, attrs({{"axis", -1}, {"keepdims", 0}})),
            "i64[N]");
  EXPECT_EQ(infer(OpKind::ArgMin, {X}), "i64[1,5]");
  EXPECT_EQ(infer(OpKind::ArgMin, {in("f32[7]")}, attrs({{"keepdims", 0}})),
            "i64[]");
  EXPECT_EQ(infer(OpKind::ArgMax, {in("f32[*]")}), "i64[*]");
  std::string E = inferError(OpKind::ArgMax, {X}, attrs({{"axis", 2}}));
  EXPECT_TRUE(has(E, "axis 2 is out of range for rank 2")) << E;
  E = inferError(OpKind::ArgMax, {in("f32[]")});
  EXPECT_TRUE(has(E, "scalar")) << E;
}

} // namespace
