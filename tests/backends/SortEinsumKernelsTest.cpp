//===- SortEinsumKernelsTest.cpp - Reference kernels: sort, Einsum, blocks -===//
//
// TopK (largest/smallest, ties, NaN, axis), Unique (sorted and unsorted,
// with and without axis, all four outputs), CumSum (exclusive, reverse),
// Einsum (matmul, transpose, trace, diagonal, ellipsis, implicit output,
// integers, errors), DepthToSpace (DCR, CRD), SpaceToDepth and MaxUnpool.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cmath>

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefSort, TopK) {
  Tensor X = iota(Shape{3, 4});
  std::vector<Tensor> R = OpTest(OpKind::TopK).in(X).in(i64({3})).run();
  EXPECT_TENSOR(R[0], f32({3, 2, 1, 7, 6, 5, 11, 10, 9}, {3, 3}));
  EXPECT_TENSOR(R[1], i64({3, 2, 1, 3, 2, 1, 3, 2, 1}, {3, 3}));
  R = OpTest(OpKind::TopK).in(X).in(i64({2})).attr("largest", 0).run();
  EXPECT_TENSOR(R[0], f32({0, 1, 4, 5, 8, 9}, {3, 2}));
  EXPECT_TENSOR(R[1], i64({0, 1, 0, 1, 0, 1}, {3, 2}));
  R = OpTest(OpKind::TopK).in(X).in(i64({1})).attr("axis", 0).run();
  EXPECT_TENSOR(R[0], f32({8, 9, 10, 11}, {1, 4}));
  EXPECT_TENSOR(R[1], i64({2, 2, 2, 2}, {1, 4}));
  // Ties go to the lower index, both ways.
  R = OpTest(OpKind::TopK).in(i32({1, 3, 3, 2})).in(i64({2})).run();
  EXPECT_TENSOR(R[0], i32({3, 3}));
  EXPECT_TENSOR(R[1], i64({1, 2}));
  R = OpTest(OpKind::TopK)
          .in(f32({2, 1, 1}))
          .in(i64({2}))
          .attr("largest", 0)
          .run();
  EXPECT_TENSOR(R[1], i64({1, 2}));
  // NaN ranks above every number.
  R = OpTest(OpKind::TopK).in(f32({1, NAN, 3})).in(i64({2})).run();
  EXPECT_TENSOR(R[0], f32({NAN, 3}));
  EXPECT_TENSOR(R[1], i64({1, 2}));
  // Large integers compare exactly.
  R = OpTest(OpKind::TopK)
          .in(i64({(1LL << 60) + 1, 1LL << 60}))
          .in(i64({1}))
          .run();
  EXPECT_TENSOR(R[1], i64({0}));
  R = OpTest(OpKind::TopK).in(X).in(i64({0})).run();
  EXPECT_TENSOR(R[0], Tensor::empty(Shape{3, 0}, DType::F32));
  EXPECT_FAILS(OpTest(OpKind::TopK).in(X).in(i64({5})), "K = 5");
}

TEST(RefSort, TopKFewOfMany) {
  // K well below N sorts only the first K: the same order as a stable sort
  // of all (NaN first when largest, ties to the lower index).
  std::vector<float> V(40, 1.0f);
  V[3] = 7;
  V[9] = NAN;
  V[11] = 7;
  V[20] = 5;
  V[33] = NAN;
  V[35] = 7;
  std::vector<Tensor> R =
      OpTest(OpKind::TopK).in(f32(V)).in(i64({6})).run();
  EXPECT_TENSOR(R[0], f32({NAN, NAN, 7, 7, 7, 5}));
  EXPECT_TENSOR(R[1], i64({9, 33, 3, 11, 35, 20}));
  V[0] = -2;
  V[39] = -2;
  R = OpTest(OpKind::TopK).in(f32(V)).in(i64({3})).attr("largest", 0).run();
  EXPECT_TENSOR(R[0], f32({-2, -2, 1}));
  EXPECT_TENSOR(R[1], i64({0, 39, 1}));
}

