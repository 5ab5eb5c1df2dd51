//===- GatherKernelsTest.cpp - Reference kernels: indexing and constants -===//
//
// Gather and GatherElements (ONNX examples, negative and out-of-range
// indices, scalar indices), Constant, ConstantOfShape, Range and Dropout
// (identity at inference, a reproducible seeded mask in training).
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cmath>

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefGather, Gather) {
  Tensor D = f32({1, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::Gather).in(D).in(i64({0, 1, 1, 2}, {2, 2})).run1(),
      f32({1, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}, {2, 2, 2}));
  Tensor D3 = f32({1, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}, {3, 3});
  EXPECT_TENSOR(OpTest(OpKind::Gather)
                    .in(D3)
                    .in(i32({0, 2}, {1, 2}))
                    .attr("axis", 1)
                    .run1(),
                f32({1, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}, {3, 1, 2}));
  // Negative indices count from the end; a scalar index drops the axis.
  EXPECT_TENSOR(OpTest(OpKind::Gather)
                    .in(iota(Shape{10}, DType::I64))
                    .in(i64({0, -9, -10}))
                    .run1(),
                i64({0, 1, 0}));
  EXPECT_TENSOR(OpTest(OpKind::Gather).in(D).in(i64({1}, {})).run1(),
                f32({2.3f, 3.4f}));
  EXPECT_TENSOR(
      OpTest(OpKind::Gather).in(D).in(i64({-1}, {})).attr("axis", -1).run1(),
      f32({1.2f, 3.4f, 5.7f}));
  EXPECT_TENSOR(OpTest(OpKind::Gather)
                    .in(D)
                    .in(Tensor::empty(Shape{0}, DType::I64))
                    .run1(),
                Tensor::empty(Shape{0, 2}, DType::F32));
  EXPECT_FAILS(OpTest(OpKind::Gather).in(D).in(i64({3})),
               "index 3 is out of range");
  EXPECT_FAILS(OpTest(OpKind::Gather).in(D).in(i64({-4})),
               "index -4 is out of range");
}

TEST(RefGather, GatherElements) {
  EXPECT_TENSOR(OpTest(OpKind::GatherElements)
                    .in(f32({1, 2, 3, 4}, {2, 2}))
                    .in(i64({0, 0, 1, 0}, {2, 2}))
                    .attr("axis", 1)
                    .run1(),
                f32({1, 1, 4, 3}, {2, 2}));
  Tensor D = iota(Shape{3, 3}, DType::F32, 1);
  EXPECT_TENSOR(OpTest(OpKind::GatherElements)
                    .in(D)
                    .in(i32({1, 2, 0, 2, 0, 0}, {2, 3}))
                    .run1(),
                f32({4, 8, 3, 7, 2, 3}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::GatherElements)
                    .in(D)
                    .in(i64({-1, -2, 0, -2, 0, 0}, {2, 3}))
                    .run1(),
                f32({7, 5, 3, 4, 2, 3}, {2, 3}));
  EXPECT_FAILS(OpTest(OpKind::GatherElements).in(D).in(i64({3}, {1, 1})),
               "out of range");
}

TEST(RefConstant, ConstantOfShape) {
  EXPECT_TENSOR(OpTest(OpKind::ConstantOfShape).constIn(i64({2, 3})).run1(),
                Tensor::empty(Shape{2, 3}, DType::F32));
  EXPECT_TENSOR(OpTest(OpKind::ConstantOfShape)
                    .constIn(i64({3}))
                    .attr("value", i32({5}))
                    .run1(),
                i32({5, 5, 5}));
  // An empty shape gives a scalar; a zero extent an empty tensor.
  EXPECT_TENSOR(OpTest(OpKind::ConstantOfShape)
                    .constIn(Tensor::empty(Shape{0}, DType::I64))
                    .attr("value", f64({2.5}))
                    .run1(),
                f64({2.5}, {}));
  EXPECT_TENSOR(OpTest(OpKind::ConstantOfShape).in(i64({0, 4})).run1(),
                Tensor::empty(Shape{0, 4}, DType::F32));
}

