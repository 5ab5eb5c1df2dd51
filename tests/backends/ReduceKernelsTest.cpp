//===- ReduceKernelsTest.cpp - Reference kernels: reductions, softmax ----===//
//
// The Reduce* ops (ONNX examples; keepdims; default, negative and empty axes;
// noop_with_empty_axes; empty sets; integers), ArgMax/ArgMin with
// select_last_index, and Softmax, LogSoftmax, Hardmax along an axis.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cmath>
#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

using Ints = std::vector<int64_t>;
const float Inf = std::numeric_limits<float>::infinity();

/// The ONNX examples' data: 1..12 as [3, 2, 2].
Tensor data() { return iota(Shape{3, 2, 2}, DType::F32, 1); }

/// Reduce op K over Axes (attribute) with keepdims.
Tensor reduce(OpKind K, Tensor X, Ints Axes, int64_t Keep = 1) {
  OpTest T(K);
  T.in(std::move(X)).attr("keepdims", Keep);
  if (!Axes.empty())
    T.attr("axes", Axes);
  return T.run1();
}

TEST(RefReduce, ReduceSum) {
  auto Sum = [](Tensor X, Tensor Axes) {
    return OpTest(OpKind::ReduceSum).in(std::move(X)).constIn(std::move(Axes));
  };
  EXPECT_TENSOR(Sum(data(), i64({1})).run1(),
                f32({4, 6, 12, 14, 20, 22}, {3, 1, 2}));
  EXPECT_TENSOR(Sum(data(), i64({-2})).attr("keepdims", 0).run1(),
                f32({4, 6, 12, 14, 20, 22}, {3, 2}));
  // No axes: everything; noop_with_empty_axes: the identity.
  EXPECT_TENSOR(OpTest(OpKind::ReduceSum).in(data()).run1(),
                f32({78}, {1, 1, 1}));
  EXPECT_TENSOR(Sum(data(), Tensor::empty(Shape{0}, DType::I64))
                    .attr("keepdims", 0)
                    .run1(),
                f32({78}, {}));
  EXPECT_TENSOR(OpTest(OpKind::ReduceSum)
                    .in(data())
                    .attr("noop_with_empty_axes", 1)
                    .run1(),
                data());
  // Integers, a scalar, and an empty set (sum 0).
  EXPECT_TENSOR(Sum(i64({1LL << 60, 1, 2, 3}, {2, 2}), i64({0})).run1(),
                i64({(1LL << 60) + 2, 4}, {1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::ReduceSum).in(f32({5}, {})).run1(),
                f32({5}, {}));
  EXPECT_TENSOR(Sum(Tensor::empty(Shape{2, 0}, DType::F32), i64({1})).run1(),
                f32({0, 0}, {2, 1}));
}

TEST(RefReduce, MeanMaxMinProd) {
  EXPECT_TENSOR(reduce(OpKind::ReduceMean, data(), {1}),
                f32({2, 3, 6, 7, 10, 11}, {3, 1, 2}));
  EXPECT_TENSOR(reduce(OpKind::ReduceMean, data(), {}, 0), f32({6.5f}, {}));
  EXPECT_TENSOR(reduce(OpKind::ReduceMax, data(), {1}),
                f32({3, 4, 7, 8, 11, 12}, {3, 1, 2}));
  EXPECT_TENSOR(reduce(OpKind::ReduceMin, data(), {1}),
                f32({1, 2, 5, 6, 9, 10}, {3, 1, 2}));
  EXPECT_TENSOR(reduce(OpKind::ReduceProd, data(), {1}),
                f32({3, 8, 35, 48, 99, 120}, {3, 1, 2}));
  EXPECT_TENSOR(reduce(OpKind::ReduceMax, data(), {0, 2}, 0), f32({10, 12}));
  // Integer mean truncates; integer max/min are exact.
  EXPECT_TENSOR(reduce(OpKind::ReduceMean, i32({1, 2, -1, -2}, {2, 2}), {1}, 0),
                i32({1, -1}));
  EXPECT_TENSOR(
      reduce(OpKind::ReduceMax, i64({(1LL << 60) + 1, 1LL << 60}), {0}),
      i64({(1LL << 60) + 1}));
  // Empty sets: max -inf, min +inf, product 1.
  Tensor E = Tensor::empty(Shape{2, 0}, DType::F32);
  EXPECT_TENSOR(reduce(OpKind::ReduceMax, E, {1}), f32({-Inf, -Inf}, {2, 1}));
  EXPECT_TENSOR(reduce(OpKind::ReduceMin, E, {1}, 0), f32({Inf, Inf}));
  EXPECT_TENSOR(reduce(OpKind::ReduceProd, E, {1}, 0), f32({1, 1}));
}

TEST(RefReduce, NormsAndLogs) {
  EXPECT_TENSOR(reduce(OpKind::ReduceL1, f32({-1, 2, 3, -4}, {2, 2}), {1}),
                f32({3, 7}, {2, 1}));
  EXPECT_TENSOR(reduce(OpKind::ReduceL2, data(), {2}),
                f32({float(std::sqrt(5.0)), 5, float(std::sqrt(61.0)),
                     float(std::sqrt(113.0)), float(std::sqrt(181.0)),
                     float(std::sqrt(265.0))},
                    {3, 2, 1}));
  EXPECT_TENSOR(
      reduce(OpKind::ReduceSumSquare, f32({1, 2, 3, 4}, {2, 2}), {-1}, 0),
      f32({5, 25}));
  EXPECT_TENSOR(reduce(OpKind::ReduceSumSquare, i64({3, -4}), {0}), i64({25}));
  EXPECT_TENSOR(reduce(OpKind::ReduceLogSum, f64({1, 2, 3, 4}, {2, 2}), {1}, 0),
                f64({std::log(3.0), std::log(7.0)}));
  EXPECT_TENSOR(
      reduce(OpKind::ReduceLogSum, iota(Shape{3, 4, 5}, DType::F32, 1, 0),
             {2, 1}),
      f32({float(std::log(20.0)), float(std::log(20.0)), float(std::log(20.0))},
          {3, 1, 1}));
  // Stable for large inputs: log(e^1000 + e^1000) = 1000 + log 2.
  EXPECT_TENSOR(
      reduce(OpKind::ReduceLogSumExp, f64({0, 0, 1000, 1000}, {2, 2}), {1}, 0),
      f64({std::log(2.0), 1000 + std::log(2.0)}));
}

TEST(RefReduce, ArgMaxArgMin) {
  Tensor X = f32({2, 1, 3, 10}, {2, 2});
  auto Arg = [](OpKind K, Tensor X, int64_t Axis, int64_t Keep = 1,
                int64_t Last = 0) {
    return OpTest(K)
        .in(std::move(X))
        .attr("axis", Axis)
        .attr("keepdims", Keep)
        .attr("select_last_index", Last)
        .run1();
  };
  EXPECT_TENSOR(Arg(OpKind::ArgMax, X, 0), i64({1, 1}, {1, 2}));
  EXPECT_TENSOR(Arg(OpKind::ArgMax, X, 1), i64({0, 1}, {2, 1}));
  EXPECT_TENSOR(Arg(OpKind::ArgMax, X, -1, 0), i64({0, 1}));
  EXPECT_TENSOR(Arg(OpKind::ArgMin, X, 1), i64({1, 0}, {2, 1}));
  // Ties: the first index unless select_last_index.
  Tensor T = f32({2, 2, 3, 10}, {2, 2});
  EXPECT_TENSOR(Arg(OpKind::ArgMax, T, 1), i64({0, 1}, {2, 1}));
  EXPECT_TENSOR(Arg(OpKind::ArgMax, T, 1, 1, 1), i64({1, 1}, {2, 1}));
  EXPECT_TENSOR(Arg(OpKind::ArgMin, T, 1, 0, 1), i64({1, 0}));
  EXPECT_TENSOR(Arg(OpKind::ArgMin, i32({5, -3, -3}), 0, 0), i64({1}, {}));
  EXPECT_FAILS(OpTest(OpKind::ArgMax)
                   .in(Tensor::empty(Shape{2, 0}, DType::F32))
                   .attr("axis", 1),
               "");
}

TEST(RefSoftmax, Softmax) {
  // The ONNX example: [-1, 0, 1].
  EXPECT_TENSOR(OpTest(OpKind::Softmax).in(f32({-1, 0, 1}, {1, 3})).run1(),
                f32({0.09003058f, 0.24472848f, 0.66524094f}, {1, 3}));
  // Along axis 0: each column is [a, a + 3] -> [1, e^3] / (1 + e^3).
  double E3 = std::exp(3.0);
  float Lo = float(1 / (1 + E3)), Hi = float(E3 / (1 + E3));
  EXPECT_TENSOR(
      OpTest(OpKind::Softmax).in(iota(Shape{2, 3})).attr("axis", 0).run1(),
      f32({Lo, Lo, Lo, Hi, Hi, Hi}, {2, 3}));
  // Large values are stable.
  EXPECT_TENSOR(
      OpTest(OpKind::Softmax).in(f64({1000, 1001})).run1(),
      f64({1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0))}));
  EXPECT_TENSOR(
      OpTest(OpKind::Softmax).in(Tensor::empty(Shape{0, 3}, DType::F32)).run1(),
      Tensor::empty(Shape{0, 3}, DType::F32));
}