TEST(RefSort, UniqueFlat) {
  Tensor X = f32({2, 1, 1, 3, 4, 3});
  std::vector<Tensor> R = OpTest(OpKind::Unique).in(X).outputs(4).run();
  ASSERT_EQ(R.size(), 4u);
  EXPECT_TENSOR(R[0], f32({1, 2, 3, 4}));
  EXPECT_TENSOR(R[1], i64({1, 0, 3, 4}));
  EXPECT_TENSOR(R[2], i64({1, 0, 0, 2, 3, 2}));
  EXPECT_TENSOR(R[3], i64({2, 1, 2, 1}));
  R = OpTest(OpKind::Unique).in(X).attr("sorted", 0).outputs(4).run();
  EXPECT_TENSOR(R[0], f32({2, 1, 3, 4}));
  EXPECT_TENSOR(R[1], i64({0, 1, 3, 4}));
  EXPECT_TENSOR(R[2], i64({0, 1, 1, 2, 3, 2}));
  EXPECT_TENSOR(R[3], i64({1, 2, 2, 1}));
  // Only Y; a 2-D input is flattened.
  EXPECT_TENSOR(OpTest(OpKind::Unique).in(i64({5, 5, -1, 5}, {2, 2})).run1(),
                i64({-1, 5}));
  EXPECT_TENSOR(
      OpTest(OpKind::Unique).in(Tensor::empty(Shape{0}, DType::F32)).run1(),
      Tensor::empty(Shape{0}, DType::F32));
}

TEST(RefSort, UniqueAxis) {
  Tensor X = f32({1, 0, 0, 1, 0, 0, 2, 3, 4}, {3, 3});
  std::vector<Tensor> R =
      OpTest(OpKind::Unique).in(X).attr("axis", 0).outputs(4).run();
  EXPECT_TENSOR(R[0], f32({1, 0, 0, 2, 3, 4}, {2, 3}));
  EXPECT_TENSOR(R[1], i64({0, 2}));
  EXPECT_TENSOR(R[2], i64({0, 0, 1}));
  EXPECT_TENSOR(R[3], i64({2, 1}));
  // Columns (1, 0), (1, 0), (0, 1): sorted, (0, 1) comes first.
  Tensor Y = i32({1, 1, 0, 0, 0, 1}, {2, 3});
  R = OpTest(OpKind::Unique).in(Y).attr("axis", -1).outputs(4).run();
  EXPECT_TENSOR(R[0], i32({0, 1, 1, 0}, {2, 2}));
  EXPECT_TENSOR(R[1], i64({2, 0}));
  EXPECT_TENSOR(R[2], i64({1, 1, 0}));
  EXPECT_TENSOR(R[3], i64({1, 2}));
  R = OpTest(OpKind::Unique)
          .in(Y)
          .attr("axis", 1)
          .attr("sorted", 0)
          .outputs(4)
          .run();
  EXPECT_TENSOR(R[0], i32({1, 0, 0, 1}, {2, 2}));
  EXPECT_TENSOR(R[1], i64({0, 2}));
  EXPECT_TENSOR(R[2], i64({0, 0, 1}));
  EXPECT_TENSOR(R[3], i64({2, 1}));
  EXPECT_FAILS(OpTest(OpKind::Unique).in(X).attr("axis", 2), "out of range");
}

TEST(RefSort, CumSum) {
  Tensor X = f32({1, 2, 3, 4, 5});
  auto Cum = [&](int Excl, int Rev) {
    return OpTest(OpKind::CumSum)
        .in(X)
        .in(i32({0}, {}))
        .attr("exclusive", Excl)
        .attr("reverse", Rev)
        .run1();
  };
  EXPECT_TENSOR(Cum(0, 0), f32({1, 3, 6, 10, 15}));
  EXPECT_TENSOR(Cum(1, 0), f32({0, 1, 3, 6, 10}));
  EXPECT_TENSOR(Cum(0, 1), f32({15, 14, 12, 9, 5}));
  EXPECT_TENSOR(Cum(1, 1), f32({14, 12, 9, 5, 0}));
  Tensor M = i32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TENSOR(OpTest(OpKind::CumSum).in(M).in(i64({1}, {})).run1(),
                i32({1, 3, 6, 4, 9, 15}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::CumSum).in(M).in(i64({-2})).run1(),
                i32({1, 2, 3, 5, 7, 9}, {2, 3}));
  EXPECT_FAILS(OpTest(OpKind::CumSum).in(M).in(i64({2}, {})), "out of range");
}

