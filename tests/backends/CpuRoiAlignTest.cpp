//===- CpuRoiAlignTest.cpp - RoiAlign's own f32 loop against the reference ===//
//
// The cpu backend runs RoiAlign on f32 feature maps on its own loop
// (KernelsRoiAlign.cpp): checked against the reference kernel (f64) in both
// modes (avg, max), both coordinate transformations, fixed and adaptive
// sampling grids and two spatial scales, on random rois that include boxes
// partly or wholly outside the map, empty and inverted boxes, and boxes
// larger than the map; the call counters say the loop served each case.
// An out-of-range batch index goes to the reference kernel, which reports
// it.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

namespace {

constexpr int64_t Batch = 2, Chans = 5, H = 13, W = 17;

/// NR rois over a map of H x W pixels at Scale: random boxes spilling
/// past every edge, then the special ones.
Tensor rois(int64_t NR, unsigned Seed, float Scale) {
  std::mt19937 Gen(Seed);
  float MaxX = static_cast<float>(W) / Scale,
        MaxY = static_cast<float>(H) / Scale;
  std::uniform_real_distribution<float> UX(-0.3f * MaxX, 1.3f * MaxX),
      UY(-0.3f * MaxY, 1.3f * MaxY);
  std::vector<float> V;
  for (int64_t R = 0; R < NR; ++R) {
    float X1 = UX(Gen), Y1 = UY(Gen), X2 = UX(Gen), Y2 = UY(Gen);
    // Mostly well-formed boxes; every fifth one inverted.
    if (R % 5 != 4) {
      if (X2 < X1)
        std::swap(X1, X2);
      if (Y2 < Y1)
        std::swap(Y1, Y2);
    }
    V.insert(V.end(), {X1, Y1, X2, Y2});
  }
  // An empty box, a point on the edge, a box around the whole map, one
  // wholly outside, one sub-pixel box.
  V.insert(V.end(), {3, 4, 3, 4});
  V.insert(V.end(), {MaxX, MaxY, MaxX, MaxY});
  V.insert(V.end(), {-2 * MaxX, -2 * MaxY, 3 * MaxX, 3 * MaxY});
  V.insert(V.end(), {2 * MaxX, 2 * MaxY, 3 * MaxX, 3 * MaxY});
  V.insert(V.end(), {5.1f, 6.2f, 5.3f, 6.25f});
  int64_t N = static_cast<int64_t>(V.size() / 4);
  return Tensor::fromVector(V, Shape{N, 4});
}

Tensor batchIndices(int64_t NR, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::vector<int64_t> V;
  for (int64_t R = 0; R < NR; ++R)
    V.push_back(static_cast<int64_t>(Gen() % Batch));
  return Tensor::fromVector(V, Shape{NR});
}

TEST(CpuRoiAlign, OwnLoopMatchesTheReference) {
  REQUIRE_ONEDNN();
  unsigned Seed = 350;
  Tensor X = rnd({Batch, Chans, H, W}, Seed, -2, 3);
  for (float Scale : {1.0f, 0.25f})
    for (const char *Coord : {"half_pixel", "output_half_pixel"})
      for (const char *Mode : {"avg", "max"})
        for (int64_t SR : {0, 2, 3}) {
          Tensor R = rois(12, ++Seed, Scale);
          check(
              mk(ir::OpKind::RoiAlign, {X, R, batchIndices(R.size(0), ++Seed)})
                  .attr("mode", std::string(Mode))
                  .attr("coordinate_transformation_mode", std::string(Coord))
                  .attr("output_height", int64_t(3))
                  .attr("output_width", int64_t(4))
                  .attr("sampling_ratio", SR)
                  .attr("spatial_scale", Scale)
                  .expect(Expect::Fast));
        }
}

TEST(CpuRoiAlign, DetectorShapesAndEdgeCases) {
  REQUIRE_ONEDNN();
  // torchvision's MultiScaleRoIAlign: 7x7 bins, sampling ratio 2, a feature
  // map at 1/8 of the image; more rois than channels' worth of work.
  Tensor X = rnd({1, 16, 40, 40}, 360);
  Tensor R = rois(150, 361, 0.125f);
  check(mk(ir::OpKind::RoiAlign, {X, R, i64(std::vector<int64_t>(R.size(0)))})
            .attr("coordinate_transformation_mode", std::string("half_pixel"))
            .attr("output_height", int64_t(7))
            .attr("output_width", int64_t(7))
            .attr("sampling_ratio", int64_t(2))
            .attr("spatial_scale", 0.125f)
            .expect(Expect::Fast));
  // A 1x1 map, no rois, i32 batch indices, NaN and infinities in the map.
  check(mk(ir::OpKind::RoiAlign, {rnd({1, 3, 1, 1}, 362), rois(4, 363, 1),
                                  i64({0, 0, 0, 0, 0, 0, 0, 0, 0})})
            .attr("output_height", int64_t(2))
            .attr("output_width", int64_t(2))
            .expect(Expect::Fast));
  check(mk(ir::OpKind::RoiAlign,
           {rnd({1, 3, 6, 6}, 364), f32({}, {0, 4}), i64({}, {0})})
            .expect(Expect::Fast));
  // An all-negative map: max over a bin mixes negative taps with the 0 of
  // samples outside the map (samples far apart, so that some bins have
  // no sample clamped to the map's edge, whose weighted taps are 0).
  Tensor Neg = rnd({Batch, Chans, H, W}, 366, -3, -1);
  for (int64_t SR : {1, 2, 3}) {
    Tensor R = rois(20, 367 + SR, 1);
    check(mk(ir::OpKind::RoiAlign, {Neg, R, batchIndices(R.size(0), 368)})
              .attr("mode", std::string("max"))
              .attr("output_height", int64_t(2))
              .attr("output_width", int64_t(2))
              .attr("sampling_ratio", SR)
              .expect(Expect::Fast));
  }
  Tensor Odd = rnd({1, 2, 6, 7}, 365);
  Odd.setFlat(3, std::nan(""));
  Odd.setFlat(20, INFINITY);
  Odd.setFlat(50, -INFINITY);
  for (const char *Mode : {"avg", "max"})
    check(mk(ir::OpKind::RoiAlign,
             {Odd, f32({0, 0, 3, 3, 1, 1, 6, 5, 2, 0, 7, 6}, {3, 4}),
              i32({0, 0, 0})})
              .attr("mode", std::string(Mode))
              .attr("output_height", int64_t(2))
              .attr("output_width", int64_t(3))
              .attr("sampling_ratio", int64_t(2))
              .expect(Expect::Fast));
}

TEST(CpuRoiAlign, BadBatchIndexIsReported) {
  REQUIRE_ONEDNN();
  Case C = mk(ir::OpKind::RoiAlign,
              {rnd({1, 2, 5, 5}, 370), f32({0, 0, 2, 2}, {1, 4}), i64({1})});
  std::vector<Tensor> Feeds;
  std::unique_ptr<ir::Graph> G = C.graph(Feeds);
  EXPECT_THROW(
      backends::compileCpu(*G, backends::CpuMode::NodeByNode)->run(Feeds),
      Error);
}

} // namespace
