//===- CastLinalgKernelsTest.cpp - Reference kernels: casts, MatMul, Gemm -===//
//
// Cast and CastLike between float, integer, bool, f16 and bf16 (truncation,
// saturation, rounding to nearest even); MatMul with 1-D operands, batch
// broadcasting, K = 0 and integers; Gemm with transposes, alpha/beta and
// every shape of C.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

/// Cast X to ONNX element type number To.
Tensor cast(Tensor X, int64_t To) {
  return OpTest(OpKind::Cast).in(std::move(X)).attr("to", To).run1();
}

TEST(RefCast, FloatToInt) {
  // Truncation toward zero.
  EXPECT_TENSOR(cast(f32({1.9f, -1.9f, 0.5f, -0.5f}), 6), i32({1, -1, 0, 0}));
  // Out of range saturates; NaN becomes 0.
  EXPECT_TENSOR(cast(f32({1e10f, -1e10f, NaN}), 6),
                i32({INT32_MAX, INT32_MIN, 0}));
  EXPECT_TENSOR(cast(f32({300, -5, 2.7f}), 2), u8({255, 0, 2}));
  EXPECT_TENSOR(cast(f64({-3.99}), 7), i64({-3}));
}

TEST(RefCast, IntAndBool) {
  EXPECT_TENSOR(cast(i64({1, -2}), 1), f32({1, -2}));
  // Integer narrowing wraps.
  EXPECT_TENSOR(cast(i32({200, -129, 5}), 3), i8({-56, 127, 5}));
  EXPECT_TENSOR(cast(f32({0, 2, -0.0f, NaN}), 9), boolean({0, 1, 0, 1}));
  EXPECT_TENSOR(cast(i64({0, -7}), 9), boolean({0, 1}));
  EXPECT_TENSOR(cast(boolean({1, 0}), 1), f32({1, 0}));
  EXPECT_TENSOR(cast(boolean({1, 0}), 7), i64({1, 0}));
}

TEST(RefCast, HalfAndBFloat16) {
  // 65504 is f16's largest finite value; 70000 overflows to inf; 1e-8 is
  // below half the smallest subnormal (5.96e-8) and rounds to 0.
  Tensor H = cast(f32({1, 65504, 70000, 1e-8f, -2.5f}), 10);
  ASSERT_EQ(H.dtype(), DType::F16);
  EXPECT_TENSOR(H.to(DType::F32), f32({1, 65504, Inf, 0, -2.5f}));
  EXPECT_EQ(H.data<Half>()[0].Bits, 0x3c00);
  // bf16 keeps 7 mantissa bits; ties go to even: 1 + 2^-8 -> 1,
  // 1 + 3 * 2^-8 -> 1 + 2^-6.
  Tensor B = cast(f32({1.00390625f, 1.01171875f, -3}), 16);
  EXPECT_TENSOR(B.to(DType::F32), f32({1, 1.015625f, -3}));
  // And back: f16 -> f32 is exact, f16 -> i32 truncates.
  EXPECT_TENSOR(cast(H, 1), f32({1, 65504, Inf, 0, -2.5f}));
  EXPECT_TENSOR(cast(f32({-2.5f, 7.75f}).to(DType::F16), 6), i32({-2, 7}));
}

TEST(RefCast, ShapesAndErrors) {
  EXPECT_TENSOR(cast(Tensor::empty(Shape{2, 0}, DType::F32), 7),
                Tensor::empty(Shape{2, 0}, DType::I64));
  EXPECT_TENSOR(cast(f32({4.5f}, {}), 11), f64({4.5}, {}));
  EXPECT_TENSOR(cast(iota(Shape{2, 2}).permute({1, 0}), 7),
                i64({0, 2, 1, 3}, {2, 2}));
  // 14 is ONNX's complex64, which nngraph lacks (8, strings: see
  // StringKernelsTest).
  EXPECT_FAILS(OpTest(OpKind::Cast).in(f32({1})).attr("to", int64_t(14)),
               "14");
}

TEST(RefCast, CastLike) {
  EXPECT_TENSOR(
      OpTest(OpKind::CastLike).in(f32({1.5f, -2.5f})).in(i64({0})).run1(),
      i64({1, -2}));
  EXPECT_TENSOR(OpTest(OpKind::CastLike).in(i32({3})).in(f64({0}, {})).run1(),
                f64({3}));
}

TEST(RefLinalg, MatMul2D) {
  Tensor A = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor B = f32({7, 8, 9, 10, 11, 12}, {3, 2});
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(A).in(B).run1(),
                f32({58, 64, 139, 154}, {2, 2}));
  // A transposed (non-contiguous) operand: B^T B = [[251, 278], [278, 308]].
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(B.permute({1, 0})).in(B).run1(),
                f32({251, 278, 278, 308}, {2, 2}));
  // Integers are exact.
  EXPECT_TENSOR(OpTest(OpKind::MatMul)
                    .in(i64({1LL << 40, 1}, {1, 2}))
                    .in(i64({3, 5}, {2, 1}))
                    .run1(),
                i64({(3LL << 40) + 5}, {1, 1}));
}

