//===- InferSequenceTest.cpp - Inference tests for the sequence ops ------===//
//
// The (data, shapes) pairs of the nng sequence ops: static lengths where
// static input types fix them, unknown extents (and unknown rank for the
// element of SequenceAt and ConcatFromSequence's result) otherwise, exact
// types when the values are known (constants, or every input at run time),
// and the errors for bad pairs and positions out of range.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferSequence : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
  /// A 1-D f32 initializer of N zeros.
  Value *data(int64_t N) {
    return G.addInitializer("d" + std::to_string(Counter++), zeros(Shape{N}));
  }
};

using Strs = std::vector<std::string>;

TEST_F(InferSequence, Producers) {
  EXPECT_EQ(inferAll(OpKind::SequenceEmpty, {}, {}, 2),
            (Strs{"f32[0]", "i64[0]"}));
  EXPECT_EQ(inferAll(OpKind::SequenceEmpty, {}, attrs({{"dtype", 11}}), 2),
            (Strs{"f64[0]", "i64[0]"}));
  EXPECT_TRUE(
      has(inferError(OpKind::SequenceEmpty, {}, attrs({{"dtype", 14}}), 2),
          "dtype = 14"));
  // Static shapes: exact lengths ([2,3,4] and [1,3,4]: 36 values, 8
  // shape entries).
  EXPECT_EQ(inferAll(OpKind::SequenceConstruct,
                     {in("f32[2,3,4]"), in("f32[1,3,4]")}, {}, 2),
            (Strs{"f32[36]", "i64[8]"}));
  // Known ranks fix the length of 'shapes' only.
  EXPECT_EQ(
      inferAll(OpKind::SequenceConstruct, {in("f32[N,3]"), in("f32[]")}, {}, 2),
      (Strs{"f32[?]", "i64[4]"}));
  EXPECT_EQ(
      inferAll(OpKind::SequenceConstruct, {in("f32[*]"), in("f32[2]")}, {}, 2),
      (Strs{"f32[?]", "i64[?]"}));
  EXPECT_TRUE(has(inferError(OpKind::SequenceConstruct,
                             {in("f32[2]"), in("i64[2]")}, {}, 2),
                  "i64"));
  // SplitToSequence of a static input: exact.
  EXPECT_EQ(inferAll(OpKind::SplitToSequence, {in("f32[2,3,4]")},
                     attrs({{"axis", -1}}), 2),
            (Strs{"f32[24]", "i64[16]"}));
  EXPECT_EQ(inferAll(OpKind::SplitToSequence, {in("f32[2,3,4]")},
                     attrs({{"keepdims", 0}}), 2),
            (Strs{"f32[24]", "i64[6]"}));
  EXPECT_EQ(inferAll(OpKind::SplitToSequence,
                     {in("f32[5,2]"), scalar<int64_t>(2)}, {}, 2),
            (Strs{"f32[10]", "i64[9]"}));
  // Sizes only known at run time: the data length is still static.
  EXPECT_EQ(
      inferAll(OpKind::SplitToSequence, {in("f32[6]"), in("i64[3]")}, {}, 2),
      (Strs{"f32[6]", "i64[?]"}));
  EXPECT_EQ(
      inferAll(OpKind::SplitToSequence, {in("f32[N]"), in("i64[3]")}, {}, 2),
      (Strs{"f32[?]", "i64[?]"}));
  EXPECT_TRUE(has(
      inferError(OpKind::SplitToSequence, {in("f32[6]"), ints({1, 2})}, {}, 2),
      "adds up to 3"));
}