TEST(RefEinsum, Basics) {
  Tensor A = f32({1, 2, 3, 4}, {2, 2}), B = f32({5, 6, 7, 8}, {2, 2});
  auto Ein = [](const char *Eq) {
    return OpTest(OpKind::Einsum).attr("equation", Eq);
  };
  EXPECT_TENSOR(Ein("ij,jk->ik").in(A).in(B).run1(),
                f32({19, 22, 43, 50}, {2, 2}));
  EXPECT_TENSOR(Ein("ij, jk").in(A).in(B).run1(),
                f32({19, 22, 43, 50}, {2, 2}));
  EXPECT_TENSOR(Ein("ij->ji").in(A).run1(), f32({1, 3, 2, 4}, {2, 2}));
  // Implicit output: the letters that occur once, alphabetically.
  EXPECT_TENSOR(Ein("ba").in(iota(Shape{2, 3})).run1(),
                f32({0, 3, 1, 4, 2, 5}, {3, 2}));
  EXPECT_TENSOR(Ein("ii").in(A).run1(), f32({5}, {}));
  EXPECT_TENSOR(Ein("ii->i").in(A).run1(), f32({1, 4}));
  EXPECT_TENSOR(Ein("i,i").in(f32({1, 2, 3})).in(f32({4, 5, 6})).run1(),
                f32({32}, {}));
  EXPECT_TENSOR(Ein("i,j->ij").in(f32({1, 2})).in(f32({3, 4, 5})).run1(),
                f32({3, 4, 5, 6, 8, 10}, {2, 3}));
  EXPECT_TENSOR(Ein("ij->").in(A).run1(), f32({10}, {}));
  EXPECT_TENSOR(Ein("ij->i").in(A).run1(), f32({3, 7}));
  EXPECT_TENSOR(Ein("ij,jk->ik")
                    .in(i64({1, 2, 3, 4}, {2, 2}))
                    .in(i64({5, 6, 7, 8}, {2, 2}))
                    .run1(),
                i64({19, 22, 43, 50}, {2, 2}));
}

