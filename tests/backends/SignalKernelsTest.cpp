//===- SignalKernelsTest.cpp - Reference kernels: DFT, STFT, windows, mel -===//
//
// DFT of [1, 2, 3, 4] (forward, inverse, onesided, dft_length truncation
// and zero padding, complex input, another axis); STFT frames with and
// without a window; the Hann, Hamming and Blackman windows at length 4
// (periodic) and 5 (symmetric), where the cosines are 1, 0, -1, 0; and
// MelWeightMatrix on the ONNX example, whose filter edges are worked out
// in the comment.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

/// FFT([1, 2, 3, 4]) = [10, -2 + 2i, -2, -2 - 2i].
TEST(RefDFT, ForwardInverseOnesided) {
  Tensor X = f32({1, 2, 3, 4}, {1, 4, 1});
  EXPECT_TENSOR_TOL(OpTest(OpKind::DFT).in(X).run1(),
                    f32({10, 0, -2, 2, -2, 0, -2, -2}, {1, 4, 2}), 1e-6);
  EXPECT_TENSOR_TOL(OpTest(OpKind::DFT).in(X).attr("onesided", 1).run1(),
                    f32({10, 0, -2, 2, -2, 0}, {1, 3, 2}), 1e-6);
  EXPECT_TENSOR_TOL(OpTest(OpKind::DFT)
                        .in(f32({10, 0, -2, 2, -2, 0, -2, -2}, {1, 4, 2}))
                        .attr("inverse", 1)
                        .run1(),
                    f32({1, 0, 2, 0, 3, 0, 4, 0}, {1, 4, 2}), 1e-6);
  // A complex input: DFT of i * [1, 0, 0, 0] is i everywhere.
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::DFT).in(f32({0, 1, 0, 0, 0, 0, 0, 0}, {1, 4, 2})).run1(),
      f32({0, 1, 0, 1, 0, 1, 0, 1}, {1, 4, 2}), 1e-6);
}

TEST(RefDFT, LengthAndAxis) {
  Tensor X = f32({1, 2, 3, 4}, {1, 4, 1});
  // Truncated to [1, 2]: [3, -1].
  EXPECT_TENSOR_TOL(OpTest(OpKind::DFT).in(X).in(i64({2}, {})).run1(),
                    f32({3, 0, -1, 0}, {1, 2, 2}), 1e-6);
  // Zero-padded to 8: bin 4 is 1 - 2 + 3 - 4 = -2, bin 2 is
  // 1 - 2i * 1 ... = (1 - 3) + (-2 + 4) i.
  Tensor Y = OpTest(OpKind::DFT).in(X).in(i64({8}, {})).run1();
  ASSERT_EQ(Y.shape(), (Shape{1, 8, 2}));
  EXPECT_NEAR(Y.getFlat(8), -2, 1e-6);
  EXPECT_NEAR(Y.getFlat(9), 0, 1e-6);
  EXPECT_NEAR(Y.getFlat(4), -2, 1e-6);
  EXPECT_NEAR(Y.getFlat(5), 2, 1e-6);
  // axis 2 transforms each row of [1, 2, 2, 1]: [a, b] -> [a + b, a - b].
  EXPECT_TENSOR_TOL(OpTest(OpKind::DFT)
                        .in(f32({1, 2, 3, 5}, {1, 2, 2, 1}))
                        .attr("axis", 2)
                        .run1(),
                    f32({3, 0, -1, 0, 8, 0, -2, 0}, {1, 2, 2, 2}), 1e-6);
  EXPECT_FAILS(OpTest(OpKind::DFT).in(X).attr("axis", 2), "complex axis");
  EXPECT_FAILS(OpTest(OpKind::DFT).in(X).in(i64({0}, {})), "dft_length");
}

TEST(RefSTFT, FramesAndWindow) {
  // Frames [1, 2, 3, 4] and [3, 4, 5, 6]; onesided bins 0..2.
  Tensor S = f32({1, 2, 3, 4, 5, 6}, {1, 6, 1});
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::STFT)
          .in(S)
          .in(i64({2}, {}))
          .none()
          .in(i64({4}, {}))
          .run1(),
      f32({10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0}, {1, 2, 3, 2}), 1e-6);
  // Window [0, 1, 1, 0]: frame one is [0, 2, 3, 0] -> 5, -3 - 2i, 1.
  Tensor Y =
      OpTest(OpKind::STFT).in(S).in(i64({2}, {})).in(f32({0, 1, 1, 0})).run1();
  ASSERT_EQ(Y.shape(), (Shape{1, 2, 3, 2}));
  EXPECT_TENSOR_TOL(Y.slice(1, 0, 1).contiguous(),
                    f32({5, 0, -3, -2, 1, 0}, {1, 1, 3, 2}), 1e-6);
  // Two-sided: all four bins.
  EXPECT_EQ(OpTest(OpKind::STFT)
                .in(S)
                .in(i64({2}, {}))
                .none()
                .in(i64({4}, {}))
                .attr("onesided", 0)
                .run1()
                .shape(),
            (Shape{1, 2, 4, 2}));
  EXPECT_FAILS(OpTest(OpKind::STFT).in(S).in(i64({2}, {})), "frame_length");
  EXPECT_FAILS(OpTest(OpKind::STFT)
                   .in(S)
                   .in(i64({2}, {}))
                   .in(f32({1, 1, 1}))
                   .in(i64({4}, {})),
               "frame_length");
}

