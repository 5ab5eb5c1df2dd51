//===- ScatterKernelsTest.cpp - Reference kernels: gather/scatter, masks --===//
//
// GatherND (batch_dims), ScatterElements and ScatterND (reductions,
// duplicates, negative indices), Compress, NonZero, OneHot, EyeLike, Trilu
// and ReverseSequence: the ONNX examples plus hand-checked edge cases and
// errors.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefIndexing, GatherND) {
  Tensor D2 = i32({0, 1, 2, 3}, {2, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::GatherND).in(D2).in(i64({0, 0, 1, 1}, {2, 2})).run1(),
      i32({0, 3}));
  EXPECT_TENSOR(OpTest(OpKind::GatherND).in(D2).in(i64({1, 0}, {2, 1})).run1(),
                i32({2, 3, 0, 1}, {2, 2}));
  Tensor D3 = iota(Shape{2, 2, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::GatherND).in(D3).in(i64({0, 1, 1, 0}, {2, 2})).run1(),
      f32({2, 3, 4, 5}, {2, 2}));
  EXPECT_TENSOR(
      OpTest(OpKind::GatherND).in(D3).in(i64({0, 1, 1, 0}, {2, 1, 2})).run1(),
      f32({2, 3, 4, 5}, {2, 1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::GatherND)
                    .in(D3)
                    .in(i64({1, 0}, {2, 1}))
                    .attr("batch_dims", 1)
                    .run1(),
                f32({2, 3, 4, 5}, {2, 2}));
  EXPECT_TENSOR(
      OpTest(OpKind::GatherND).in(D2).in(i64({-1, -2}, {1, 2})).run1(),
      i32({2}));
  EXPECT_FAILS(OpTest(OpKind::GatherND).in(D2).in(i64({2, 0}, {1, 2})),
               "index 2 is out of range");
  EXPECT_FAILS(OpTest(OpKind::GatherND).in(D2).in(i64({0, 0, 0}, {1, 3})),
               "last axis of indices");
}

TEST(RefIndexing, ScatterElements) {
  Tensor Upd = f32({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3});
  EXPECT_TENSOR(OpTest(OpKind::ScatterElements)
                    .in(Tensor::empty(Shape{3, 3}, DType::F32))
                    .in(i64({1, 0, 2, 0, 2, 1}, {2, 3}))
                    .in(Upd)
                    .run1(),
                f32({2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}, {3, 3}));
  Tensor D = f32({1, 2, 3, 4, 5}, {1, 5});
  Tensor U = f32({1.1f, 2.1f}, {1, 2});
  auto Scatter = [&](Tensor Idx) {
    return OpTest(OpKind::ScatterElements).in(D).in(Idx).in(U).attr("axis", 1);
  };
  EXPECT_TENSOR(Scatter(i64({1, 3}, {1, 2})).run1(),
                f32({1, 1.1f, 3, 2.1f, 5}, {1, 5}));
  EXPECT_TENSOR(Scatter(i32({1, -3}, {1, 2})).run1(),
                f32({1, 1.1f, 2.1f, 4, 5}, {1, 5}));
  // Duplicates apply in order.
  EXPECT_TENSOR(Scatter(i64({1, 1}, {1, 2})).attr("reduction", "add").run1(),
                f32({1, 5.2f, 3, 4, 5}, {1, 5}));
  EXPECT_TENSOR(Scatter(i64({1, 1}, {1, 2})).attr("reduction", "mul").run1(),
                f32({1, 2 * 1.1f * 2.1f, 3, 4, 5}, {1, 5}));
  EXPECT_TENSOR(Scatter(i64({1, 1}, {1, 2})).run1(),
                f32({1, 2.1f, 3, 4, 5}, {1, 5}));
  // Integers wrap.
  EXPECT_TENSOR(OpTest(OpKind::ScatterElements)
                    .in(i8({100, 0}))
                    .in(i64({0}))
                    .in(i8({100}))
                    .attr("reduction", "add")
                    .run1(),
                i8({-56, 0}));
  EXPECT_FAILS(Scatter(i64({1, 5}, {1, 2})), "index 5 is out of range");
  EXPECT_FAILS(Scatter(i64({1, 1}, {1, 2})).attr("reduction", "max"),
               "reduction");
}

