//===- ConvKernelsTest.cpp - Reference kernels: Conv and ConvTranspose ---===//
//
// The ONNX spec examples (padding, strides, asymmetric pads, auto_pad,
// output_shape, output_padding, dilations) plus hand-checked 1-d, 3-d,
// grouped, multi-channel, biased and zero-batch cases.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

using Ints = std::vector<int64_t>;

Tensor ones(Shape S) { return iota(S, DType::F32, 1, 0); }

TEST(RefConv, SpecPadding) {
  Tensor X = iota(Shape{1, 1, 5, 5}), W = ones(Shape{1, 1, 3, 3});
  EXPECT_TENSOR(
      OpTest(OpKind::Conv).in(X).in(W).attr("pads", Ints{1, 1, 1, 1}).run1(),
      f32({12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
           117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84},
          {1, 1, 5, 5}));
  EXPECT_TENSOR(OpTest(OpKind::Conv).in(X).in(W).run1(),
                f32({54, 63, 72, 99, 108, 117, 144, 153, 162}, {1, 1, 3, 3}));
}

TEST(RefConv, SpecStrides) {
  Tensor X = iota(Shape{1, 1, 7, 5}), W = ones(Shape{1, 1, 3, 3});
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(X)
                    .in(W)
                    .attr("pads", Ints{1, 1, 1, 1})
                    .attr("strides", Ints{2, 2})
                    .run1(),
                f32({12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124},
                    {1, 1, 4, 3}));
  EXPECT_TENSOR(
      OpTest(OpKind::Conv).in(X).in(W).attr("strides", Ints{2, 2}).run1(),
      f32({54, 72, 144, 162, 234, 252}, {1, 1, 3, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(X)
                    .in(W)
                    .attr("pads", Ints{1, 0, 1, 0})
                    .attr("strides", Ints{2, 2})
                    .attr("kernel_shape", Ints{3, 3})
                    .run1(),
                f32({21, 33, 99, 117, 189, 207, 171, 183}, {1, 1, 4, 2}));
}

TEST(RefConv, SpecAutoPad) {
  Tensor X = iota(Shape{1, 1, 5, 5}), W = ones(Shape{1, 1, 3, 3});
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(X)
                    .in(W)
                    .attr("auto_pad", "SAME_LOWER")
                    .attr("strides", Ints{2, 2})
                    .run1(),
                f32({12, 27, 24, 63, 108, 81, 72, 117, 84}, {1, 1, 3, 3}));
  // 1-D, input 4, kernel 2, stride 1: total pad 1 goes to the end for
  // SAME_UPPER, to the beginning for SAME_LOWER; VALID pads nothing.
  Tensor X1 = f32({1, 2, 3, 4}, {1, 1, 4}), W1 = f32({1, 10}, {1, 1, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::Conv).in(X1).in(W1).attr("auto_pad", "SAME_UPPER").run1(),
      f32({21, 32, 43, 4}, {1, 1, 4}));
  EXPECT_TENSOR(
      OpTest(OpKind::Conv).in(X1).in(W1).attr("auto_pad", "SAME_LOWER").run1(),
      f32({10, 21, 32, 43}, {1, 1, 4}));
  EXPECT_TENSOR(
      OpTest(OpKind::Conv).in(X1).in(W1).attr("auto_pad", "VALID").run1(),
      f32({21, 32, 43}, {1, 1, 3}));
}

TEST(RefConv, OneDimBiasDilation) {
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(f32({1, 2, 3, 4}, {1, 1, 4}))
                    .in(f32({1, 1}, {1, 1, 2}))
                    .in(f32({10}))
                    .run1(),
                f32({13, 15, 17}, {1, 1, 3}));
  // Dilation 2: taps x[i] and x[i + 2].
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(f32({1, 2, 3, 4, 5}, {1, 1, 5}))
                    .in(f32({1, 1}, {1, 1, 2}))
                    .attr("dilations", Ints{2})
                    .run1(),
                f32({4, 6, 8}, {1, 1, 3}));
}

TEST(RefConv, ChannelsGroupsBatch) {
  // A 1x1 conv mixes channels: out = [ch0, ch1, ch0 + ch1] + bias.
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});
  EXPECT_TENSOR(
      OpTest(OpKind::Conv)
          .in(X)
          .in(f32({1, 0, 0, 1, 1, 1}, {3, 2, 1, 1}))
          .in(f32({0, 0, 100}))
          .run1(),
      f32({1, 2, 3, 4, 5, 6, 7, 8, 106, 108, 110, 112}, {1, 3, 2, 2}));
  // Two groups, two outputs per group (depthwise with multiplier 2).
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}))
                    .in(f32({2, -1, 3, 10}, {4, 1, 1}))
                    .attr("group", 2)
                    .run1(),
                f32({2, 4, 6, -1, -2, -3, 12, 15, 18, 40, 50, 60}, {1, 4, 3}));
  // Batch of 2 and a zero batch.
  Tensor XB = f32({1, 2, 3, 4, 5, 6}, {2, 1, 3});
  EXPECT_TENSOR(OpTest(OpKind::Conv).in(XB).in(f32({1, 1}, {1, 1, 2})).run1(),
                f32({3, 5, 9, 11}, {2, 1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(Tensor::empty(Shape{0, 1, 3}, DType::F32))
                    .in(f32({1, 1}, {1, 1, 2}))
                    .run1(),
                Tensor::empty(Shape{0, 1, 2}, DType::F32));
}

TEST(RefConv, ThreeDim) {
  // All-ones 3x3x3 input and 2x2x2 kernel: every output sums 8 ones.
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(ones(Shape{1, 1, 3, 3, 3}))
                    .in(ones(Shape{1, 1, 2, 2, 2}))
                    .run1(),
                iota(Shape{1, 1, 2, 2, 2}, DType::F32, 8, 0));
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(ones(Shape{1, 1, 2, 2, 2}))
                    .in(ones(Shape{1, 1, 2, 2, 2}))
                    .attr("pads", Ints{1, 0, 0, 0, 0, 0})
                    .run1(),
                f32({4, 8}, {1, 1, 2, 1, 1}));
}