TEST(RefWindows, PeriodicAndSymmetric) {
  Tensor N4 = i64({4}, {}), N5 = i64({5}, {});
  EXPECT_TENSOR_TOL(OpTest(OpKind::HannWindow).in(N4).run1(),
                    f32({0, 0.5, 1, 0.5}), 1e-6);
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::HannWindow).in(N5).attr("periodic", 0).run1(),
      f32({0, 0.5, 1, 0.5, 0}), 1e-6);
  EXPECT_TENSOR_TOL(OpTest(OpKind::HammingWindow).in(N4).run1(),
                    f32({4.0f / 46, 25.0f / 46, 1, 25.0f / 46}), 1e-6);
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::HammingWindow).in(N5).attr("periodic", 0).run1(),
      f32({4.0f / 46, 25.0f / 46, 1, 25.0f / 46, 4.0f / 46}), 1e-6);
  EXPECT_TENSOR_TOL(OpTest(OpKind::BlackmanWindow).in(N4).run1(),
                    f32({0, 0.34f, 1, 0.34f}), 1e-6);
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::BlackmanWindow).in(N5).attr("periodic", 0).run1(),
      f32({0, 0.34f, 1, 0.34f, 0}), 1e-6);
  // output_datatype 11: f64; an i32 size; an empty window.
  EXPECT_TENSOR_TOL(OpTest(OpKind::HannWindow)
                        .in(i32({4}, {}))
                        .attr("output_datatype", 11)
                        .run1(),
                    f64({0, 0.5, 1, 0.5}), 1e-12);
  EXPECT_TENSOR(OpTest(OpKind::HannWindow).in(i64({0}, {})).run1(),
                f32({}, {0}));
  EXPECT_FAILS(OpTest(OpKind::HannWindow).in(i64({-1}, {})), "size");
  EXPECT_FAILS(OpTest(OpKind::HannWindow).in(N4).attr("output_datatype", 8),
               "output_datatype");
}

TEST(RefMelWeightMatrix, SpecExample) {
  // 8 mel bins over 0..4096 Hz at 8192 Hz, dft_length 16: the 10 filter
  // edges fall in FFT bins [0, 0, 0, 1, 1, 2, 3, 4, 5, 6]
  // (floor(17 * hz / 8192)), so each filter is a single 1.
  Tensor Y = OpTest(OpKind::MelWeightMatrix)
                 .in(i32({8}, {}))
                 .in(i32({16}, {}))
                 .in(i32({8192}, {}))
                 .in(f32({0}, {}))
                 .in(f32({4096}, {}))
                 .run1();
  std::vector<float> Want(9 * 8, 0.0f);
  for (auto [Row, Col] : std::vector<std::pair<int, int>>{
           {0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}})
    Want[Row * 8 + Col] = 1;
  EXPECT_TENSOR(Y, f32(Want, {9, 8}));
}

TEST(RefMelWeightMatrix, Triangles) {
  // 1 mel bin over 0..8000 Hz at 16000 Hz, dft_length 64: 3 edges evenly
  // spaced in mel (0, 946.7, 1893.4 of 2840.0) -> 0, 921.5, 3055.9 Hz ->
  // FFT bins floor(65 * hz / 16000) = 0, 3, 12. The filter rises j / 3
  // over bins 0..3 and falls (12 - j) / 9 over bins 3..11.
  Tensor Y = OpTest(OpKind::MelWeightMatrix)
                 .in(i64({1}, {}))
                 .in(i64({64}, {}))
                 .in(i64({16000}, {}))
                 .in(f32({0}, {}))
                 .in(f32({8000}, {}))
                 .attr("output_datatype", 11)
                 .run1();
  std::vector<double> Want(33, 0.0);
  for (int J = 0; J < 3; ++J)
    Want[J] = J / 3.0;
  for (int J = 3; J < 12; ++J)
    Want[J] = (12.0 - J) / 9.0;
  EXPECT_TENSOR_TOL(Y, f64(Want, {33, 1}), 1e-12);
  EXPECT_FAILS(OpTest(OpKind::MelWeightMatrix)
                   .in(i64({1}, {}))
                   .in(i64({64}, {}))
                   .in(i64({16000}, {}))
                   .in(f32({100}, {}))
                   .in(f32({50}, {})),
               "lower_edge_hertz");
}

} // namespace