TEST(RefIndexing, ScatterND) {
  Tensor D = iota(Shape{8}, DType::F32, 1);
  EXPECT_TENSOR(OpTest(OpKind::ScatterND)
                    .in(D)
                    .in(i64({4, 3, 1, 7}, {4, 1}))
                    .in(f32({9, 10, 11, 12}))
                    .run1(),
                f32({1, 11, 3, 10, 9, 6, 7, 12}));
  EXPECT_TENSOR(OpTest(OpKind::ScatterND)
                    .in(D)
                    .in(i64({0, 0, -1}, {3, 1}))
                    .in(f32({5, 6, 2}))
                    .attr("reduction", "add")
                    .run1(),
                f32({12, 2, 3, 4, 5, 6, 7, 10}));
  EXPECT_TENSOR(OpTest(OpKind::ScatterND)
                    .in(D)
                    .in(i64({0, 0}, {2, 1}))
                    .in(f32({5, 6}))
                    .attr("reduction", "mul")
                    .run1(),
                f32({30, 2, 3, 4, 5, 6, 7, 8}));
  // Whole-row slices.
  EXPECT_TENSOR(OpTest(OpKind::ScatterND)
                    .in(i64({1, 2, 3, 4}, {2, 2}))
                    .in(i64({1}, {1, 1}))
                    .in(i64({9, 9}, {1, 2}))
                    .run1(),
                i64({1, 2, 9, 9}, {2, 2}));
  EXPECT_FAILS(
      OpTest(OpKind::ScatterND).in(D).in(i64({8}, {1, 1})).in(f32({1})),
      "index 8 is out of range");
  EXPECT_FAILS(
      OpTest(OpKind::ScatterND).in(D).in(i64({1}, {1, 1})).in(f32({1, 2})),
      "updates");
}

TEST(RefIndexing, Compress) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TENSOR(OpTest(OpKind::Compress)
                    .in(X)
                    .in(boolean({0, 1, 1}))
                    .attr("axis", 0)
                    .run1(),
                f32({3, 4, 5, 6}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Compress)
                    .in(X)
                    .in(boolean({0, 1}))
                    .attr("axis", -1)
                    .run1(),
                f32({2, 4, 6}, {3, 1}));
  // No axis: the flattened input; a shorter condition drops the rest.
  EXPECT_TENSOR(
      OpTest(OpKind::Compress).in(X).in(boolean({0, 1, 0, 0, 1})).run1(),
      f32({2, 5}));
  EXPECT_TENSOR(OpTest(OpKind::Compress)
                    .in(X)
                    .in(boolean({0, 0, 0, 0}))
                    .attr("axis", 0)
                    .run1(),
                Tensor::empty(Shape{0, 2}, DType::F32));
  EXPECT_FAILS(
      OpTest(OpKind::Compress).in(X).in(boolean({0, 0, 0, 1})).attr("axis", 0),
      "condition entry 3");
}

