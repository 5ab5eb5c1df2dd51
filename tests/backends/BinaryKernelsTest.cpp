//===- BinaryKernelsTest.cpp - Reference kernels: binary and variadic ----===//
//
// Arithmetic, comparisons, logical ops and Where with numpy broadcasting
// (rank 0 to 4, zero-size), integer semantics (truncating Div, both Mod
// conventions, wrap-around, errors on division by zero) and the ONNX spec
// examples.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

Tensor binary(OpKind K, Tensor A, Tensor B) {
  return OpTest(K).in(std::move(A)).in(std::move(B)).run1();
}

TEST(RefBinary, AddBroadcasting) {
  // [2, 3] + [3].
  EXPECT_TENSOR(
      binary(OpKind::Add, f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({10, 20, 30})),
      f32({11, 22, 33, 14, 25, 36}, {2, 3}));
  // [2, 1] + [1, 3] -> [2, 3].
  EXPECT_TENSOR(
      binary(OpKind::Add, f32({1, 2}, {2, 1}), f32({10, 20, 30}, {1, 3})),
      f32({11, 21, 31, 12, 22, 32}, {2, 3}));
  // Scalar + tensor, and a scalar result.
  EXPECT_TENSOR(binary(OpKind::Add, f32({1}, {}), f32({1, 2})), f32({2, 3}));
  EXPECT_TENSOR(binary(OpKind::Add, f32({1}, {}), f32({2}, {})), f32({3}, {}));
  // Zero-size broadcast: [0, 3] + [3].
  EXPECT_TENSOR(binary(OpKind::Add, Tensor::empty(Shape{0, 3}, DType::F32),
                       f32({1, 2, 3})),
                Tensor::empty(Shape{0, 3}, DType::F32));
}

TEST(RefBinary, AddRank4Broadcast) {
  // A [2, 1, 3, 1] + B [1, 4] -> [2, 1, 3, 4]: out[i,0,k,l] = A[i,k] + B[l]
  // with A[i,k] = 3i + k and B[l] = 100 l.
  Tensor A = iota(Shape{2, 1, 3, 1});
  Tensor B = iota(Shape{1, 4}, DType::F32, 0, 100);
  std::vector<float> Want;
  for (int I = 0; I < 2; ++I)
    for (int K = 0; K < 3; ++K)
      for (int L = 0; L < 4; ++L)
        Want.push_back(3 * I + K + 100 * L);
  EXPECT_TENSOR(binary(OpKind::Add, A, B), f32(Want, {2, 1, 3, 4}));
  // A non-contiguous operand: a transposed [3, 2] view plus [2].
  Tensor T = iota(Shape{2, 3}).permute({1, 0});
  EXPECT_TENSOR(binary(OpKind::Add, T, f32({10, 20})),
                f32({10, 23, 11, 24, 12, 25}, {3, 2}));
}

TEST(RefBinary, IntegerWrapAround) {
  EXPECT_TENSOR(binary(OpKind::Add, i32({INT32_MAX, 1}), i32({1, 2})),
                i32({INT32_MIN, 3}));
  EXPECT_TENSOR(binary(OpKind::Sub, u8({0, 5}), u8({1, 3})), u8({255, 2}));
  EXPECT_TENSOR(binary(OpKind::Mul, i64({3, -4}), i64({-5, 6})),
                i64({-15, -24}));
  // i64 stays exact beyond 2^53.
  EXPECT_TENSOR(binary(OpKind::Add, i64({(1LL << 53)}), i64({1})),
                i64({(1LL << 53) + 1}));
}

TEST(RefBinary, SubMul) {
  EXPECT_TENSOR(binary(OpKind::Sub, f32({5, 3}), f32({1}, {})), f32({4, 2}));
  EXPECT_TENSOR(
      binary(OpKind::Mul, f32({1, 2, 3, 4}, {2, 2}), f32({2, 3}, {2, 1})),
      f32({2, 4, 9, 12}, {2, 2}));
  EXPECT_TENSOR(binary(OpKind::Mul, f64({0.5}), f64({-4})), f64({-2}));
}

TEST(RefBinary, Div) {
  EXPECT_TENSOR(binary(OpKind::Div, f32({3, 8}), f32({2, -4})),
                f32({1.5f, -2}));
  EXPECT_TENSOR(binary(OpKind::Div, f32({1, -1, 0}), f32({0, 0, 0})),
                f32({Inf, -Inf, NaN}));
  // Integer division truncates toward zero.
  EXPECT_TENSOR(binary(OpKind::Div, i32({7, -7, 7, -7, INT32_MIN}),
                       i32({2, 2, -2, -2, -1})),
                i32({3, -3, -3, 3, INT32_MIN}));
  EXPECT_FAILS(OpTest(OpKind::Div).in(i32({1, 2})).in(i32({1, 0})),
               "division by zero");
}

