//===- SequenceKernelsTest.cpp - Reference kernels: packed sequences -----===//
//
// nng.SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
// SequenceAt, SequenceLength, SplitToSequence and ConcatFromSequence on
// (data, shapes) pairs: elements of different ranks and shapes, negative
// positions, positions out of range (the message names the position and
// the length), malformed 'shapes' and the ONNX examples of SplitToSequence
// and ConcatFromSequence.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

/// The sequence [x, y, z] of the tests: x = [[0, 1, 2], [3, 4, 5]] (f32
/// [2, 3]), y = 6 (a scalar), z = [7, 8] ([2]).
Tensor seqData() { return f32({0, 1, 2, 3, 4, 5, 6, 7, 8}); }
Tensor seqShapes() { return i64({2, 2, 3, 0, 1, 2}); }

/// An OpTest of K reading the test sequence as graph inputs.
OpTest onSeq(OpKind K) { return OpTest(K).in(seqData()).in(seqShapes()); }

TEST(RefSequence, EmptyAndConstruct) {
  auto E = OpTest(OpKind::SequenceEmpty).run();
  EXPECT_TENSOR(E.at(0), f32({}));
  EXPECT_TENSOR(E.at(1), i64({}));
  auto EI = OpTest(OpKind::SequenceEmpty).attr("dtype", int64_t(7)).run();
  EXPECT_EQ(EI.at(0).dtype(), DType::I64);
  auto C = OpTest(OpKind::SequenceConstruct)
               .in(f32({0, 1, 2, 3, 4, 5}, {2, 3}))
               .in(Tensor::scalar<float>(6))
               .constIn(f32({7, 8}))
               .run();
  EXPECT_TENSOR(C.at(0), seqData());
  EXPECT_TENSOR(C.at(1), seqShapes());
  // Elements with no values still count.
  auto Z = OpTest(OpKind::SequenceConstruct)
               .in(Tensor::empty(Shape{0, 4}, DType::F32))
               .run();
  EXPECT_TENSOR(Z.at(0), f32({}));
  EXPECT_TENSOR(Z.at(1), i64({2, 0, 4}));
  EXPECT_FAILS(OpTest(OpKind::SequenceConstruct).in(f32({1})).in(i64({1})),
               "dtype");
}

