//===- SamplingKernelsTest.cpp - Kernels: GridSample, RoiAlign, NMS -------===//
//
// GridSample in its three modes, three padding modes and both
// align_corners settings on a 2x2 image (values worked out from PyTorch's
// grid_sample formulas); RoiAlign on a linear ramp, where bilinear samples
// are exact and an average is the ramp at the bin centre; NonMaxSuppression
// on the ONNX spec examples (IoU suppression, score threshold, center-point
// boxes, flipped corners, batches and classes, the output limit).
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <algorithm>
#include <random>

using namespace nng;
using namespace nng::reftest;

namespace {

/// GridSample of the image [[1, 2], [3, 4]] at the given (x, y) points.
Tensor sample(std::vector<float> Points, const char *Mode, const char *Pad,
              int Align) {
  int64_t N = static_cast<int64_t>(Points.size() / 2);
  Tensor Grid = Tensor::fromVector(Points, Shape{1, 1, N, 2});
  return OpTest(OpKind::GridSample)
      .in(f32({1, 2, 3, 4}, {1, 1, 2, 2}))
      .in(Grid)
      .attr("mode", Mode)
      .attr("padding_mode", Pad)
      .attr("align_corners", Align)
      .run1();
}

TEST(RefGridSample, Bilinear) {
  // align_corners: -1 and 1 are the pixel centres; 0 is their midpoint.
  EXPECT_TENSOR(
      sample({-1, -1, 1, -1, 0, 0, 1, 1, 0, 1}, "bilinear", "zeros", 1),
      f32({1, 2, 2.5, 4, 3.5}, {1, 1, 1, 5}));
  // Without: -1 is the outer edge (pixel coordinate -0.5); zeros padding
  // weighs in three zero taps, border clamps to the corner, reflection
  // mirrors at the edge onto the corner.
  EXPECT_TENSOR(sample({-1, -1, 0, 0}, "bilinear", "zeros", 0),
                f32({0.25, 2.5}, {1, 1, 1, 2}));
  EXPECT_TENSOR(sample({-1, -1, 0, 0}, "bilinear", "border", 0),
                f32({1, 2.5}, {1, 1, 1, 2}));
  EXPECT_TENSOR(sample({-1, -1, 0, 0}, "bilinear", "reflection", 0),
                f32({1, 2.5}, {1, 1, 1, 2}));
  // Far outside: zeros gives 0, border the nearest corner; reflection with
  // align_corners folds x = 3 (pixel 2) back to pixel 0.
  EXPECT_TENSOR(sample({5, 5, 3, -1}, "bilinear", "zeros", 1),
                f32({0, 0}, {1, 1, 1, 2}));
  EXPECT_TENSOR(sample({5, 5, 3, -1}, "bilinear", "border", 1),
                f32({4, 2}, {1, 1, 1, 2}));
  EXPECT_TENSOR(sample({3, -1}, "bilinear", "reflection", 1),
                f32({1}, {1, 1, 1, 1}));
}

TEST(RefGridSample, Nearest) {
  // (0.2, -0.2) with align_corners: pixel (0.6, 0.4) -> column 1, row 0.
  // Exactly half-way rounds to even: (0, 0) -> pixel (0.5, 0.5) -> (0, 0).
  EXPECT_TENSOR(sample({0.2f, -0.2f, 0, 0, 0.2f, 0.6f}, "nearest", "zeros", 1),
                f32({2, 1, 4}, {1, 1, 1, 3}));
  EXPECT_TENSOR(sample({-3, 0}, "nearest", "zeros", 0), f32({0}, {1, 1, 1, 1}));
  EXPECT_TENSOR(sample({-3, 0}, "nearest", "border", 0),
                f32({1}, {1, 1, 1, 1}));
}

TEST(RefGridSample, Bicubic) {
  // At pixel centres bicubic is exact.
  EXPECT_TENSOR(sample({-1, -1, 1, 1}, "bicubic", "zeros", 1),
                f32({1, 4}, {1, 1, 1, 2}));
  // Midpoint: per-axis weights -0.09375, 0.59375, 0.59375, -0.09375 on
  // taps -1, 0, 1, 2. Zeros padding keeps only the inner two (0.59375^2 *
  // 10); border clamps the outer taps onto them (0.5 each: the mean).
  EXPECT_TENSOR(sample({0, 0}, "bicubic", "zeros", 1),
                f32({0.59375f * 0.59375f * 10}, {1, 1, 1, 1}));
  EXPECT_TENSOR(sample({0, 0}, "bicubic", "border", 1),
                f32({2.5}, {1, 1, 1, 1}));
}

TEST(RefGridSample, ShapesAndErrors) {
  // Two channels, a 2x3 output grid of one point.
  Tensor Grid =
      Tensor::fromVector(std::vector<float>(12, 0.0f), Shape{1, 2, 3, 2});
  Tensor Y = OpTest(OpKind::GridSample)
                 .in(iota(Shape{1, 2, 2, 2}))
                 .in(Grid)
                 .attr("align_corners", 1)
                 .run1();
  EXPECT_EQ(Y.shape(), (Shape{1, 2, 2, 3}));
  EXPECT_NEAR(Y.getFlat(0), 1.5, 1e-6);
  EXPECT_NEAR(Y.getFlat(6), 5.5, 1e-6);
  EXPECT_FAILS(OpTest(OpKind::GridSample)
                   .in(iota(Shape{1, 1, 2, 2}))
                   .in(Grid)
                   .attr("mode", "area"),
               "mode");
  EXPECT_FAILS(OpTest(OpKind::GridSample)
                   .in(iota(Shape{1, 1, 2, 2}))
                   .in(iota(Shape{1, 2, 3, 3})),
               "grid");
}

/// RoiAlign on the ramp X[y][x] = 4 y + x (4x4, batch of two: the second
/// image adds 16).
OpTest roiAlign(std::vector<float> Roi, int64_t Batch, int64_t OH, int64_t OW,
                int64_t Sampling, const char *Coord, const char *Mode = "avg") {
  OpTest T(OpKind::RoiAlign);
  T.in(iota(Shape{2, 1, 4, 4}))
      .in(f32(std::move(Roi), {1, 4}))
      .in(i64({Batch}))
      .attr("output_height", OH)
      .attr("output_width", OW)
      .attr("sampling_ratio", Sampling)
      .attr("coordinate_transformation_mode", Coord)
      .attr("mode", Mode);
  return T;
}

TEST(RefRoiAlign, AverageIsTheRampAtTheBinCentre) {
  // half_pixel shifts the roi by -0.5: [0, 3] covers [-0.5, 2.5], centre 1.
  EXPECT_TENSOR(roiAlign({0, 0, 3, 3}, 0, 1, 1, 2, "half_pixel").run1(),
                f32({5}, {1, 1, 1, 1}));
  // output_half_pixel: centre 1.5.
  EXPECT_TENSOR(roiAlign({0, 0, 3, 3}, 0, 1, 1, 2, "output_half_pixel").run1(),
                f32({7.5}, {1, 1, 1, 1}));
  // 2x2 bins of [0, 2]: centres 0.5 and 1.5; batch 1 adds 16.
  EXPECT_TENSOR(roiAlign({0, 0, 2, 2}, 1, 2, 2, 1, "output_half_pixel").run1(),
                f32({18.5, 19.5, 22.5, 23.5}, {1, 1, 2, 2}));
  // Adaptive sampling (ratio 0): ceil(2 / 1) = 2 samples per axis.
  EXPECT_TENSOR(roiAlign({0, 0, 2, 2}, 0, 1, 1, 0, "output_half_pixel").run1(),
                f32({5}, {1, 1, 1, 1}));
  // spatial_scale halves the roi: [0, 4] -> [0, 2].
  EXPECT_TENSOR(roiAlign({0, 0, 4, 4}, 0, 1, 1, 2, "output_half_pixel")
                    .attr("spatial_scale", 0.5f)
                    .run1(),
                f32({5}, {1, 1, 1, 1}));
}

TEST(RefRoiAlign, Max) {
  // One sample at (1, 1): a single tap of weight 1.
  EXPECT_TENSOR(
      roiAlign({0, 0, 2, 2}, 0, 1, 1, 1, "output_half_pixel", "max").run1(),
      f32({5}, {1, 1, 1, 1}));
  // Samples at 0.5 / 1.5: ONNX Runtime's max takes the largest weighted
  // tap (0.25 * pixel); the last sample's is 0.25 * 10.
  EXPECT_TENSOR(
      roiAlign({0, 0, 2, 2}, 0, 1, 1, 2, "output_half_pixel", "max").run1(),
      f32({2.5}, {1, 1, 1, 1}));
}

TEST(RefRoiAlign, Errors) {
  EXPECT_FAILS(roiAlign({0, 0, 2, 2}, 2, 1, 1, 1, "half_pixel"), "batch index");
  EXPECT_FAILS(roiAlign({0, 0, 2, 2}, 0, 1, 1, 1, "half_pixel", "min"), "mode");
  EXPECT_FAILS(roiAlign({0, 0, 2, 2}, 0, 0, 1, 1, "half_pixel"), ">= 1");
}

/// The ONNX example boxes: three overlapping near y = 0, two near y = 10,
/// one at y = 100.
Tensor nmsBoxes() {
  return f32({0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
              0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101},
             {1, 6, 4});
}
Tensor nmsScores() {
  return f32({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}, {1, 1, 6});
}

OpTest nms(Tensor Boxes, Tensor Scores, int64_t Max, float Iou, float Score) {
  OpTest T(OpKind::NonMaxSuppression);
  T.in(std::move(Boxes))
      .in(std::move(Scores))
      .in(i64({Max}))
      .in(f32({Iou}))
      .in(f32({Score}));
  return T;
}

TEST(RefNonMaxSuppression, SpecExamples) {
  // By score: 3 (.95), 0 (.9); 1, 2 overlap 0 with IoU .82; 4 overlaps 3.
  EXPECT_TENSOR(nms(nmsBoxes(), nmsScores(), 3, 0.5f, 0).run1(),
                i64({0, 0, 3, 0, 0, 0, 0, 0, 5}, {3, 3}));
  // Score threshold 0.4 drops box 5.
  EXPECT_TENSOR(nms(nmsBoxes(), nmsScores(), 3, 0.5f, 0.4f).run1(),
                i64({0, 0, 3, 0, 0, 0}, {2, 3}));
  // The limit of 2 per class.
  EXPECT_TENSOR(nms(nmsBoxes(), nmsScores(), 2, 0.5f, 0).run1(),
                i64({0, 0, 3, 0, 0, 0}, {2, 3}));
  // Flipped corners mean the same boxes.
  Tensor Flipped = f32({1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                        0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100},
                       {1, 6, 4});
  EXPECT_TENSOR(nms(Flipped, nmsScores(), 3, 0.5f, 0).run1(),
                i64({0, 0, 3, 0, 0, 0, 0, 0, 5}, {3, 3}));
}

TEST(RefNonMaxSuppression, CenterBoxesBatchesClasses) {
  // The same boxes as [x_center, y_center, width, height].
  Tensor Center =
      f32({0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
           0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1},
          {1, 6, 4});
  EXPECT_TENSOR(
      nms(Center, nmsScores(), 3, 0.5f, 0).attr("center_point_box", 1).run1(),
      i64({0, 0, 3, 0, 0, 0, 0, 0, 5}, {3, 3}));
  // Two classes with the same scores, two batches with the same boxes.
  Tensor Boxes2 = Tensor::empty(Shape{2, 6, 4}, DType::F32);
  Tensor Scores2 = Tensor::empty(Shape{2, 2, 6}, DType::F32);
  for (int64_t I = 0; I < 48; ++I)
    Boxes2.setFlat(I, nmsBoxes().getFlat(I % 24));
  for (int64_t I = 0; I < 24; ++I)
    Scores2.setFlat(I, nmsScores().getFlat(I % 6));
  EXPECT_TENSOR(nms(Boxes2, Scores2, 2, 0.5f, 0).run1(),
                i64({0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0,
                     1, 0, 3, 1, 0, 0, 1, 1, 3, 1, 1, 0},
                    {8, 3}));
  // Identical boxes: only the first of equal scores survives.
  Tensor Same = f32(std::vector<float>(12, 1.0f), {1, 3, 4});
  for (int64_t I = 0; I < 3; ++I) {
    Same.setFlat(I * 4, 0);
    Same.setFlat(I * 4 + 1, 0);
  }
  EXPECT_TENSOR(
      nms(Same, f32({0.9f, 0.9f, 0.9f}, {1, 1, 3}), 3, 0.5f, 0).run1(),
      i64({0, 0, 0}, {1, 3}));
}

/// Greedy NMS as ONNX defines it, plainly: every candidate (score above
/// the threshold, by falling score, ties in index order) against every box
/// kept before it; [y1, x1, y2, x2] boxes.
std::vector<int64_t> greedyNms(const std::vector<float> &B,
                               const std::vector<float> &S, double Iou,
                               double Thr) {
  auto Area = [&](int64_t I) {
    return (std::max(B[I * 4], B[I * 4 + 2]) -
            std::min(B[I * 4], B[I * 4 + 2])) *
           double(std::max(B[I * 4 + 1], B[I * 4 + 3]) -
                  std::min(B[I * 4 + 1], B[I * 4 + 3]));
  };
  auto IoU = [&](int64_t I, int64_t J) {
    double A = Area(I), C = Area(J);
    if (A <= 0 || C <= 0)
      return 0.0;
    double Y1 = std::max<double>(std::min(B[I * 4], B[I * 4 + 2]),
                                 std::min(B[J * 4], B[J * 4 + 2]));
    double Y2 = std::min<double>(std::max(B[I * 4], B[I * 4 + 2]),
                                 std::max(B[J * 4], B[J * 4 + 2]));
    double X1 = std::max<double>(std::min(B[I * 4 + 1], B[I * 4 + 3]),
                                 std::min(B[J * 4 + 1], B[J * 4 + 3]));
    double X2 = std::min<double>(std::max(B[I * 4 + 1], B[I * 4 + 3]),
                                 std::max(B[J * 4 + 1], B[J * 4 + 3]));
    if (Y2 - Y1 <= 0 || X2 - X1 <= 0)
      return 0.0;
    double In = (Y2 - Y1) * (X2 - X1);
    return In / (A + C - In);
  };
  std::vector<int64_t> Cand;
  for (int64_t I = 0; I < static_cast<int64_t>(S.size()); ++I)
    if (S[I] > Thr)
      Cand.push_back(I);
  std::stable_sort(Cand.begin(), Cand.end(),
                   [&](int64_t L, int64_t R) { return S[L] > S[R]; });
  std::vector<int64_t> Kept;
  for (int64_t I : Cand) {
    bool Keep = true;
    for (int64_t J : Kept)
      Keep = Keep && IoU(I, J) <= Iou;
    if (Keep)
      Kept.push_back(I);
  }
  return Kept;
}

TEST(RefNonMaxSuppression, ManyBoxesMatchTheGreedyDefinition) {
  // A detector's batched call: 3000 boxes of 3 classes, each class's boxes
  // offset apart (one NonMaxSuppression for all), some empty, some with
  // flipped corners; IoU thresholds 0.5, 0 (any overlap suppresses) and
  // 1 (nothing does).
  std::mt19937 Rng(11);
  std::uniform_real_distribution<float> U(0, 1);
  const int64_t N = 3000;
  std::vector<float> B(N * 4), S(N);
  for (int64_t I = 0; I < N; ++I) {
    float Off = static_cast<float>(I % 3) * 200;
    float Y = Off + U(Rng) * 100, X = Off + U(Rng) * 100;
    float H = I % 97 == 0 ? 0 : 1 + U(Rng) * 20, W = 1 + U(Rng) * 20;
    bool Flip = I % 5 == 0;
    B[I * 4] = Flip ? Y + H : Y, B[I * 4 + 2] = Flip ? Y : Y + H;
    B[I * 4 + 1] = X, B[I * 4 + 3] = X + W;
    S[I] = std::round(U(Rng) * 500) / 500; // Ties too.
  }
  for (float Iou : {0.5f, 0.0f, 1.0f}) {
    std::vector<int64_t> Want = greedyNms(B, S, Iou, double(0.1f));
    std::vector<int64_t> Flat;
    for (int64_t I : Want)
      Flat.insert(Flat.end(), {0, 0, I});
    EXPECT_TENSOR(
        nms(f32(B, {1, N, 4}), f32(S, {1, 1, N}), N, Iou, 0.1f).run1(),
        i64(Flat, {static_cast<int64_t>(Want.size()), 3}))
        << "IoU threshold " << Iou;
  }
}

TEST(RefNonMaxSuppression, DefaultsAndErrors) {
  // Without max_output_boxes_per_class nothing is selected.
  EXPECT_TENSOR(
      OpTest(OpKind::NonMaxSuppression).in(nmsBoxes()).in(nmsScores()).run1(),
      i64({}, {0, 3}));
  // Without thresholds: IoU 0 suppresses any overlap; no score filter.
  EXPECT_TENSOR(OpTest(OpKind::NonMaxSuppression)
                    .in(nmsBoxes())
                    .in(nmsScores())
                    .in(i64({10}))
                    .run1(),
                i64({0, 0, 3, 0, 0, 0, 0, 0, 5}, {3, 3}));
  EXPECT_FAILS(OpTest(OpKind::NonMaxSuppression)
                   .in(nmsBoxes())
                   .in(f32({1, 2}, {1, 1, 2})),
               "boxes");
}

} // namespace