TEST(RefBinary, Pow) {
  // ONNX examples.
  EXPECT_TENSOR(binary(OpKind::Pow, f32({1, 2, 3}), f32({4, 5, 6})),
                f32({1, 32, 729}));
  EXPECT_TENSOR(
      binary(OpKind::Pow, f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({2}, {})),
      f32({1, 4, 9, 16, 25, 36}, {2, 3}));
  EXPECT_TENSOR(
      binary(OpKind::Pow, f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2, 3})),
      f32({1, 4, 27, 4, 25, 216}, {2, 3}));
  // Mixed types: the result has X's type.
  EXPECT_TENSOR(binary(OpKind::Pow, f32({1, 2, 3}), i64({4, 5, 6})),
                f32({1, 32, 729}));
  EXPECT_TENSOR(binary(OpKind::Pow, i64({2, 3}), i64({3, 2})), i64({8, 9}));
  EXPECT_TENSOR(binary(OpKind::Pow, i32({2, 1, -1}), i32({-1, -2, -3})),
                i32({0, 1, -1}));
  EXPECT_TENSOR(binary(OpKind::Pow, i64({3}), f32({2.5f})), i64({15}));
  EXPECT_TENSOR(binary(OpKind::Pow, f32({-8, 0}), f32({1.0f / 3, 0})),
                f32({NaN, 1}));
}

TEST(RefBinary, PowOfTwoIsTheRoundedDoublePow) {
  // f32 x ** 2 is computed as x * x: bit for bit the double pow rounded,
  // at the edges too (signed zeros, infinities, NaN, overflow, subnormal
  // squares that flush to zero or stay subnormal), by a scalar exponent of
  // any float dtype.
  std::vector<float> Xs = {0.0f,   -0.0f, 1.5f,    -3.25f, 1e20f,  -1e20f,
                           1e-23f, 3e-20f, 1.7e19f, 1.2345678f, Inf, -Inf,
                           NaN,    -7.0f};
  std::vector<float> Want;
  for (float X : Xs)
    Want.push_back(static_cast<float>(std::pow(double(X), 2.0)));
  int64_t N = static_cast<int64_t>(Xs.size());
  EXPECT_TENSOR(binary(OpKind::Pow, f32(Xs, {2, N / 2}), f32({2}, {})),
                f32(Want, {2, N / 2}));
  EXPECT_TENSOR(binary(OpKind::Pow, f32(Xs), f64({2}, {1})), f32(Want));
}

