//===- ShapeKernelsTest.cpp - Reference kernels: shape manipulation ------===//
//
// Flatten, Reshape, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice,
// Expand, Tile, Pad, Shape and Size: the ONNX spec examples plus negative
// axes, negative steps, scalars, zero-size tensors, non-contiguous inputs and
// the errors on bad shapes.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

using Ints = std::vector<int64_t>;

TEST(RefShape, Flatten) {
  Tensor X = iota(Shape{2, 3, 4});
  auto Flat = [&](int64_t Axis) {
    return OpTest(OpKind::Flatten).in(X).attr("axis", Axis).run1();
  };
  EXPECT_TENSOR(Flat(1), iota(Shape{2, 12}));
  EXPECT_TENSOR(Flat(0), iota(Shape{1, 24}));
  EXPECT_TENSOR(Flat(3), iota(Shape{24, 1}));
  EXPECT_TENSOR(Flat(-1), iota(Shape{6, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Flatten).in(f32({7}, {})).attr("axis", 0).run1(),
                f32({7}, {1, 1}));
}

TEST(RefShape, Reshape) {
  Tensor X = iota(Shape{2, 3, 4});
  auto Re = [&](Tensor In, Tensor S) {
    return OpTest(OpKind::Reshape).in(std::move(In)).constIn(std::move(S));
  };
  EXPECT_TENSOR(Re(X, i64({4, -1})).run1(), iota(Shape{4, 6}));
  EXPECT_TENSOR(Re(X, i64({0, -1})).run1(), iota(Shape{2, 12}));
  EXPECT_TENSOR(Re(X, i64({-1})).run1(), iota(Shape{24}));
  // allowzero: 0 is an extent, not "copy".
  EXPECT_TENSOR(Re(Tensor::empty(Shape{0, 3}, DType::F32), i64({3, 0}))
                    .attr("allowzero", 1)
                    .run1(),
                Tensor::empty(Shape{3, 0}, DType::F32));
  EXPECT_TENSOR(Re(f32({5}), i64({}, {0})).run1(), f32({5}, {}));
  // A transposed input reshapes in its logical (row-major) order.
  EXPECT_TENSOR(Re(iota(Shape{2, 3}).permute({1, 0}), i64({6})).run1(),
                f32({0, 3, 1, 4, 2, 5}));
  // The shape as a runtime input, not a constant.
  EXPECT_TENSOR(OpTest(OpKind::Reshape).in(X).in(i64({3, 8})).run1(),
                iota(Shape{3, 8}));
  EXPECT_FAILS(Re(X, i64({5, -1})), "");
}

TEST(RefShape, Transpose) {
  EXPECT_TENSOR(OpTest(OpKind::Transpose).in(iota(Shape{2, 3})).run1(),
                f32({0, 3, 1, 4, 2, 5}, {3, 2}));
  // out[k, i, 0] = x[i, 0, k] = 3i + k.
  EXPECT_TENSOR(OpTest(OpKind::Transpose)
                    .in(iota(Shape{2, 1, 3}))
                    .attr("perm", Ints{2, 0, 1})
                    .run1(),
                f32({0, 3, 1, 4, 2, 5}, {3, 2, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Transpose).in(i64({9}, {})).run1(),
                i64({9}, {}));
}

TEST(RefShape, SqueezeUnsqueeze) {
  Tensor X = iota(Shape{1, 3, 1, 2});
  EXPECT_TENSOR(OpTest(OpKind::Squeeze).in(X).run1(), iota(Shape{3, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Squeeze).in(X).constIn(i64({0})).run1(),
                iota(Shape{3, 1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Squeeze).in(X).constIn(i64({-2})).run1(),
                iota(Shape{1, 3, 2}));
  EXPECT_FAILS(OpTest(OpKind::Squeeze).in(X).constIn(i64({1})), "");
  Tensor V = iota(Shape{3, 4});
  EXPECT_TENSOR(OpTest(OpKind::Unsqueeze).in(V).constIn(i64({0, 3})).run1(),
                iota(Shape{1, 3, 4, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Unsqueeze).in(V).constIn(i64({-1})).run1(),
                iota(Shape{3, 4, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Unsqueeze).in(V).constIn(i64({1})).run1(),
                iota(Shape{3, 1, 4}));
  EXPECT_TENSOR(
      OpTest(OpKind::Unsqueeze).in(f32({2}, {})).constIn(i64({0})).run1(),
      f32({2}, {1}));
}

TEST(RefShape, Concat) {
  Tensor A = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_TENSOR(OpTest(OpKind::Concat)
                    .in(A)
                    .in(f32({5, 6}, {1, 2}))
                    .attr("axis", 0)
                    .run1(),
                f32({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Concat)
                    .in(A)
                    .in(f32({5, 6}, {2, 1}))
                    .in(Tensor::empty(Shape{2, 0}, DType::F32))
                    .attr("axis", -1)
                    .run1(),
                f32({1, 2, 5, 3, 4, 6}, {2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::Concat).in(i64({1})).attr("axis", 0).run1(),
                i64({1}));
  // A non-contiguous input.
  EXPECT_TENSOR(OpTest(OpKind::Concat)
                    .in(iota(Shape{2, 2}).permute({1, 0}))
                    .in(A)
                    .attr("axis", 1)
                    .run1(),
                f32({0, 2, 1, 2, 1, 3, 3, 4}, {2, 4}));
}

TEST(RefShape, Split) {
  Tensor X = f32({1, 2, 3, 4, 5, 6});
  auto Parts = OpTest(OpKind::Split).in(X).outputs(3).run();
  ASSERT_EQ(Parts.size(), 3u);
  EXPECT_TENSOR(Parts[0], f32({1, 2}));
  EXPECT_TENSOR(Parts[1], f32({3, 4}));
  EXPECT_TENSOR(Parts[2], f32({5, 6}));
  Parts = OpTest(OpKind::Split).in(X).constIn(i64({2, 4})).outputs(2).run();
  EXPECT_TENSOR(Parts[0], f32({1, 2}));
  EXPECT_TENSOR(Parts[1], f32({3, 4, 5, 6}));
  Parts = OpTest(OpKind::Split)
              .in(iota(Shape{2, 4}))
              .attr("axis", -1)
              .outputs(2)
              .run();
  EXPECT_TENSOR(Parts[0], f32({0, 1, 4, 5}, {2, 2}));
  EXPECT_TENSOR(Parts[1], f32({2, 3, 6, 7}, {2, 2}));
  Parts = OpTest(OpKind::Split).in(X).constIn(i64({0, 6})).outputs(2).run();
  EXPECT_TENSOR(Parts[0], Tensor::empty(Shape{0}, DType::F32));
  EXPECT_TENSOR(Parts[1], X);
}

/// Slice of X with the given starts/ends and optional axes/steps.
Tensor slice(Tensor X, Ints Starts, Ints Ends, Ints Axes = {},
             Ints Steps = {}) {
  OpTest T(OpKind::Slice);
  auto Vec = [](const Ints &V) {
    return Tensor::fromVector(V, Shape{static_cast<int64_t>(V.size())});
  };
  T.in(std::move(X)).constIn(Vec(Starts)).constIn(Vec(Ends));
  if (!Axes.empty())
    T.constIn(Vec(Axes));
  else if (!Steps.empty())
    T.none();
  if (!Steps.empty())
    T.constIn(Vec(Steps));
  return T.run1();
}

TEST(RefShape, Slice) {
  const int64_t Min = std::numeric_limits<int64_t>::min();
  const int64_t Max = std::numeric_limits<int64_t>::max();
  Tensor M = iota(Shape{3, 4});
  EXPECT_TENSOR(slice(M, {0, 1}, {2, 3}), f32({1, 2, 5, 6}, {2, 2}));
  EXPECT_TENSOR(slice(M, {1}, {Max}, {-1}),
                f32({1, 2, 3, 5, 6, 7, 9, 10, 11}, {3, 3}));
  Tensor V = iota(Shape{10});
  EXPECT_TENSOR(slice(V, {8}, {1}, {}, {-3}), f32({8, 5, 2}));
  EXPECT_TENSOR(slice(V, {-1}, {Min}, {0}, {-1}),
                f32({9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_TENSOR(slice(V, {2}, {1000}, {0}, {3}), f32({2, 5, 8}));
  EXPECT_TENSOR(slice(V, {-3}, {-1}), f32({7, 8}));
  EXPECT_TENSOR(slice(V, {5}, {2}), Tensor::empty(Shape{0}, DType::F32));
  // Negative steps on two axes of a 3-D tensor, like the ONNX example:
  // x[2:0:-1, 3:0:-2, :] of iota [3, 4, 2].
  EXPECT_TENSOR(slice(iota(Shape{3, 4, 2}), {2, 3}, {0, 0}, {0, 1}, {-1, -2}),
                f32({22, 23, 18, 19, 14, 15, 10, 11}, {2, 2, 2}));
  EXPECT_FAILS(OpTest(OpKind::Slice)
                   .in(V)
                   .constIn(i64({0}))
                   .constIn(i64({2}))
                   .constIn(i64({0}))
                   .constIn(i64({0})),
               "");
}

TEST(RefShape, ExpandTile) {
  // ONNX example: [3, 1] expanded to [2, 1, 6] -> [2, 3, 6].
  Tensor X = f32({1, 2, 3}, {3, 1});
  std::vector<float> Want;
  for (int B = 0; B < 2; ++B)
    for (int R = 1; R <= 3; ++R)
      for (int C = 0; C < 6; ++C)
        Want.push_back(R);
  EXPECT_TENSOR(OpTest(OpKind::Expand).in(X).constIn(i64({2, 1, 6})).run1(),
                f32(Want, {2, 3, 6}));
  // The target may be smaller than the input on an axis (numpy rules).
  EXPECT_TENSOR(OpTest(OpKind::Expand)
                    .in(f32({1, 2, 3}, {1, 3}))
                    .constIn(i64({2, 1}))
                    .run1(),
                f32({1, 2, 3, 1, 2, 3}, {2, 3}));
  EXPECT_TENSOR(
      OpTest(OpKind::Expand).in(f32({4}, {})).constIn(i64({2})).run1(),
      f32({4, 4}));
  // Tile (ONNX example).
  EXPECT_TENSOR(OpTest(OpKind::Tile)
                    .in(f32({0, 1, 2, 3}, {2, 2}))
                    .constIn(i64({2, 2}))
                    .run1(),
                f32({0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}, {4, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Tile).in(i64({5, 6})).constIn(i64({3})).run1(),
                i64({5, 6, 5, 6, 5, 6}));
  EXPECT_TENSOR(OpTest(OpKind::Tile)
                    .in(f32({0, 1, 2, 3}, {2, 2}))
                    .constIn(i64({1, 0}))
                    .run1(),
                Tensor::empty(Shape{2, 0}, DType::F32));
}

TEST(RefShape, Pad) {
  // ONNX examples on [[1, 1.2], [2.3, 3.4], [4.5, 5.7]] with pads [0, 2, 0, 0].
  Tensor X = f32({1, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});
  auto Pad = [&](const char *Mode) {
    return OpTest(OpKind::Pad)
        .in(X)
        .constIn(i64({0, 2, 0, 0}))
        .attr("mode", Mode);
  };
  EXPECT_TENSOR(
      Pad("constant").run1(),
      f32({0, 0, 1, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}, {3, 4}));
  // (The spec's reflect example pads this axis of extent 2 by 2; inference
  // requires pads smaller than the extent, as ONNX Runtime and PyTorch do.)
  EXPECT_TENSOR(
      OpTest(OpKind::Pad)
          .in(X)
          .constIn(i64({0, 1, 0, 0}))
          .attr("mode", "reflect")
          .run1(),
      f32({1.2f, 1, 1.2f, 3.4f, 2.3f, 3.4f, 5.7f, 4.5f, 5.7f}, {3, 3}));
  EXPECT_TENSOR(Pad("edge").run1(), f32({1, 1, 1, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f,
                                         4.5f, 4.5f, 4.5f, 5.7f},
                                        {3, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Pad)
                    .in(f32({1, 2}))
                    .constIn(i64({1, 2}))
                    .constIn(f32({1.5f}, {}))
                    .run1(),
                f32({1.5f, 1, 2, 1.5f, 1.5f}));
  // Reflect without repeating the edge; negative pads crop.
  EXPECT_TENSOR(OpTest(OpKind::Pad)
                    .in(i64({1, 2, 3}))
                    .constIn(i64({2, 1}))
                    .attr("mode", "reflect")
                    .run1(),
                i64({3, 2, 1, 2, 3, 2}));
  EXPECT_TENSOR(
      OpTest(OpKind::Pad).in(iota(Shape{5})).constIn(i64({-1, -1})).run1(),
      f32({1, 2, 3}));
  // Both axes of a 2-D tensor.
  EXPECT_TENSOR(OpTest(OpKind::Pad)
                    .in(f32({1, 2, 3, 4}, {2, 2}))
                    .constIn(i64({1, 0, 0, 1}))
                    .attr("mode", "edge")
                    .run1(),
                f32({1, 2, 2, 1, 2, 2, 3, 4, 4}, {3, 3}));
}

TEST(RefShape, PadEveryAxisMatchesTheDefinition) {
  // Three axes padded and cropped in each mode, from a transposed input,
  // against the definition written out per element: an output index reads
  // index o - pad_begin of each axis, reflected, clamped or the constant.
  Tensor X = iota(Shape{4, 3, 2}).permute({2, 1, 0}); // [2, 3, 4], strided.
  std::vector<int64_t> Pads = {1, -1, 2, 0, 2, 1};
  int64_t Dims[3] = {2, 3, 4}, Out[3];
  for (int D = 0; D < 3; ++D)
    Out[D] = Dims[D] + Pads[D] + Pads[D + 3];
  for (const char *Mode : {"constant", "reflect", "edge"}) {
    std::vector<float> Want;
    for (int64_t A = 0; A < Out[0]; ++A)
      for (int64_t B = 0; B < Out[1]; ++B)
        for (int64_t C = 0; C < Out[2]; ++C) {
          int64_t O[3] = {A, B, C}, P[3];
          bool Constant = false;
          for (int D = 0; D < 3; ++D) {
            int64_t N = Dims[D];
            P[D] = O[D] - Pads[D];
            if (P[D] >= 0 && P[D] < N)
              continue;
            if (std::string(Mode) == "constant")
              Constant = true;
            else if (std::string(Mode) == "edge")
              P[D] = P[D] < 0 ? 0 : N - 1;
            else
              P[D] = P[D] < 0 ? -P[D] : 2 * (N - 1) - P[D];
          }
          // X[a, b, c] = iota's element [c, b, a] = c * 6 + b * 2 + a.
          Want.push_back(Constant ? 7.5f
                                  : static_cast<float>(P[2] * 6 + P[1] * 2 +
                                                       P[0]));
        }
    EXPECT_TENSOR(OpTest(OpKind::Pad)
                      .in(X)
                      .constIn(i64(Pads))
                      .constIn(f32({7.5f}, {}))
                      .attr("mode", Mode)
                      .run1(),
                  f32(Want, {Out[0], Out[1], Out[2]}))
        << Mode;
  }
}

TEST(RefShape, ShapeSize) {
  Tensor X = Tensor::empty(Shape{2, 3, 4}, DType::F16);
  EXPECT_TENSOR(OpTest(OpKind::Shape).in(X).run1(), i64({2, 3, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Shape).in(X).attr("start", 1).run1(),
                i64({3, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Shape).in(X).attr("end", -1).run1(),
                i64({2, 3}));
  EXPECT_TENSOR(
      OpTest(OpKind::Shape).in(X).attr("start", -10).attr("end", 10).run1(),
      i64({2, 3, 4}));
  EXPECT_TENSOR(OpTest(OpKind::Shape).in(f32({1}, {})).run1(),
                Tensor::empty(Shape{0}, DType::I64));
  EXPECT_TENSOR(OpTest(OpKind::Size).in(X).run1(), i64({24}, {}));
  EXPECT_TENSOR(
      OpTest(OpKind::Size).in(Tensor::empty(Shape{3, 0}, DType::F32)).run1(),
      i64({0}, {}));
  EXPECT_TENSOR(OpTest(OpKind::Size).in(f32({1}, {})).run1(), i64({1}, {}));
}

} // namespace
