//===- InferShapeOpsTest.cpp - Inference tests for reshaping ops ---------===//
//
// Flatten, Reshape (0, -1, allowzero, symbolic -1), Transpose, Squeeze,
// Unsqueeze, Expand, Tile and Pad, with constant and unknown shape-like
// inputs, scalars, zero-size dims, negative axes and error messages.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferShapeOps : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
};

TEST_F(InferShapeOps, Flatten) {
  Value *X = in("f32[N,3,4,5]");
  EXPECT_EQ(infer(OpKind::Flatten, {X}), "f32[N,60]");
  EXPECT_EQ(infer(OpKind::Flatten, {X}, attrs({{"axis", 0}})), "f32[1,?]");
  EXPECT_EQ(infer(OpKind::Flatten, {X}, attrs({{"axis", 4}})), "f32[?,1]");
  EXPECT_EQ(infer(OpKind::Flatten, {X}, attrs({{"axis", -1}})), "f32[?,5]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[N,C,1,1]")}), "f32[N,C]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[2,3,4]")}, attrs({{"axis", 2}})),
            "f32[6,4]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[]")}, attrs({{"axis", 0}})),
            "f32[1,1]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[0,N]")}), "f32[0,N]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[N,0,4]")}), "f32[N,0]");
  EXPECT_EQ(infer(OpKind::Flatten, {in("f32[*]")}), "f32[?,?]");
  EXPECT_TRUE(has(inferError(OpKind::Flatten, {X}, attrs({{"axis", 5}})),
                  "axis 5 is out of range for rank 4"));
}

TEST_F(InferShapeOps, ReshapeStatic) {
  Value *X = in("f32[2,3,4]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({4, -1})}), "f32[4,6]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({0, -1})}), "f32[2,12]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({0, 0, 2, 2})}), "f32[2,3,2,2]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({-1})}), "f32[24]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[1]"), ints({})}), "f32[]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[]"), ints({1, 1})}), "f32[1,1]");
}

TEST_F(InferShapeOps, ReshapeSymbolic) {
  Value *X = in("f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({0, -1})}), "f32[N,12]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({-1, 12})}), "f32[N,12]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({-1, 4})}), "f32[?,4]");
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({0, 2, 6})}), "f32[N,2,6]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[B,T,C]"), ints({0, 0, 4, -1})}),
            "f32[B,T,4,?]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[B,T,8]"), ints({0, 0, 2, -1})}),
            "f32[B,T,2,4]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[*]"), ints({0, 5})}), "f32[?,5]");
}

TEST_F(InferShapeOps, ReshapeZeroSize) {
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[0,3]"), ints({-1, 3})}),
            "f32[0,3]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[0,3]"), ints({3, 0})},
                  attrs({{"allowzero", 1}})),
            "f32[3,0]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[2,0]"), ints({0, 0})}), "f32[2,0]");
  std::string E = inferError(OpKind::Reshape, {in("f32[0,3]"), ints({0, -1})});
  EXPECT_TRUE(has(E, "multiply to 0")) << E;
}

TEST_F(InferShapeOps, ReshapeErrors) {
  Value *X = in("f32[2,3]");
  std::string E = inferError(OpKind::Reshape, {X, ints({4, -1})});
  EXPECT_TRUE(has(E, "f32[2,3]") && has(E, "[4, -1]") &&
              has(E, "not divisible"))
      << E;
  E = inferError(OpKind::Reshape, {X, ints({5})});
  EXPECT_TRUE(has(E, "element counts differ") && has(E, "[5]")) << E;
  E = inferError(OpKind::Reshape, {X, ints({-1, -1})});
  EXPECT_TRUE(has(E, "more than one -1")) << E;
  E = inferError(OpKind::Reshape, {X, ints({-2, 3})});
  EXPECT_TRUE(has(E, "invalid extent -2")) << E;
  EXPECT_EQ(infer(OpKind::Reshape, {X, ints({0, 0, -1})}), "f32[2,3,1]");
  E = inferError(OpKind::Reshape, {X, ints({0, 0, 0})});
  EXPECT_TRUE(has(E, "position 2") && has(E, "rank 2")) << E;
  E = inferError(OpKind::Reshape, {X, ints({0, -1})},
                 attrs({{"allowzero", 1}}));
  EXPECT_TRUE(has(E, "allowzero")) << E;
  E = inferError(OpKind::Reshape, {X, ints({0, 6})}, attrs({{"allowzero", 1}}));
  EXPECT_TRUE(has(E, "element counts differ")) << E;
  E = inferError(OpKind::Reshape, {X, in("i32[2]")});
  EXPECT_TRUE(has(E, "must be i64")) << E;
  E = inferError(OpKind::Reshape, {in("f32[N,3]"), ints({0, 4})});
  EXPECT_TRUE(has(E, "element counts differ")) << E;
}