TEST(RefBinary, Mod) {
  // ONNX examples: fmod = 0 takes the divisor's sign, fmod = 1 the
  // dividend's.
  Tensor X = i32({-4, 7, 5, 4, -7, 8}), Y = i32({2, -3, 8, -2, 3, 5});
  EXPECT_TENSOR(binary(OpKind::Mod, X, Y), i32({0, -2, 5, 0, 2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::Mod).in(X).in(Y).attr("fmod", 1).run1(),
                i32({0, 1, 5, 0, -1, 3}));
  EXPECT_TENSOR(OpTest(OpKind::Mod)
                    .in(f32({-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f}))
                    .in(f32({2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f}))
                    .attr("fmod", 1)
                    .run1(),
                f32({-0.1f, 0.4f, 5, 0.1f, -0.4f, 3}));
  // Broadcast: arange(6) % 4 with a scalar divisor; unsigned.
  EXPECT_TENSOR(
      binary(OpKind::Mod, u8({0, 1, 2, 3, 4, 5}, {2, 3}), u8({4}, {})),
      u8({0, 1, 2, 3, 0, 1}, {2, 3}));
  EXPECT_FAILS(OpTest(OpKind::Mod).in(i64({1})).in(i64({0})), "modulo by zero");
  EXPECT_FAILS(OpTest(OpKind::Mod).in(f32({1})).in(f32({2})), "fmod");
}

TEST(RefBinary, PRelu) {
  EXPECT_TENSOR(
      binary(OpKind::PRelu, f32({-1, 2, -3, 4}, {2, 2}), f32({0.5f, 0.25f})),
      f32({-0.5f, 2, -1.5f, 4}, {2, 2}));
  EXPECT_TENSOR(binary(OpKind::PRelu, f32({-2, 3}), f32({0.1f}, {})),
                f32({-0.2f, 3}));
  // Per-channel slope [C, 1, 1] on [N, C, H, W].
  Tensor X = f32({-1, -1, -1, -1, 1, -2, 3, -4}, {1, 2, 2, 2});
  EXPECT_TENSOR(binary(OpKind::PRelu, X, f32({2, 3}, {2, 1, 1})),
                f32({-2, -2, -2, -2, 1, -6, 3, -12}, {1, 2, 2, 2}));
}

TEST(RefBinary, BitShift) {
  // ONNX examples.
  EXPECT_TENSOR(OpTest(OpKind::BitShift)
                    .in(u8({16, 4, 1}))
                    .in(u8({1, 2, 3}))
                    .attr("direction", "RIGHT")
                    .run1(),
                u8({8, 1, 0}));
  EXPECT_TENSOR(OpTest(OpKind::BitShift)
                    .in(make<uint32_t>({16, 4, 1}))
                    .in(make<uint32_t>({1, 2, 3}))
                    .attr("direction", "LEFT")
                    .run1(),
                make<uint32_t>({32, 16, 8}));
  // Shifting by the bit width or more gives 0.
  EXPECT_TENSOR(OpTest(OpKind::BitShift)
                    .in(make<uint64_t>({1, 1}))
                    .in(make<uint64_t>({63, 64}))
                    .attr("direction", "LEFT")
                    .run1(),
                make<uint64_t>({1ULL << 63, 0}));
}

TEST(RefBinary, MaxMinSumMean) {
  // ONNX examples.
  Tensor A = f32({3, 2, 1}), B = f32({1, 4, 4}), C = f32({2, 5, 3});
  EXPECT_TENSOR(OpTest(OpKind::Max).in(A).in(B).in(C).run1(), f32({3, 5, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Min).in(A).in(B).in(C).run1(), f32({1, 2, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Sum).in(A).in(B).in(C).run1(), f32({6, 11, 8}));
  EXPECT_TENSOR(OpTest(OpKind::Mean).in(A).in(B).in(C).run1(),
                f32({2, 11.0f / 3, 8.0f / 3}));
  // One input.
  EXPECT_TENSOR(OpTest(OpKind::Max).in(A).run1(), A);
  EXPECT_TENSOR(OpTest(OpKind::Sum).in(A).run1(), A);
  // Broadcasting and NaN propagation.
  EXPECT_TENSOR(
      OpTest(OpKind::Max).in(f32({1, 5, 3, 2}, {2, 2})).in(f32({2})).run1(),
      f32({2, 5, 3, 2}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Min).in(f32({1, NaN})).in(f32({NaN, 0})).run1(),
                f32({NaN, NaN}));
  EXPECT_TENSOR(
      OpTest(OpKind::Mean).in(f32({1, 2}, {2, 1})).in(f32({3, 4})).run1(),
      f32({2, 2.5f, 2.5f, 3}, {2, 2}));
  // Integers.
  EXPECT_TENSOR(OpTest(OpKind::Max).in(i64({-5, 9})).in(i64({3, 2})).run1(),
                i64({3, 9}));
  EXPECT_TENSOR(OpTest(OpKind::Min).in(u8({7, 1})).in(u8({3, 200})).run1(),
                u8({3, 1}));
}

TEST(RefBinary, Comparisons) {
  Tensor X = f32({1, 2, 3}), Y = f32({3, 2, 1});
  EXPECT_TENSOR(binary(OpKind::Equal, X, Y), boolean({0, 1, 0}));
  EXPECT_TENSOR(binary(OpKind::Less, X, Y), boolean({1, 0, 0}));
  EXPECT_TENSOR(binary(OpKind::LessOrEqual, X, Y), boolean({1, 1, 0}));
  EXPECT_TENSOR(binary(OpKind::Greater, X, Y), boolean({0, 0, 1}));
  EXPECT_TENSOR(binary(OpKind::GreaterOrEqual, X, Y), boolean({0, 1, 1}));
  // Broadcasting against a scalar; NaN compares false.
  EXPECT_TENSOR(
      binary(OpKind::Less, f32({1, 2, 3, NaN}, {2, 2}), f32({2.5f}, {})),
      boolean({1, 1, 0, 0}, {2, 2}));
  EXPECT_TENSOR(binary(OpKind::Equal, f32({NaN}), f32({NaN})), boolean({0}));
  // i64 compares exactly (2^53 + 1 is not 2^53).
  EXPECT_TENSOR(
      binary(OpKind::Equal, i64({(1LL << 53) + 1, 4}), i64({1LL << 53, 4})),
      boolean({0, 1}));
  EXPECT_TENSOR(binary(OpKind::Equal, boolean({1, 0}), boolean({1, 1})),
                boolean({1, 0}));
  EXPECT_TENSOR(binary(OpKind::GreaterOrEqual, i32({-1, 5}), i32({-1, 6})),
                boolean({1, 0}));
}

TEST(RefBinary, Logical) {
  Tensor A = boolean({0, 0, 1, 1}, {2, 2}), B = boolean({0, 1});
  EXPECT_TENSOR(binary(OpKind::And, A, B), boolean({0, 0, 0, 1}, {2, 2}));
  EXPECT_TENSOR(binary(OpKind::Or, A, B), boolean({0, 1, 1, 1}, {2, 2}));
  EXPECT_TENSOR(binary(OpKind::Xor, A, B), boolean({0, 1, 1, 0}, {2, 2}));
}

TEST(RefBinary, Where) {
  // ONNX example.
  EXPECT_TENSOR(OpTest(OpKind::Where)
                    .in(boolean({1, 0, 1, 1}, {2, 2}))
                    .in(f32({1, 2, 3, 4}, {2, 2}))
                    .in(f32({9, 8, 7, 6}, {2, 2}))
                    .run1(),
                f32({1, 8, 3, 4}, {2, 2}));
  // Three-way broadcast: cond [2, 1], X scalar, Y [1, 3].
  EXPECT_TENSOR(OpTest(OpKind::Where)
                    .in(boolean({1, 0}, {2, 1}))
                    .in(i64({-1}, {}))
                    .in(i64({7, 8, 9}, {1, 3}))
                    .run1(),
                i64({-1, -1, -1, 7, 8, 9}, {2, 3}));
}

} // namespace
