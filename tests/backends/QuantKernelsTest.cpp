//===- QuantKernelsTest.cpp - Reference kernels: (de)quantization --------===//
//
// QuantizeLinear and DequantizeLinear, per tensor and per axis (the ONNX
// examples), u8 and i8, rounding half to even, saturation, absent zero
// points and i32 inputs.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefQuant, QuantizePerTensor) {
  // ONNX example: x / 2 + 128, saturated to u8; 1.5 rounds to 2.
  EXPECT_TENSOR(OpTest(OpKind::QuantizeLinear)
                    .in(f32({0, 2, 3, 1000, -254, -1000}))
                    .in(f32({2}, {}))
                    .in(u8({128}, {}))
                    .run1(),
                u8({128, 129, 130, 255, 1, 0}));
  // Half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2.
  EXPECT_TENSOR(OpTest(OpKind::QuantizeLinear)
                    .in(f32({1, 3, 5, -5, -300, 300}))
                    .in(f32({2}, {}))
                    .in(i8({0}, {}))
                    .run1(),
                i8({0, 2, 2, -2, -128, 127}));
  // No zero point: u8 with zero point 0; i32 input.
  EXPECT_TENSOR(OpTest(OpKind::QuantizeLinear)
                    .in(f32({-1, 3.4f}))
                    .in(f32({1}, {}))
                    .run1(),
                u8({0, 3}));
  EXPECT_TENSOR(OpTest(OpKind::QuantizeLinear)
                    .in(i32({7, -7}))
                    .in(f32({2}, {}))
                    .in(i8({1}, {}))
                    .run1(),
                i8({5, -3}));
}

/// The ONNX per-axis example: x [1, 3, 3, 2] f32 and its u8 quantization
/// with scales [2, 4, 5] and zero points [84, 24, 196] along axis 1.
Tensor axisFloat() {
  return f32({-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44, 245, -485,
              -960, -270, -375, -470},
             {1, 3, 3, 2});
}
Tensor axisQuant() {
  return u8({3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4, 142,
             121, 102},
            {1, 3, 3, 2});
}

TEST(RefQuant, PerAxis) {
  EXPECT_TENSOR(OpTest(OpKind::QuantizeLinear)
                    .in(axisFloat())
                    .in(f32({2, 4, 5}))
                    .in(u8({84, 24, 196}))
                    .run1(),
                axisQuant());
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(axisQuant())
                    .in(f32({2, 4, 5}))
                    .in(u8({84, 24, 196}))
                    .run1(),
                axisFloat());
  // Negative axis: the last axis of [2, 2].
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(i8({1, 2, 3, 4}, {2, 2}))
                    .in(f32({1, 10}))
                    .in(i8({0, 1}))
                    .attr("axis", -1)
                    .run1(),
                f32({1, 10, 3, 30}, {2, 2}));
}

TEST(RefQuant, DequantizePerTensor) {
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(u8({0, 3, 128, 255}))
                    .in(f32({2}, {}))
                    .in(u8({128}, {}))
                    .run1(),
                f32({-256, -250, 0, 254}));
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(i8({-128, 127}))
                    .in(f32({1}, {}))
                    .in(i8({-1}, {}))
                    .run1(),
                f32({-127, 128}));
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(i32({-3, 7}))
                    .in(f32({0.5f}, {}))
                    .run1(),
                f32({-1.5f, 3.5f}));
  EXPECT_TENSOR(OpTest(OpKind::DequantizeLinear)
                    .in(Tensor::empty(Shape{0, 2}, DType::U8))
                    .in(f32({1}, {}))
                    .run1(),
                Tensor::empty(Shape{0, 2}, DType::F32));
}

} // namespace