TEST_F(InferShapeOps, ReshapeUnknownShapeValue) {
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[6]"), in("i64[3]")}), "f32[?,?,?]");
  EXPECT_EQ(infer(OpKind::Reshape, {in("f32[6]"), in("i64[?]")}), "f32[*]");
  // At run time every input is known.
  EXPECT_EQ(
      inferConcrete(OpKind::Reshape, {zeros({2, 3, 4}), i64s({-1, 2})}).at(0),
      "f32[12,2]");
}

TEST_F(InferShapeOps, Transpose) {
  Value *X = in("f32[N,3,5]");
  EXPECT_EQ(infer(OpKind::Transpose, {X}), "f32[5,3,N]");
  EXPECT_EQ(infer(OpKind::Transpose, {X}, attrs({{"perm", Ints{0, 2, 1}}})),
            "f32[N,5,3]");
  EXPECT_EQ(infer(OpKind::Transpose, {in("f32[]")}), "f32[]");
  EXPECT_EQ(
      infer(OpKind::Transpose, {in("f32[*]")}, attrs({{"perm", Ints{1, 0}}})),
      "f32[?,?]");
  std::string E =
      inferError(OpKind::Transpose, {X}, attrs({{"perm", Ints{0, 0, 1}}}));
  EXPECT_TRUE(has(E, "not a permutation")) << E;
  E = inferError(OpKind::Transpose, {X}, attrs({{"perm", Ints{1, 0}}}));
  EXPECT_TRUE(has(E, "rank 3")) << E;
}

TEST_F(InferShapeOps, Squeeze) {
  Value *X = in("f32[1,3,1,5]");
  EXPECT_EQ(infer(OpKind::Squeeze, {X, ints({0, 2})}), "f32[3,5]");
  EXPECT_EQ(infer(OpKind::Squeeze, {X, ints({-2})}), "f32[1,3,5]");
  EXPECT_EQ(infer(OpKind::Squeeze, {X}), "f32[3,5]");
  EXPECT_EQ(infer(OpKind::Squeeze, {in("f32[1]")}), "f32[]");
  EXPECT_EQ(infer(OpKind::Squeeze, {in("f32[N,1]"), ints({0})}), "f32[1]");
  EXPECT_EQ(infer(OpKind::Squeeze, {in("f32[N,1,3]")}), "f32[*]");
  EXPECT_EQ(infer(OpKind::Squeeze, {X, in("i64[2]")}), "f32[?,?]");
  std::string E = inferError(OpKind::Squeeze, {in("f32[2,3]"), ints({1})});
  EXPECT_TRUE(has(E, "axis 1") && has(E, "extent is 3, not 1")) << E;
  E = inferError(OpKind::Squeeze, {X, ints({0, -4})});
  EXPECT_TRUE(has(E, "twice")) << E;
  E = inferError(OpKind::Squeeze, {X, ints({4})});
  EXPECT_TRUE(has(E, "out of range for rank 4")) << E;
}

