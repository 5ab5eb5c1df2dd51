//===- ResizeKernelsTest.cpp - Reference kernels: Resize ------------------===//
//
// Resize with nearest (the four nearest_mode roundings), linear and cubic
// (cubic_coeff_a, exclude_outside) interpolation, every
// coordinate_transformation_mode (tf_crop_and_resize with roi and
// extrapolation_value), 'scales' or 'sizes' (an empty 'scales' counts as
// absent), integer inputs and the error cases. Expected values are worked
// out by hand from the ONNX formulas (and the ONNX spec examples).
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

/// Resize(X, roi?, scales) with the given attributes.
OpTest byScales(Tensor X, std::vector<float> Scales) {
  OpTest T(OpKind::Resize);
  T.in(std::move(X)).none().in(f32(std::move(Scales)));
  return T;
}

/// Resize(X, roi?, , sizes).
OpTest bySizes(Tensor X, std::vector<int64_t> Sizes) {
  OpTest T(OpKind::Resize);
  T.in(std::move(X)).none().none().in(i64(std::move(Sizes)));
  return T;
}

TEST(RefResize, NearestSpecExamples) {
  // Upsample by [2, 3]: each pixel repeated.
  EXPECT_TENSOR(byScales(f32({1, 2, 3, 4}, {1, 1, 2, 2}), {1, 1, 2, 3}).run1(),
                f32({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                     3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4},
                    {1, 1, 4, 6}));
  // Downsample by 0.6: [2, 4] -> [1, 2]; half_pixel maps x = 1 to 2.0.
  EXPECT_TENSOR(
      byScales(f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}), {1, 1, 0.6f, 0.6f})
          .run1(),
      f32({1, 3}, {1, 1, 1, 2}));
}

TEST(RefResize, NearestModes) {
  // asymmetric, 3 -> 6: source coordinates 0, .5, 1, 1.5, 2, 2.5.
  Tensor X = f32({10, 20, 30});
  auto Run = [&](const char *Mode) {
    return bySizes(X, {6})
        .attr("coordinate_transformation_mode", "asymmetric")
        .attr("nearest_mode", Mode)
        .run1();
  };
  EXPECT_TENSOR(Run("round_prefer_floor"), f32({10, 10, 20, 20, 30, 30}));
  EXPECT_TENSOR(Run("round_prefer_ceil"), f32({10, 20, 20, 30, 30, 30}));
  EXPECT_TENSOR(Run("floor"), f32({10, 10, 20, 20, 30, 30}));
  EXPECT_TENSOR(Run("ceil"), f32({10, 20, 20, 30, 30, 30}));
  // 3 -> 5 (scale 5/3): coordinates 0, .6, 1.2, 1.8, 2.4.
  EXPECT_TENSOR(bySizes(X, {5})
                    .attr("coordinate_transformation_mode", "asymmetric")
                    .attr("nearest_mode", "ceil")
                    .run1(),
                f32({10, 20, 30, 30, 30}));
  EXPECT_TENSOR(bySizes(X, {5})
                    .attr("coordinate_transformation_mode", "asymmetric")
                    .run1(),
                f32({10, 20, 20, 30, 30}));
}

TEST(RefResize, NearestCoordinateModes) {
  Tensor X = f32({0, 10, 20, 30});
  // 4 -> 2: half_pixel gives .5 and 2.5 (ties round down); the old
  // tf_half_pixel_for_nn gives 1 and 3.
  EXPECT_TENSOR(bySizes(X, {2}).run1(), f32({0, 20}));
  EXPECT_TENSOR(
      bySizes(X, {2})
          .attr("coordinate_transformation_mode", "tf_half_pixel_for_nn")
          .run1(),
      f32({10, 30}));
  // align_corners, 4 -> 3: 0, 1.5, 3 with floor.
  EXPECT_TENSOR(bySizes(X, {3})
                    .attr("coordinate_transformation_mode", "align_corners")
                    .attr("nearest_mode", "floor")
                    .run1(),
                f32({0, 10, 30}));
}