TEST(RefSequence, Insert) {
  Tensor W = f32({9, 10, 11, 12}, {4, 1});
  // Default: at the back.
  auto Back = onSeq(OpKind::SequenceInsert).in(W).run();
  EXPECT_TENSOR(Back.at(0), f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_TENSOR(Back.at(1), i64({2, 2, 3, 0, 1, 2, 2, 4, 1}));
  auto Front = onSeq(OpKind::SequenceInsert).in(W).in(i64({0}, {})).run();
  EXPECT_TENSOR(Front.at(0), f32({9, 10, 11, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TENSOR(Front.at(1), i64({2, 4, 1, 2, 2, 3, 0, 1, 2}));
  // -1 inserts before the last element; the length itself is the back.
  auto Neg = onSeq(OpKind::SequenceInsert)
                 .in(f32({9}))
                 .in(Tensor::scalar<int32_t>(-1))
                 .run();
  EXPECT_TENSOR(Neg.at(0), f32({0, 1, 2, 3, 4, 5, 6, 9, 7, 8}));
  EXPECT_TENSOR(Neg.at(1), i64({2, 2, 3, 0, 1, 1, 1, 2}));
  auto End = onSeq(OpKind::SequenceInsert).in(f32({9})).in(i64({3}, {})).run();
  EXPECT_TENSOR(End.at(1), i64({2, 2, 3, 0, 1, 2, 1, 1}));
  EXPECT_FAILS(onSeq(OpKind::SequenceInsert).in(f32({9})).in(i64({4}, {})),
               "position 4 is out of range for a sequence of length 3 "
               "(valid: -3 to 3)");
  EXPECT_FAILS(onSeq(OpKind::SequenceInsert).in(f32({9})).in(i64({-4}, {})),
               "position -4 is out of range");
  EXPECT_FAILS(onSeq(OpKind::SequenceInsert).in(i64({9})), "cannot insert");
  // Into an empty sequence.
  auto One = OpTest(OpKind::SequenceInsert)
                 .in(f32({}))
                 .in(i64({}))
                 .in(f32({1, 2}))
                 .run();
  EXPECT_TENSOR(One.at(0), f32({1, 2}));
  EXPECT_TENSOR(One.at(1), i64({1, 2}));
}

TEST(RefSequence, Erase) {
  auto Last = onSeq(OpKind::SequenceErase).run();
  EXPECT_TENSOR(Last.at(0), f32({0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TENSOR(Last.at(1), i64({2, 2, 3, 0}));
  auto First = onSeq(OpKind::SequenceErase).in(i64({-3}, {})).run();
  EXPECT_TENSOR(First.at(0), f32({6, 7, 8}));
  EXPECT_TENSOR(First.at(1), i64({0, 1, 2}));
  EXPECT_FAILS(onSeq(OpKind::SequenceErase).in(i64({3}, {})),
               "position 3 is out of range for a sequence of length 3 "
               "(valid: -3 to 2)");
  EXPECT_FAILS(OpTest(OpKind::SequenceErase).in(f32({})).in(i64({})),
               "(the sequence is empty)");
}

TEST(RefSequence, AtAndLength) {
  EXPECT_TENSOR(onSeq(OpKind::SequenceAt).in(i64({0}, {})).run1(),
                f32({0, 1, 2, 3, 4, 5}, {2, 3}));
  EXPECT_TENSOR(onSeq(OpKind::SequenceAt).in(i64({1}, {})).run1(),
                Tensor::scalar<float>(6));
  EXPECT_TENSOR(
      onSeq(OpKind::SequenceAt).in(Tensor::scalar<int32_t>(-1)).run1(),
      f32({7, 8}));
  // A constant position: inference knows the shape only at run time.
  EXPECT_TENSOR(onSeq(OpKind::SequenceAt).constIn(i64({-3}, {})).run1(),
                f32({0, 1, 2, 3, 4, 5}, {2, 3}));
  EXPECT_FAILS(onSeq(OpKind::SequenceAt).in(i64({-4}, {})),
               "position -4 is out of range for a sequence of length 3");
  EXPECT_FAILS(onSeq(OpKind::SequenceAt).in(i64({0, 1})),
               "position must be a scalar");
  EXPECT_TENSOR(onSeq(OpKind::SequenceLength).run1(),
                Tensor::scalar<int64_t>(3));
  EXPECT_TENSOR(OpTest(OpKind::SequenceLength).in(f32({})).in(i64({})).run1(),
                Tensor::scalar<int64_t>(0));
}

TEST(RefSequence, MalformedPairs) {
  // Rank 2 but one dim follows.
  EXPECT_FAILS(OpTest(OpKind::SequenceLength).in(f32({1})).in(i64({2, 1})),
               "malformed sequence");
  // The shapes describe 6 values, data holds 5.
  EXPECT_FAILS(OpTest(OpKind::SequenceLength)
                   .in(f32({1, 2, 3, 4, 5}))
                   .in(i64({2, 2, 3})),
               "data' holds 5");
  EXPECT_FAILS(OpTest(OpKind::SequenceLength).in(f32({})).in(i64({1, -1})),
               "negative dim");
  EXPECT_FAILS(OpTest(OpKind::SequenceLength)
                   .in(f32({}))
                   .in(i64({2, int64_t(1) << 40, int64_t(1) << 40})),
               "overflows");
  EXPECT_FAILS(OpTest(OpKind::SequenceLength).in(f32({1}, {1, 1})).in(i64({})),
               "must be 1-D");
}

TEST(RefSequence, SplitToSequence) {
  Tensor X = iota(Shape{2, 3});
  // Size-1 parts, kept.
  auto P = OpTest(OpKind::SplitToSequence).in(X).attr("axis", int64_t(1)).run();
  EXPECT_TENSOR(P.at(0), f32({0, 3, 1, 4, 2, 5}));
  EXPECT_TENSOR(P.at(1), i64({2, 2, 1, 2, 2, 1, 2, 2, 1}));
  // Squeezed.
  auto S =
      OpTest(OpKind::SplitToSequence).in(X).attr("keepdims", int64_t(0)).run();
  EXPECT_TENSOR(S.at(0), f32({0, 1, 2, 3, 4, 5}));
  EXPECT_TENSOR(S.at(1), i64({1, 3, 1, 3}));
  // A scalar split: equal parts, the last one shorter (keepdims ignored).
  auto Q = OpTest(OpKind::SplitToSequence)
               .in(X)
               .in(i64({2}, {}))
               .attr("axis", int64_t(-1))
               .attr("keepdims", int64_t(0))
               .run();
  EXPECT_TENSOR(Q.at(0), f32({0, 1, 3, 4, 2, 5}));
  EXPECT_TENSOR(Q.at(1), i64({2, 2, 2, 2, 2, 1}));
  // Sizes.
  auto R = OpTest(OpKind::SplitToSequence)
               .in(X)
               .in(i32({1, 0, 2}))
               .attr("axis", int64_t(1))
               .run();
  EXPECT_TENSOR(R.at(0), f32({0, 3, 1, 2, 4, 5}));
  EXPECT_TENSOR(R.at(1), i64({2, 2, 1, 2, 2, 0, 2, 2, 2}));
  EXPECT_FAILS(OpTest(OpKind::SplitToSequence).in(X).in(i64({1, 2})),
               "adds up to 3");
  EXPECT_FAILS(OpTest(OpKind::SplitToSequence)
                   .in(X)
                   .in(i64({std::numeric_limits<int64_t>::max(), 2})),
               "adds up to more than int64 holds");
  EXPECT_FAILS(OpTest(OpKind::SplitToSequence).in(X).in(i64({0}, {})),
               "must be positive");
}

TEST(RefSequence, ConcatFromSequence) {
  // [2, 3] and [1, 3] along axis 0.
  Tensor D = f32({0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor Sh = i64({2, 2, 3, 2, 1, 3});
  EXPECT_TENSOR(OpTest(OpKind::ConcatFromSequence)
                    .in(D)
                    .in(Sh)
                    .attr("axis", int64_t(0))
                    .run1(),
                f32({0, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 3}));
  EXPECT_FAILS(
      OpTest(OpKind::ConcatFromSequence).in(D).in(Sh).attr("axis", int64_t(1)),
      "does not fit element 0");
  // Stacking along a new last axis.
  EXPECT_TENSOR(OpTest(OpKind::ConcatFromSequence)
                    .in(f32({1, 2, 3, 4}))
                    .in(i64({1, 2, 1, 2}))
                    .attr("axis", int64_t(-1))
                    .attr("new_axis", int64_t(1))
                    .run1(),
                f32({1, 3, 2, 4}, {2, 2}));
  // Stacking along a new first axis: [2, 3] twice -> [2, 2, 3].
  EXPECT_TENSOR(OpTest(OpKind::ConcatFromSequence)
                    .in(iota(Shape{12}))
                    .in(i64({2, 2, 3, 2, 2, 3}))
                    .attr("axis", int64_t(0))
                    .attr("new_axis", int64_t(1))
                    .run1(),
                iota(Shape{2, 2, 3}));
  EXPECT_FAILS(OpTest(OpKind::ConcatFromSequence)
                   .in(iota(Shape{10}))
                   .in(i64({2, 2, 3, 2, 2, 2}))
                   .attr("axis", int64_t(0))
                   .attr("new_axis", int64_t(1)),
               "does not fit element 0");
  EXPECT_FAILS(OpTest(OpKind::ConcatFromSequence)
                   .in(f32({}))
                   .in(i64({}))
                   .attr("axis", int64_t(0)),
               "empty sequence");
}

} // namespace