TEST(RefConv, F64AndErrors) {
  EXPECT_TENSOR(OpTest(OpKind::Conv)
                    .in(f64({0.5, 0.25}, {1, 1, 2}))
                    .in(f64({2, 4}, {1, 1, 2}))
                    .run1(),
                f64({2}, {1, 1, 1}));
  // Kernel larger than the padded input (any error, from inference or the
  // kernel).
  EXPECT_FAILS(OpTest(OpKind::Conv)
                   .in(f32({1, 2}, {1, 1, 2}))
                   .in(f32({1, 1, 1}, {1, 1, 3})),
               "");
}

// --- ConvTranspose --------------------------------------------------------

Tensor specX() { return iota(Shape{1, 1, 3, 3}); }

/// The same 2-D plane for both output channels.
Tensor twoChannels(std::vector<float> Plane, int64_t H, int64_t W) {
  std::vector<float> V = Plane;
  V.insert(V.end(), Plane.begin(), Plane.end());
  return f32(V, {1, 2, H, W});
}

TEST(RefConvTranspose, SpecBasic) {
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(specX())
                    .in(ones(Shape{1, 2, 3, 3}))
                    .run1(),
                twoChannels({0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                             27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8},
                            5, 5));
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(f32({0, 1, 2}, {1, 1, 3}))
                    .in(ones(Shape{1, 2, 3}))
                    .run1(),
                f32({0, 1, 3, 3, 2, 0, 1, 3, 3, 2}, {1, 2, 5}));
}

TEST(RefConvTranspose, SpecPads) {
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(specX())
                    .in(ones(Shape{1, 2, 3, 3}))
                    .attr("strides", Ints{3, 2})
                    .attr("pads", Ints{1, 2, 1, 2})
                    .run1(),
                twoChannels({1, 1, 3, 1, 1,  3, 7,  4,  9, 7, 4,
                             9, 7, 4, 9, 13, 7, 15, 13, 7, 15},
                            7, 3));
}

TEST(RefConvTranspose, SpecOutputShapeAndPadding) {
  std::vector<float> Plane = {
      0,  0, 1, 1, 3, 2, 2,  0, 0,  0, 1,  1, 3,  2, 2, 0, 0, 0, 1,  1,
      3,  2, 2, 0, 3, 3, 7,  4, 9,  5, 5,  0, 3,  3, 7, 4, 9, 5, 5,  0,
      3,  3, 7, 4, 9, 5, 5,  0, 6,  6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7,
      15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8,  0, 0,  0, 0, 0, 0, 0, 0,  0};
  Tensor Want = twoChannels(Plane, 10, 8);
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(specX())
                    .in(ones(Shape{1, 2, 3, 3}))
                    .attr("strides", Ints{3, 2})
                    .attr("output_shape", Ints{10, 8})
                    .run1(),
                Want);
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(specX())
                    .in(ones(Shape{1, 2, 3, 3}))
                    .attr("strides", Ints{3, 2})
                    .attr("output_padding", Ints{1, 1})
                    .run1(),
                Want);
}

TEST(RefConvTranspose, SpecDilationsAndAutoPad) {
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(f32({3, 8, 1, 9, 5, 7, 3, 2, 6}, {1, 1, 3, 3}))
                    .in(f32({7, 2, 1, 9}, {1, 1, 2, 2}))
                    .attr("dilations", Ints{2, 2})
                    .run1(),
                f32({21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                     76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54},
                    {1, 1, 5, 5}));
  // SAME_UPPER with stride 2: output 6 = 3 * 2; of the total padding 1 the
  // odd one goes at the end.
  EXPECT_TENSOR(
      OpTest(OpKind::ConvTranspose)
          .in(specX())
          .in(ones(Shape{1, 2, 3, 3}))
          .attr("strides", Ints{2, 2})
          .attr("auto_pad", "SAME_UPPER")
          .run1(),
      twoChannels({0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                   3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8},
                  6, 6));
}

TEST(RefConvTranspose, GroupsBias) {
  // Two groups of one channel each, bias per output channel; 1-D, stride 2.
  // Group 0: x [1, 2] with w [1, 1] -> [1, 1, 2, 2]; group 1: x [3, 4] with
  // w [1, -1] -> [3, -3, 4, -4], plus bias 10.
  EXPECT_TENSOR(OpTest(OpKind::ConvTranspose)
                    .in(f32({1, 2, 3, 4}, {1, 2, 2}))
                    .in(f32({1, 1, 1, -1}, {2, 1, 2}))
                    .in(f32({0, 10}))
                    .attr("group", 2)
                    .attr("strides", Ints{2})
                    .run1(),
                f32({1, 1, 2, 2, 13, 7, 14, 6}, {1, 2, 4}));
}

} // namespace