TEST(RefResize, LinearSpecExamples) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  // half_pixel, 2 -> 4: coordinates -.25 (edge), .25, .75, 1.25 (edge).
  EXPECT_TENSOR(byScales(X, {1, 1, 2, 2}).attr("mode", "linear").run1(),
                f32({1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25,
                     3.5, 3, 3.25, 3.75, 4},
                    {1, 1, 4, 4}));
  // align_corners: coordinates 0, 1/3, 2/3, 1.
  const float T = 1.0f / 3, S = 2.0f / 3;
  EXPECT_TENSOR_TOL(byScales(X, {1, 1, 2, 2})
                        .attr("mode", "linear")
                        .attr("coordinate_transformation_mode", "align_corners")
                        .run1(),
                    f32({1, 1 + T, 1 + S, 2, 1 + S, 2, 2 + T, 2 + S, 2 + T,
                         2 + S, 3, 3 + T, 3, 3 + T, 3 + S, 4},
                        {1, 1, 4, 4}),
                    1e-6);
  // align_corners under 'scales' uses the fractional resized length
  // (4 * 0.6 = 2.4): x = 1 maps to 3 / 1.4 (the ONNX example, 3.142857).
  EXPECT_TENSOR_TOL(
      byScales(f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}), {1, 1, 0.6f, 0.6f})
          .attr("mode", "linear")
          .attr("coordinate_transformation_mode", "align_corners")
          .run1(),
      f32({1, 1 + 3 / 1.4f}, {1, 1, 1, 2}), 1e-6);
}

TEST(RefResize, LinearOneOutputPixel) {
  // 4 -> 1: half_pixel samples 1.5; pytorch_half_pixel samples 0.
  Tensor X = f32({0, 10, 20, 30});
  EXPECT_TENSOR(bySizes(X, {1}).attr("mode", "linear").run1(), f32({15}));
  EXPECT_TENSOR(
      bySizes(X, {1})
          .attr("mode", "linear")
          .attr("coordinate_transformation_mode", "pytorch_half_pixel")
          .run1(),
      f32({0}));
}

TEST(RefResize, Cubic) {
  // asymmetric, scale 2: x = o / 2. At half-way points the Keys weights
  // (A = -0.75) are -0.09375, 0.59375, 0.59375, -0.09375.
  EXPECT_TENSOR(byScales(f32({0, 0, 10, 0, 0}), {2})
                    .attr("mode", "cubic")
                    .attr("coordinate_transformation_mode", "asymmetric")
                    .run1(),
                f32({0, -0.9375, 0, 5.9375, 10, 5.9375, 0, -0.9375, 0, 0}));
  // A = -0.5 at t = .5: weights -0.0625, 0.5625, 0.5625, -0.0625.
  EXPECT_TENSOR(byScales(f32({0, 0, 10, 0, 0}), {2})
                    .attr("mode", "cubic")
                    .attr("cubic_coeff_a", -0.5f)
                    .attr("coordinate_transformation_mode", "asymmetric")
                    .run1(),
                f32({0, -0.625, 0, 5.625, 10, 5.625, 0, -0.625, 0, 0}));
}

TEST(RefResize, CubicExcludeOutside) {
  // x = 0.5 reads taps -1, 0, 1, 2; tap -1 is clamped to X[0] unless
  // exclude_outside drops it and renormalizes the other three (sum
  // 1.09375).
  Tensor X = f32({10, 0, 0});
  auto Run = [&](int Exclude) {
    return byScales(X, {2})
        .attr("mode", "cubic")
        .attr("coordinate_transformation_mode", "asymmetric")
        .attr("exclude_outside", Exclude)
        .run1();
  };
  Tensor Plain = Run(0), Excl = Run(1);
  EXPECT_NEAR(Plain.getFlat(1), 10 * (0.59375 - 0.09375), 1e-5);
  EXPECT_NEAR(Excl.getFlat(1), 10 * 0.59375 / 1.09375, 1e-5);
  EXPECT_NEAR(Excl.getFlat(0), 10, 1e-5);
}