TEST(RefConstant, Constant) {
  EXPECT_TENSOR(
      OpTest(OpKind::Constant).attr("value", i64({1, 2}, {2, 1})).run1(),
      i64({1, 2}, {2, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Constant).attr("value_float", 2.5f).run1(),
                f32({2.5f}, {}));
  EXPECT_TENSOR(OpTest(OpKind::Constant)
                    .attr("value_floats", std::vector<float>{1, 2})
                    .run1(),
                f32({1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Constant).attr("value_int", int64_t(-3)).run1(),
                i64({-3}, {}));
  EXPECT_TENSOR(OpTest(OpKind::Constant)
                    .attr("value_ints", std::vector<int64_t>{4, 5, 6})
                    .run1(),
                i64({4, 5, 6}));
}

TEST(RefConstant, Range) {
  auto R = [](Tensor S, Tensor L, Tensor D) {
    return OpTest(OpKind::Range)
        .in(std::move(S))
        .in(std::move(L))
        .in(std::move(D))
        .run1();
  };
  // ONNX examples.
  EXPECT_TENSOR(R(i32({3}, {}), i32({9}, {}), i32({3}, {})), i32({3, 6}));
  EXPECT_TENSOR(R(i64({10}, {}), i64({4}, {}), i64({-2}, {})), i64({10, 8, 6}));
  EXPECT_TENSOR(R(f32({1}, {}), f32({2}, {}), f32({0.3f}, {})),
                f32({1, 1.3f, 1.6f, 1.9f}));
  EXPECT_TENSOR(R(f64({5}, {}), f64({1}, {}), f64({1}, {})),
                Tensor::empty(Shape{0}, DType::F64));
  EXPECT_TENSOR(
      R(i64({(1LL << 60)}, {}), i64({(1LL << 60) + 2}, {}), i64({1}, {})),
      i64({1LL << 60, (1LL << 60) + 1}));
  EXPECT_FAILS(
      OpTest(OpKind::Range).in(i64({0}, {})).in(i64({5}, {})).in(i64({0}, {})),
      "");
}

TEST(RefDropout, InferenceIsIdentity) {
  Tensor X = f32({1, -2, 3, 4}, {2, 2});
  auto Outs = OpTest(OpKind::Dropout).in(X).outputs(2).run();
  EXPECT_TENSOR(Outs[0], X);
  EXPECT_TENSOR(Outs[1], boolean({1, 1, 1, 1}, {2, 2}));
  // training_mode false with a ratio given: still the identity.
  EXPECT_TENSOR(OpTest(OpKind::Dropout)
                    .in(X)
                    .in(f32({0.9f}, {}))
                    .in(boolean({0}, {}))
                    .run1(),
                X);
  // Training with ratio 0 is the identity too.
  EXPECT_TENSOR(OpTest(OpKind::Dropout)
                    .in(X)
                    .in(f32({0}, {}))
                    .in(boolean({1}, {}))
                    .run1(),
                X);
}

TEST(RefDropout, TrainingMaskIsSeededAndScaled) {
  Tensor X = iota(Shape{1000}, DType::F32, 1, 0); // all ones
  auto Run = [&](int64_t Seed) {
    return OpTest(OpKind::Dropout)
        .in(X)
        .in(f32({0.5f}, {}))
        .in(boolean({1}, {}))
        .attr("seed", Seed)
        .outputs(2)
        .run();
  };
  auto A = Run(7), B = Run(7), C = Run(8);
  EXPECT_TENSOR(A[0], B[0]); // Same seed, same mask.
  EXPECT_FALSE(A[1].equals(C[1]));
  int64_t Kept = 0;
  for (int64_t I = 0; I < 1000; ++I) {
    bool Keep = A[1].data<bool>()[I];
    Kept += Keep;
    // Kept values scale by 1 / (1 - ratio) = 2; dropped ones are 0.
    EXPECT_EQ(A[0].getFlat(I), Keep ? 2.0 : 0.0);
  }
  EXPECT_GT(Kept, 400);
  EXPECT_LT(Kept, 600);
  // The ratio must lie in [0, 1).
  EXPECT_FAILS(
      OpTest(OpKind::Dropout).in(X).in(f32({1}, {})).in(boolean({1}, {})),
      "ratio");
}

} // namespace