TEST(RefIndexing, NonZero) {
  EXPECT_TENSOR(
      OpTest(OpKind::NonZero).in(boolean({1, 0, 1, 1}, {2, 2})).run1(),
      i64({0, 1, 1, 0, 0, 1}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::NonZero).in(f32({0, 3, 0, -1})).run1(),
                i64({1, 3}, {1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::NonZero).in(i32({0, 0}, {1, 2})).run1(),
                Tensor::empty(Shape{2, 0}, DType::I64));
  // A scalar counts as one axis.
  EXPECT_TENSOR(OpTest(OpKind::NonZero).in(f32({5}, {})).run1(),
                i64({0}, {1, 1}));
  // Three axes (the outer coordinates carry over rows); NaN is not zero.
  EXPECT_TENSOR(OpTest(OpKind::NonZero)
                    .in(f32({0, 0, 2, 0, 0, 0, NAN, 0, 0, 0, 1, 4}, {2, 2, 3}))
                    .run1(),
                i64({0, 1, 1, 1, 0, 0, 1, 1, 2, 0, 1, 2}, {3, 4}));
  EXPECT_TENSOR(OpTest(OpKind::NonZero)
                    .in(Tensor::empty(Shape{2, 3, 0}, DType::F32))
                    .run1(),
                Tensor::empty(Shape{3, 0}, DType::I64));
}

TEST(RefIndexing, OneHot) {
  Tensor Vals = f32({0, 1});
  EXPECT_TENSOR(OpTest(OpKind::OneHot)
                    .in(i64({0, 2, -1}))
                    .in(i64({3}, {}))
                    .in(Vals)
                    .run1(),
                f32({1, 0, 0, 0, 0, 1, 0, 0, 1}, {3, 3}));
  EXPECT_TENSOR(OpTest(OpKind::OneHot)
                    .in(i64({0, 2, -1}))
                    .in(f32({3}))
                    .in(Vals)
                    .attr("axis", 0)
                    .run1(),
                f32({1, 0, 0, 0, 0, 0, 0, 1, 1}, {3, 3}));
  // Out-of-range indices give all off values; values set the dtype.
  EXPECT_TENSOR(OpTest(OpKind::OneHot)
                    .in(f32({1.0f, 5.0f, -4.0f}, {3, 1}))
                    .in(i32({2}))
                    .in(i64({2, 7}))
                    .attr("axis", 1)
                    .run1(),
                i64({2, 7, 2, 2, 2, 2}, {3, 2, 1}));
  EXPECT_FAILS(OpTest(OpKind::OneHot).in(i64({0})).in(i64({0}, {})).in(Vals),
               "depth");
  EXPECT_FAILS(OpTest(OpKind::OneHot)
                   .in(i64({0}))
                   .in(i64({2}, {}))
                   .in(Vals)
                   .attr("axis", 2),
               "out of range");
}

TEST(RefIndexing, EyeLike) {
  Tensor Z = Tensor::empty(Shape{2, 3}, DType::F32);
  EXPECT_TENSOR(OpTest(OpKind::EyeLike).in(Z).run1(),
                f32({1, 0, 0, 0, 1, 0}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::EyeLike).in(Z).attr("k", 1).run1(),
                f32({0, 1, 0, 0, 0, 1}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::EyeLike).in(Z).attr("k", -1).run1(),
                f32({0, 0, 0, 1, 0, 0}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::EyeLike).in(Z).attr("k", 5).run1(),
                f32({0, 0, 0, 0, 0, 0}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::EyeLike).in(Z).attr("dtype", 7).run1(),
                i64({1, 0, 0, 0, 1, 0}, {2, 3}));
  EXPECT_FAILS(OpTest(OpKind::EyeLike).in(Z).attr("dtype", 8), "dtype");
}

TEST(RefIndexing, Trilu) {
  Tensor X = iota(Shape{3, 4}, DType::F32, 1);
  auto Tri = [&](int Upper, int64_t K) {
    return OpTest(OpKind::Trilu)
        .in(X)
        .in(i64({K}, {}))
        .attr("upper", Upper)
        .run1();
  };
  EXPECT_TENSOR(OpTest(OpKind::Trilu).in(X).run1(),
                f32({1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}, {3, 4}));
  EXPECT_TENSOR(Tri(1, 1), f32({0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, {3, 4}));
  EXPECT_TENSOR(Tri(1, -1),
                f32({1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}, {3, 4}));
  EXPECT_TENSOR(Tri(0, 0), f32({1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}, {3, 4}));
  EXPECT_TENSOR(Tri(0, -1), f32({0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}, {3, 4}));
  constexpr int64_t Big = std::numeric_limits<int64_t>::max();
  EXPECT_TENSOR(Tri(1, Big), Tensor::empty(Shape{3, 4}, DType::F32));
  EXPECT_TENSOR(Tri(0, Big), X);
  EXPECT_TENSOR(Tri(1, -Big - 1), X);
  // Batched, integer.
  EXPECT_TENSOR(OpTest(OpKind::Trilu)
                    .in(iota(Shape{2, 2, 2}, DType::I32, 1))
                    .attr("upper", 0)
                    .run1(),
                i32({1, 0, 3, 4, 5, 0, 7, 8}, {2, 2, 2}));
  EXPECT_FAILS(OpTest(OpKind::Trilu).in(f32({1, 2})), "rank >= 2");
}

TEST(RefIndexing, ReverseSequence) {
  Tensor X = iota(Shape{4, 4}, DType::F32);
  EXPECT_TENSOR(
      OpTest(OpKind::ReverseSequence)
          .in(X)
          .in(i64({4, 3, 2, 1}))
          .attr("time_axis", 0)
          .attr("batch_axis", 1)
          .run1(),
      f32({12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}, {4, 4}));
  EXPECT_TENSOR(
      OpTest(OpKind::ReverseSequence)
          .in(X)
          .in(i64({1, 2, 3, 4}))
          .attr("time_axis", 1)
          .attr("batch_axis", 0)
          .run1(),
      f32({0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}, {4, 4}));
  // Trailing axes move with their time step.
  EXPECT_TENSOR(OpTest(OpKind::ReverseSequence)
                    .in(iota(Shape{2, 1, 2}, DType::I64))
                    .in(i64({2}))
                    .run1(),
                i64({2, 3, 0, 1}, {2, 1, 2}));
  EXPECT_FAILS(OpTest(OpKind::ReverseSequence).in(X).in(i64({5, 1, 1, 1})),
               "sequence length 5");
  EXPECT_FAILS(OpTest(OpKind::ReverseSequence)
                   .in(X)
                   .in(i64({1, 1, 1, 1}))
                   .attr("time_axis", 1),
               "batch_axis");
}

} // namespace