TEST(RefResize, TfCropAndResize) {
  // roi [0.25, 1.25] of 5 samples, 3 outputs: x = 2 * o + 1; x = 5 lies
  // outside and takes extrapolation_value.
  EXPECT_TENSOR(
      OpTest(OpKind::Resize)
          .in(f32({0, 10, 20, 30, 40}))
          .in(f32({0.25f, 1.25f}))
          .none()
          .in(i64({3}))
          .attr("mode", "linear")
          .attr("coordinate_transformation_mode", "tf_crop_and_resize")
          .attr("extrapolation_value", 7.0f)
          .run1(),
      f32({10, 30, 7}));
  // 2-D: a crop of the centre, rows 1..2 and columns 1..2 of a 4x4 ramp.
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::Resize)
          .in(iota(Shape{4, 4}))
          .in(f32({1.0f / 3, 1.0f / 3, 2.0f / 3, 2.0f / 3}))
          .none()
          .in(i64({2, 2}))
          .attr("mode", "linear")
          .attr("coordinate_transformation_mode", "tf_crop_and_resize")
          .run1(),
      f32({5, 6, 9, 10}, {2, 2}), 1e-5);
}

TEST(RefResize, EmptyScalesAndIntegers) {
  // Opset-11 style: an empty scales tensor next to sizes.
  EXPECT_TENSOR(OpTest(OpKind::Resize)
                    .in(f32({1, 2, 3, 4}, {2, 2}))
                    .in(f32({}))
                    .in(f32({}))
                    .in(i64({4, 1}))
                    .run1(),
                f32({1, 1, 3, 3}, {4, 1}));
  // Integer data: nearest copies values, linear rounds.
  EXPECT_TENSOR(byScales(u8({7, 9}), {2}).run1(), u8({7, 7, 9, 9}));
  EXPECT_TENSOR(byScales(i32({0, 9}), {2}).attr("mode", "linear").run1(),
                i32({0, 2, 7, 9}));
  // A zero-sized output.
  EXPECT_TENSOR(bySizes(f32({1, 2}), {0}).run1(), f32({}, {0}));
}

TEST(RefResize, ByOneIsACopy) {
  // Every mode and most coordinate modes map a resize by 1 to the input
  // (a strided view is read as it lies); align_corners on one axis of one
  // pixel and a half-pixel scale of 1 with other sizes still interpolate.
  Tensor X = f32({1.5f, -2, std::nanf(""), INFINITY, 0.25f, -0.f}, {1, 2, 3});
  for (const char *Mode : {"nearest", "linear", "cubic"}) {
    EXPECT_TENSOR(byScales(X, {1, 1, 1}).attr("mode", Mode).run1(), X);
    EXPECT_TENSOR(
        bySizes(X.permute({0, 2, 1}), {1, 3, 2}).attr("mode", Mode).run1(),
        X.permute({0, 2, 1}).contiguous());
  }
  EXPECT_TENSOR(bySizes(i32({3, -7, 12}), {3}).attr("mode", "linear").run1(),
                i32({3, -7, 12}));
  // Not a copy: a crop of the same size.
  EXPECT_TENSOR_TOL(
      OpTest(OpKind::Resize)
          .in(f32({1, 2, 3, 4}))
          .in(f32({0.25f, 1.0f}))
          .none()
          .in(i64({4}))
          .attr("coordinate_transformation_mode", "tf_crop_and_resize")
          .attr("mode", "linear")
          .run1(),
      f32({1.75f, 2.5f, 3.25f, 4.0f}), 1e-5);
}

TEST(RefResize, Errors) {
  EXPECT_FAILS(
      OpTest(OpKind::Resize).in(f32({1, 2})).none().in(f32({2})).in(i64({4})),
      "not both");
  EXPECT_FAILS(bySizes(f32({1, 2}), {4, 4}), "rank 1");
  EXPECT_FAILS(byScales(f32({1, 2}), {-1}), "positive");
  EXPECT_FAILS(bySizes(f32({1, 2}), {4}).attr("mode", "area"), "mode");
  EXPECT_FAILS(
      bySizes(f32({1, 2}), {4})
          .attr("coordinate_transformation_mode", "tf_crop_and_resize"),
      "roi");
  EXPECT_FAILS(OpTest(OpKind::Resize).in(f32({1, 2})), "scales");
}

} // namespace