TEST(RefSoftmax, LogSoftmax) {
  EXPECT_TENSOR(OpTest(OpKind::LogSoftmax).in(f32({-1, 0, 1}, {1, 3})).run1(),
                f32({-2.40760596f, -1.40760596f, -0.40760596f}, {1, 3}));
  EXPECT_TENSOR(
      OpTest(OpKind::LogSoftmax)
          .in(f64({0, 5, 0, 5}, {2, 2}))
          .attr("axis", -2)
          .run1(),
      f64({-std::log(2.0), -std::log(2.0), -std::log(2.0), -std::log(2.0)},
          {2, 2}));
}

TEST(RefSoftmax, Hardmax) {
  // The ONNX example, and ties (the first maximum wins).
  EXPECT_TENSOR(
      OpTest(OpKind::Hardmax)
          .in(f32({3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3}, {4, 4}))
          .run1(),
      f32({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, {4, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Hardmax).in(f32({2, 2, 2, 2})).run1(),
                f32({1, 0, 0, 0}));
  EXPECT_TENSOR(OpTest(OpKind::Hardmax)
                    .in(f32({1, 3, 2, 0}, {2, 2}))
                    .attr("axis", 0)
                    .run1(),
                f32({0, 1, 1, 0}, {2, 2}));
}

} // namespace