TEST(RefLinalg, MatMulVectors) {
  Tensor A = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor B = f32({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor V = f32({1, 2, 3});
  // 1-D @ 2-D: [3] @ [3, 2] -> [2].
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(V).in(B).run1(), f32({58, 64}));
  // 2-D @ 1-D: [2, 3] @ [3] -> [2].
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(A).in(f32({1, 1, 1})).run1(),
                f32({6, 15}));
  // 1-D @ 1-D -> scalar.
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(V).in(f32({4, 5, 6})).run1(),
                f32({32}, {}));
  // 1-D @ batched 3-D: [2] @ [2, 2, 1] -> [2, 1].
  EXPECT_TENSOR(OpTest(OpKind::MatMul)
                    .in(f32({1, 10}))
                    .in(f32({1, 2, 3, 4}, {2, 2, 1}))
                    .run1(),
                f32({21, 43}, {2, 1}));
}

TEST(RefLinalg, MatMulBatchBroadcast) {
  // A [2, 1, 2, 2] = {I, 2I}, B [3, 2, 2] = {B0, B1, B2}:
  // out[i, j] = (i + 1) * B_j, shape [2, 3, 2, 2].
  Tensor A = f32({1, 0, 0, 1, 2, 0, 0, 2}, {2, 1, 2, 2});
  Tensor B = f32({1, 2, 3, 4, 0, 1, 1, 0, 1, 1, 1, 1}, {3, 2, 2});
  std::vector<float> Bv = {1, 2, 3, 4, 0, 1, 1, 0, 1, 1, 1, 1}, Want;
  for (int I = 0; I < 2; ++I)
    for (float V : Bv)
      Want.push_back((I + 1) * V);
  EXPECT_TENSOR(OpTest(OpKind::MatMul).in(A).in(B).run1(),
                f32(Want, {2, 3, 2, 2}));
  // K = 0 gives zeros; a zero batch gives an empty result.
  EXPECT_TENSOR(OpTest(OpKind::MatMul)
                    .in(Tensor::empty(Shape{2, 0}, DType::F32))
                    .in(Tensor::empty(Shape{0, 3}, DType::F32))
                    .run1(),
                f32({0, 0, 0, 0, 0, 0}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::MatMul)
                    .in(Tensor::empty(Shape{0, 2, 3}, DType::F32))
                    .in(Tensor::empty(Shape{3, 4}, DType::F32))
                    .run1(),
                Tensor::empty(Shape{0, 2, 4}, DType::F32));
}

TEST(RefLinalg, Gemm) {
  Tensor A = f32({1, 2, 3, 4}, {2, 2}), B = f32({5, 6, 7, 8}, {2, 2});
  EXPECT_TENSOR(OpTest(OpKind::Gemm).in(A).in(B).run1(),
                f32({19, 22, 43, 50}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Gemm).in(A).in(B).attr("transA", 1).run1(),
                f32({26, 30, 38, 44}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Gemm).in(A).in(B).attr("transB", 1).run1(),
                f32({17, 23, 39, 53}, {2, 2}));
  // alpha 0.5, beta 2, C a row [2] broadcast over M.
  EXPECT_TENSOR(OpTest(OpKind::Gemm)
                    .in(A)
                    .in(B)
                    .in(f32({1, -1}))
                    .attr("alpha", 0.5f)
                    .attr("beta", 2.0f)
                    .run1(),
                f32({11.5f, 9, 23.5f, 23}, {2, 2}));
  // C scalar, C column [2, 1], C full [2, 2].
  EXPECT_TENSOR(OpTest(OpKind::Gemm).in(A).in(B).in(f32({1}, {})).run1(),
                f32({20, 23, 44, 51}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Gemm).in(A).in(B).in(f32({1, 2}, {2, 1})).run1(),
                f32({20, 23, 45, 52}, {2, 2}));
  EXPECT_TENSOR(
      OpTest(OpKind::Gemm).in(A).in(B).in(f32({1, 2, 3, 4}, {2, 2})).run1(),
      f32({20, 24, 46, 54}, {2, 2}));
  // Non-square: [1, 3] x [3, 2] with transB on a [2, 3] B.
  EXPECT_TENSOR(OpTest(OpKind::Gemm)
                    .in(f32({1, 2, 3}, {1, 3}))
                    .in(f32({1, 0, 1, 0, 1, 0}, {2, 3}))
                    .attr("transB", 1)
                    .run1(),
                f32({4, 2}, {1, 2}));
}

} // namespace