TEST_F(InferShapeOps, Unsqueeze) {
  Value *X = in("f32[3,4]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {X, ints({0})}), "f32[1,3,4]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {X, ints({-1})}), "f32[3,4,1]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {X, ints({0, 3})}), "f32[1,3,4,1]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {X, ints({3, 0})}), "f32[1,3,4,1]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {in("f32[]"), ints({0})}), "f32[1]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {in("i64[N]"), ints({1})}), "i64[N,1]");
  EXPECT_EQ(infer(OpKind::Unsqueeze, {X, in("i64[2]")}), "f32[?,?,?,?]");
  EXPECT_TRUE(has(inferError(OpKind::Unsqueeze, {X, ints({1, 1})}), "twice"));
  EXPECT_TRUE(has(inferError(OpKind::Unsqueeze, {X, ints({3})}),
                  "out of range for rank 3"));
}

TEST_F(InferShapeOps, Expand) {
  EXPECT_EQ(infer(OpKind::Expand, {in("f32[3,1]"), ints({2, 1, 6})}),
            "f32[2,3,6]");
  EXPECT_EQ(infer(OpKind::Expand, {in("f32[N,1]"), ints({1, 4})}), "f32[N,4]");
  EXPECT_EQ(infer(OpKind::Expand, {in("f32[]"), ints({2, 0})}), "f32[2,0]");
  EXPECT_EQ(infer(OpKind::Expand, {in("f32[3,1]"), in("i64[3]")}),
            "f32[?,3,?]");
  std::string E = inferError(OpKind::Expand, {in("f32[3]"), ints({2})});
  EXPECT_TRUE(has(E, "f32[3]") && has(E, "f32[2]")) << E;
  EXPECT_EQ(
      inferConcrete(OpKind::Expand, {zeros({3, 1}), i64s({4, 3, 5})}).at(0),
      "f32[4,3,5]");
}

TEST_F(InferShapeOps, Tile) {
  EXPECT_EQ(infer(OpKind::Tile, {in("f32[2,3]"), ints({2, 1})}), "f32[4,3]");
  EXPECT_EQ(infer(OpKind::Tile, {in("f32[N,3]"), ints({1, 2})}), "f32[N,6]");
  EXPECT_EQ(infer(OpKind::Tile, {in("f32[N,3]"), ints({2, 0})}), "f32[?,0]");
  EXPECT_EQ(infer(OpKind::Tile, {in("f32[N,3]"), in("i64[2]")}), "f32[?,?]");
  EXPECT_EQ(infer(OpKind::Tile, {in("f32[*]"), ints({2, 2, 2})}), "f32[?,?,?]");
  std::string E = inferError(OpKind::Tile, {in("f32[2,3]"), ints({2})});
  EXPECT_TRUE(has(E, "rank 2") && has(E, "[2]")) << E;
}

TEST_F(InferShapeOps, Pad) {
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[N,3,4]"), ints({0, 0, 1, 0, 0, 2})}),
            "f32[N,3,7]");
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[5]"), ints({-1, -1})}), "f32[3]");
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[N,4]"), ints({1, 0, 1, 0})}),
            "f32[?,4]");
  EXPECT_EQ(infer(OpKind::Pad,
                  {in("f32[2,4]"), ints({1, 1, 1, 1}), scalar(1.0f)},
                  attrs({{"mode", "reflect"}})),
            "f32[4,6]");
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[2,4]"), in("i64[4]")}), "f32[?,?]");
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[*]"), ints({0, 1, 0, 1})}), "f32[?,?]");
  EXPECT_TRUE(has(inferError(OpKind::Pad, {in("f32[5]"), ints({-3, -3})}),
                  "below zero"));
  EXPECT_EQ(infer(OpKind::Pad, {in("f32[3,2]"), ints({0, 2, 0, 0})},
                  attrs({{"mode", "reflect"}})),
            "f32[3,4]");
  EXPECT_TRUE(has(inferError(OpKind::Pad, {in("f32[0,4]"), ints({1, 0, 0, 0})},
                             attrs({{"mode", "edge"}})),
                  "edge padding of empty axis 0"));
  EXPECT_TRUE(has(inferError(OpKind::Pad, {in("f32[2]"), ints({1, 1})},
                             attrs({{"mode", "wrap"}})),
                  "'wrap'"));
  EXPECT_TRUE(has(
      inferError(OpKind::Pad, {in("f32[2]"), ints({1, 1}), scalar<int64_t>(0)}),
      "i64[]"));
}

} // namespace