TEST_F(InferSequence, Consumers) {
  Value *D = in("f32[?]"), *S = in("i64[?]");
  EXPECT_EQ(inferAll(OpKind::SequenceInsert, {D, S, in("f32[2,3]")}, {}, 2),
            (Strs{"f32[?]", "i64[?]"}));
  EXPECT_EQ(inferAll(OpKind::SequenceInsert,
                     {in("f32[6]"), in("i64[3]"), in("f32[2,3]")}, {}, 2),
            (Strs{"f32[12]", "i64[6]"}));
  EXPECT_EQ(inferAll(OpKind::SequenceErase, {D, S}, {}, 2),
            (Strs{"f32[?]", "i64[?]"}));
  EXPECT_EQ(infer(OpKind::SequenceAt, {D, S, scalar<int64_t>(0)}), "f32[*]");
  EXPECT_EQ(infer(OpKind::SequenceLength, {D, S}), "i64[]");
  EXPECT_EQ(infer(OpKind::ConcatFromSequence, {D, S}, attrs({{"axis", 0}})),
            "f32[*]");
  EXPECT_TRUE(
      has(inferError(OpKind::SequenceInsert, {D, S, in("i64[2]")}, {}, 2),
          "cannot insert"));
  EXPECT_TRUE(has(inferError(OpKind::SequenceLength, {in("f32[2,2]"), S}),
                  "must be 1-D"));
  EXPECT_TRUE(
      has(inferError(OpKind::SequenceLength, {D, in("i32[3]")}), "1-D i64"));
  EXPECT_TRUE(has(inferError(OpKind::SequenceAt, {D, S, in("i64[2]")}),
                  "must be a scalar"));
}

TEST_F(InferSequence, KnownShapes) {
  // [x: f32[2,3], y: f32[], z: f32[2]] with constant shapes.
  Value *Sh = ints({2, 2, 3, 0, 1, 2});
  EXPECT_EQ(infer(OpKind::SequenceAt, {data(9), Sh, scalar<int64_t>(-3)}),
            "f32[2,3]");
  // Unknown position: the common rank, or unknown rank when ranks differ.
  EXPECT_EQ(infer(OpKind::SequenceAt, {data(9), Sh, in("i64[]")}), "f32[*]");
  EXPECT_EQ(infer(OpKind::SequenceAt,
                  {data(10), ints({2, 2, 3, 2, 1, 4}), in("i64[]")}),
            "f32[?,?]");
  EXPECT_EQ(
      inferAll(OpKind::SequenceErase, {data(9), Sh, scalar<int64_t>(0)}, {}, 2),
      (Strs{"f32[3]", "i64[3]"}));
  EXPECT_EQ(infer(OpKind::ConcatFromSequence,
                  {data(10), ints({2, 2, 3, 2, 2, 2})}, attrs({{"axis", -1}})),
            "f32[2,5]");
  EXPECT_EQ(infer(OpKind::ConcatFromSequence, {data(4), ints({1, 2, 1, 2})},
                  attrs({{"axis", 0}, {"new_axis", 1}})),
            "f32[2,2]");
  // Positions out of range name the position and the length.
  std::string E =
      inferError(OpKind::SequenceAt, {data(9), Sh, scalar<int64_t>(3)});
  EXPECT_TRUE(has(E, "position 3 is out of range for a sequence of length 3 "
                     "(valid: -3 to 2)"))
      << E;
  EXPECT_TRUE(has(E, "nng.SequenceAt")) << E;
  EXPECT_TRUE(
      has(inferError(OpKind::SequenceInsert,
                     {data(9), Sh, in("f32[1]"), scalar<int64_t>(-4)}, {}, 2),
          "(valid: -3 to 3)"));
  EXPECT_TRUE(has(inferError(OpKind::SequenceErase,
                             {data(0), ints({}), scalar<int64_t>(0)}, {}, 2),
                  "the sequence is empty"));
  // Malformed pairs.
  EXPECT_TRUE(
      has(inferError(OpKind::SequenceLength, {data(5), Sh}), "'data' holds 5"));
  EXPECT_TRUE(has(inferError(OpKind::SequenceLength, {data(0), ints({3, 1})}),
                  "gives rank 3"));
  EXPECT_TRUE(has(inferError(OpKind::ConcatFromSequence, {data(0), ints({})},
                             attrs({{"axis", 0}})),
                  "empty sequence"));
}

TEST_F(InferSequence, RunTime) {
  // At run time every value is known: exact types.
  AttrMap None;
  EXPECT_EQ(
      inferConcrete(OpKind::SequenceInsert,
                    {zeros(Shape{9}), i64s({2, 2, 3, 0, 1, 2}),
                     zeros(Shape{1, 3}), nng::rt::Tensor::scalar<int64_t>(1)},
                    None, 2),
      (Strs{"f32[12]", "i64[9]"}));
  EXPECT_EQ(inferConcrete(OpKind::SequenceAt,
                          {zeros(Shape{9}), i64s({2, 2, 3, 0, 1, 2}),
                           nng::rt::Tensor::scalar<int32_t>(1)}),
            (Strs{"f32[]"}));
}

} // namespace
