//===- QuantizedLinalgKernelsTest.cpp - Reference kernels: integer quantized ops -===//
//
// ConvInteger and MatMulInteger (the ONNX examples, per-channel / per-row
// zero points, i8, absent zero points, batches), QLinearConv and
// QLinearMatMul (requantization with rounding half to even, saturation,
// the i32 bias, per-channel weight scales, i8 outputs) and
// DynamicQuantizeLinear (scale and zero point from the range of x and 0).
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefConvInteger, SpecExamples) {
  // x - 1 = [1..9]; 2x2 box sums.
  Tensor X = u8({2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 1, 3, 3});
  Tensor W = u8({1, 1, 1, 1}, {1, 1, 2, 2});
  EXPECT_TENSOR(OpTest(OpKind::ConvInteger).in(X).in(W).in(u8({1}, {})).run1(),
                i32({12, 16, 24, 28}, {1, 1, 2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::ConvInteger)
                    .in(X)
                    .in(W)
                    .in(u8({1}, {}))
                    .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                    .run1(),
                i32({1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9},
                    {1, 1, 4, 4}));
}

TEST(RefConvInteger, ZeroPointsAndSigned) {
  // No zero points: plain integer convolution (u8 values above 127).
  EXPECT_TENSOR(OpTest(OpKind::ConvInteger)
                    .in(u8({200, 255}, {1, 1, 2}))
                    .in(u8({2}, {1, 1, 1}))
                    .run1(),
                i32({400, 510}, {1, 1, 2}));
  // Per-output-channel w_zero_point [1, 3] on i8 weights.
  EXPECT_TENSOR(OpTest(OpKind::ConvInteger)
                    .in(i8({-2, 5}, {1, 1, 2}))
                    .in(i8({2, 4}, {2, 1, 1}))
                    .none()
                    .in(i8({1, 3}))
                    .run1(),
                i32({-2, 5, -2, 5}, {1, 2, 2}));
  EXPECT_FAILS(OpTest(OpKind::ConvInteger)
                   .in(f32({1, 2}, {1, 1, 2}))
                   .in(u8({2}, {1, 1, 1})),
               "u8 or i8");
}

TEST(RefMatMulInteger, SpecExampleAndZeroPoints) {
  Tensor A = u8({11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, {4, 3});
  Tensor B = u8({1, 4, 2, 5, 3, 6}, {3, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::MatMulInteger).in(A).in(B).in(u8({12})).in(u8({0})).run1(),
      i32({-38, -83, -44, -98, -50, -113, -56, -128}, {4, 2}));
  // Per-row a_zero_point [1, 2] and per-column b_zero_point [0, 1].
  EXPECT_TENSOR(OpTest(OpKind::MatMulInteger)
                    .in(u8({1, 2, 3, 4}, {2, 2}))
                    .in(u8({1, 1, 1, 2}, {2, 2}))
                    .in(u8({1, 2}))
                    .in(u8({0, 1}))
                    .run1(),
                i32({1, 1, 3, 2}, {2, 2}));
  // i8 x u8, batched, no zero points.
  EXPECT_TENSOR(OpTest(OpKind::MatMulInteger)
                    .in(i8({-1, 2, 3, -4}, {2, 1, 2}))
                    .in(u8({10, 20}, {2, 1}))
                    .run1(),
                i32({30, -50}, {2, 1, 1}));
}

TEST(RefQLinearConv, Requantize) {
  // x real = 0.5 * (x - 10) = [0, 5, 10, 15]; w real = 0.25 * 2 = 0.5;
  // y = real / 0.5 + 100.
  auto Base = [](Tensor YZ) {
    OpTest T(OpKind::QLinearConv);
    T.in(u8({10, 20, 30, 40}, {1, 1, 2, 2}))
        .in(f32({0.5f}, {}))
        .in(u8({10}, {}))
        .in(u8({2}, {1, 1, 1, 1}))
        .in(f32({0.25f}, {}))
        .in(u8({0}, {}))
        .in(f32({0.5f}, {}))
        .in(std::move(YZ));
    return T;
  };
  EXPECT_TENSOR(Base(u8({100}, {})).run1(),
                u8({100, 105, 110, 115}, {1, 1, 2, 2}));
  // The i32 bias adds to the accumulator (1 unit of 0.125 each).
  EXPECT_TENSOR(Base(u8({100}, {})).in(i32({4})).run1(),
                u8({101, 106, 111, 116}, {1, 1, 2, 2}));
  // Saturation at 255; an i8 output.
  EXPECT_TENSOR(Base(u8({250}, {})).run1(),
                u8({250, 255, 255, 255}, {1, 1, 2, 2}));
  EXPECT_TENSOR(Base(i8({120}, {})).run1(),
                i8({120, 125, 127, 127}, {1, 1, 2, 2}));
  // Half-way values round to even: acc 2 * 1.25 = 2.5 -> 2, 7.5 -> 8.
  EXPECT_TENSOR(OpTest(OpKind::QLinearConv)
                    .in(u8({1, 3}, {1, 1, 2}))
                    .in(f32({1}, {}))
                    .in(u8({0}, {}))
                    .in(u8({1}, {1, 1, 1}))
                    .in(f32({2.5f}, {}))
                    .in(u8({0}, {}))
                    .in(f32({1}, {}))
                    .in(u8({0}, {}))
                    .run1(),
                u8({2, 8}, {1, 1, 2}));
}

TEST(RefQLinearConv, PerChannelWeights) {
  // Two output channels with w_scale [1, 2] and w_zero_point [1, 0].
  EXPECT_TENSOR(OpTest(OpKind::QLinearConv)
                    .in(u8({3}, {1, 1, 1}))
                    .in(f32({1}, {}))
                    .in(u8({0}, {}))
                    .in(u8({2, 2}, {2, 1, 1}))
                    .in(f32({1, 2}))
                    .in(u8({1, 0}))
                    .in(f32({1}, {}))
                    .in(u8({0}, {}))
                    .run1(),
                u8({3, 12}, {1, 2, 1}));
  EXPECT_FAILS(OpTest(OpKind::QLinearConv)
                   .in(u8({3}, {1, 1, 1}))
                   .in(f32({1}, {}))
                   .in(u8({0}, {}))
                   .in(u8({2, 2}, {2, 1, 1}))
                   .in(f32({1, 2, 3}))
                   .in(u8({0}, {}))
                   .in(f32({1}, {}))
                   .in(u8({0}, {})),
               "w_scale");
}

TEST(RefQLinearMatMul, Requantize) {
  // a real = 0.5 * [2, 4] = [1, 2]; b real = [0, 2]; y = 4 / 0.5 + 10.
  auto Run = [](Tensor YZ) {
    return OpTest(OpKind::QLinearMatMul)
        .in(u8({2, 4}, {1, 2}))
        .in(f32({0.5f}))
        .in(u8({0}))
        .in(u8({1, 3}, {2, 1}))
        .in(f32({1}))
        .in(u8({1}))
        .in(f32({0.5f}))
        .in(std::move(YZ))
        .run1();
  };
  EXPECT_TENSOR(Run(u8({10})), u8({18}, {1, 1}));
  EXPECT_TENSOR(Run(i8({-20})), i8({-12}, {1, 1}));
  EXPECT_TENSOR(Run(u8({250})), u8({255}, {1, 1}));
  // The ONNX example, first row: [168, 115, 255].
  Tensor Y = OpTest(OpKind::QLinearMatMul)
                 .in(u8({208, 236, 0, 238, 3, 214, 255, 29}, {2, 4}))
                 .in(f32({0.0066f}))
                 .in(u8({113}))
                 .in(u8({152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247},
                        {4, 3}))
                 .in(f32({0.00705f}))
                 .in(u8({114}))
                 .in(f32({0.0107f}))
                 .in(u8({118}))
                 .run1();
  EXPECT_TENSOR(Y, u8({168, 115, 255, 1, 66, 151}, {2, 3}));
}

TEST(RefDynamicQuantizeLinear, RangeIncludesZero) {
  // [-1, 3]: scale 4/255, zero point round(63.75) = 64.
  auto Out = OpTest(OpKind::DynamicQuantizeLinear).in(f32({-1, 0, 3})).run();
  EXPECT_TENSOR(Out[0], u8({0, 64, 255}));
  EXPECT_TENSOR(Out[1], f32({4.0f / 255}, {}));
  EXPECT_TENSOR(Out[2], u8({64}, {}));
  // All positive: the range starts at 0, zero point 0.
  Out = OpTest(OpKind::DynamicQuantizeLinear).in(f32({0.5f, 2}, {1, 2})).run();
  EXPECT_TENSOR(Out[0], u8({64, 255}, {1, 2}));
  EXPECT_TENSOR(Out[2], u8({0}, {}));
  // All negative: zero point 255.
  Out = OpTest(OpKind::DynamicQuantizeLinear).in(f32({-2, -0.5f})).run();
  EXPECT_TENSOR(Out[0], u8({0, 191}));
  EXPECT_TENSOR(Out[2], u8({255}, {}));
  // All zero: scale 1 (not 0), zero point 0.
  Out = OpTest(OpKind::DynamicQuantizeLinear).in(f32({0, 0})).run();
  EXPECT_TENSOR(Out[0], u8({0, 0}));
  EXPECT_TENSOR(Out[1], f32({1}, {}));
  EXPECT_FAILS(OpTest(OpKind::DynamicQuantizeLinear).in(f64({1})), "f32");
}

} // namespace