TEST(RefEinsum, BatchesAndEllipsis) {
  Tensor A = iota(Shape{2, 2, 2}), B = f32({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2});
  EXPECT_TENSOR(OpTest(OpKind::Einsum)
                    .in(A)
                    .in(B)
                    .attr("equation", "bij,bjk->bik")
                    .run1(),
                f32({0, 1, 2, 3, 8, 10, 12, 14}, {2, 2, 2}));
  // The ellipsis broadcasts: a batch of matrices times one matrix.
  EXPECT_TENSOR(OpTest(OpKind::Einsum)
                    .in(A)
                    .in(f32({0, 1, 1, 0}, {2, 2}))
                    .attr("equation", "...ij,jk->...ik")
                    .run1(),
                f32({1, 0, 3, 2, 5, 4, 7, 6}, {2, 2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Einsum)
                    .in(A)
                    .in(f32({1, 1}, {1, 2}))
                    .attr("equation", "...j,...j")
                    .run1(),
                f32({1, 5, 9, 13}, {2, 2}));
  // Batch diagonal.
  EXPECT_TENSOR(
      OpTest(OpKind::Einsum).in(A).attr("equation", "...ii->...i").run1(),
      f32({0, 3, 4, 7}, {2, 2}));
}

TEST(RefEinsum, Errors) {
  Tensor A = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_FAILS(OpTest(OpKind::Einsum)
                   .in(A)
                   .in(f32({1, 2, 3}, {3, 1}))
                   .attr("equation", "ij,jk->ik"),
               "label 'j'");
  EXPECT_FAILS(OpTest(OpKind::Einsum).in(A).attr("equation", "i1"),
               "invalid character");
  EXPECT_FAILS(OpTest(OpKind::Einsum).in(A).attr("equation", "ijk"), "rank");
  EXPECT_FAILS(OpTest(OpKind::Einsum).in(A).attr("equation", "ij->k"),
               "output label 'k'");
  EXPECT_FAILS(OpTest(OpKind::Einsum).in(A).attr("equation", "ij->ii"),
               "repeats");
  EXPECT_FAILS(OpTest(OpKind::Einsum).in(A).in(A).attr("equation", "ij"),
               "input terms");
}

TEST(RefBlocks, DepthToSpace) {
  Tensor X = iota(Shape{1, 8, 1, 1});
  EXPECT_TENSOR(OpTest(OpKind::DepthToSpace).in(X).attr("blocksize", 2).run1(),
                f32({0, 2, 4, 6, 1, 3, 5, 7}, {1, 2, 2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::DepthToSpace)
                    .in(X)
                    .attr("blocksize", 2)
                    .attr("mode", "CRD")
                    .run1(),
                f32({0, 1, 2, 3, 4, 5, 6, 7}, {1, 2, 2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::DepthToSpace)
                    .in(iota(Shape{1, 4, 1, 2}, DType::I64))
                    .attr("blocksize", 2)
                    .run1(),
                i64({0, 2, 1, 3, 4, 6, 5, 7}, {1, 1, 2, 4}));
  EXPECT_FAILS(OpTest(OpKind::DepthToSpace)
                   .in(iota(Shape{1, 6, 1, 1}))
                   .attr("blocksize", 2),
               "divisible");
}

TEST(RefBlocks, SpaceToDepth) {
  // The inverse of DepthToSpace in DCR mode.
  EXPECT_TENSOR(OpTest(OpKind::SpaceToDepth)
                    .in(i64({0, 2, 1, 3, 4, 6, 5, 7}, {1, 1, 2, 4}))
                    .attr("blocksize", 2)
                    .run1(),
                iota(Shape{1, 4, 1, 2}, DType::I64));
  EXPECT_TENSOR(OpTest(OpKind::SpaceToDepth)
                    .in(iota(Shape{1, 1, 2, 2}))
                    .attr("blocksize", 2)
                    .run1(),
                iota(Shape{1, 4, 1, 1}));
  EXPECT_FAILS(OpTest(OpKind::SpaceToDepth)
                   .in(iota(Shape{1, 1, 3, 2}))
                   .attr("blocksize", 2),
               "divisible");
}

TEST(RefBlocks, MaxUnpool) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  std::vector<int64_t> K{2, 2};
  Tensor Y = OpTest(OpKind::MaxUnpool)
                 .in(X)
                 .in(i64({5, 7, 13, 15}, {1, 1, 2, 2}))
                 .attr("kernel_shape", K)
                 .attr("strides", K)
                 .run1();
  EXPECT_TENSOR(
      Y, f32({0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}, {1, 1, 4, 4}));
  // output_shape pads the default 4x4 output at the end: the indices keep
  // their 4x4 coordinates, (1, 1) -> 6, (1, 3) -> 8, (3, 1) -> 16, ...
  Tensor Y5 = OpTest(OpKind::MaxUnpool)
                  .in(X)
                  .in(i64({5, 7, 13, 15}, {1, 1, 2, 2}))
                  .in(i64({1, 1, 5, 5}))
                  .attr("kernel_shape", K)
                  .attr("strides", K)
                  .run1();
  ASSERT_EQ(Y5.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(Y5.getFlat(6), 1);
  EXPECT_EQ(Y5.getFlat(8), 2);
  EXPECT_EQ(Y5.getFlat(16), 3);
  EXPECT_EQ(Y5.getFlat(18), 4);
  EXPECT_EQ(Y5.getFlat(0), 0);
  // Padding shrinks the default output: (2 - 1) * 2 + 2 - 1 - 0 = 3.
  EXPECT_EQ(OpTest(OpKind::MaxUnpool)
                .in(f32({7, 8}, {1, 1, 2}))
                .in(i64({0, 2}, {1, 1, 2}))
                .attr("kernel_shape", std::vector<int64_t>{2})
                .attr("strides", std::vector<int64_t>{2})
                .attr("pads", std::vector<int64_t>{1, 0})
                .run1()
                .shape(),
            (Shape{1, 1, 3}));
  EXPECT_FAILS(OpTest(OpKind::MaxUnpool)
                   .in(X)
                   .in(i64({5, 7, 13, 15}, {1, 1, 2, 2}))
                   .in(i64({1, 1, 3, 5}))
                   .attr("kernel_shape", K)
                   .attr("strides", K),
               "smaller than the unpooled shape");
  EXPECT_FAILS(OpTest(OpKind::MaxUnpool)
                   .in(X)
                   .in(i64({5, 7, 13, 16}, {1, 1, 2, 2}))
                   .attr("kernel_shape", K)
                   .attr("strides", K),
               "index 16");
}

} // namespace
