//===- CpuScatterTest.cpp - ScatterElements' own loop against the reference
//===//
//
// The cpu backend writes ScatterElements without a reduction on its own
// loop (KernelsScatter.cpp): checked against the reference kernel on every
// axis of rank 1 to 4 tensors, indices smaller than data, negative and
// repeated indices (the last write wins), i32 and i64 indices, 1- to
// 8-byte dtypes and torchvision's MultiScaleRoIAlign pattern; reductions go
// to the reference kernel, and an index out of range is reported.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

namespace {

/// Indices of shape S in [-N, N) (many repeats), as dtype T.
Tensor indices(const Shape &S, int64_t N, unsigned Seed, DType T = DType::I64) {
  std::mt19937 Gen(Seed);
  Tensor R = Tensor::empty(S, T);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I,
              static_cast<double>(static_cast<int64_t>(Gen() % (2 * N)) - N));
  return R;
}

Case scatter(Tensor Data, Tensor Idx, Tensor Upd, int64_t Axis) {
  return mk(ir::OpKind::ScatterElements,
            {std::move(Data), std::move(Idx), std::move(Upd)})
      .attr("axis", Axis);
}

TEST(CpuScatterElements, OwnLoopMatchesTheReference) {
  REQUIRE_ONEDNN();
  unsigned Seed = 400;
  std::vector<Shape> DataShapes = {{9}, {6, 7}, {4, 5, 6}, {3, 4, 5, 6}};
  for (const Shape &DS : DataShapes) {
    int64_t R = static_cast<int64_t>(DS.rank());
    // Indices as large as data, and smaller on every axis.
    Shape Small = DS;
    for (size_t D = 0; D < DS.rank(); ++D)
      Small[D] = std::max<int64_t>(1, DS[D] - 2);
    for (const Shape &IS : {DS, Small})
      for (int64_t Axis = -R; Axis < R; ++Axis) {
        int64_t A = Axis < 0 ? Axis + R : Axis;
        Tensor Data = rnd(DS, ++Seed);
        check(scatter(Data, indices(IS, DS[A], ++Seed), rnd(IS, ++Seed), Axis)
                  .expect(Expect::Fast));
        check(scatter(Data, indices(IS, DS[A], ++Seed, DType::I32),
                      rnd(IS, ++Seed), Axis)
                  .expect(Expect::Fast));
      }
  }
  // Other dtypes: 1, 2 and 8 bytes.
  for (DType T : {DType::U8, DType::F16, DType::I64}) {
    Tensor Data = rnd({5, 6}, ++Seed, 0, 100, T);
    check(scatter(Data, indices({4, 6}, 5, ++Seed),
                  rnd({4, 6}, ++Seed, 0, 100, T), 0)
              .expect(Expect::Fast));
    check(scatter(Data, indices({5, 3}, 6, ++Seed),
                  rnd({5, 3}, ++Seed, 0, 100, T), 1)
              .expect(Expect::Fast));
  }
}

TEST(CpuScatterElements, RoiPoolPatternAndEdgeCases) {
  REQUIRE_ONEDNN();
  // MultiScaleRoIAlign: zeros [rois, C, 7, 7], the level's rois' positions
  // expanded over [level rois, C, 7, 7], the level's pooled features.
  std::vector<int64_t> Pos = {4, 0, 7, 2};
  Tensor Idx = Tensor::empty({4, 8, 7, 7}, DType::I64);
  for (int64_t I = 0; I < Idx.numel(); ++I)
    Idx.setFlat(I, static_cast<double>(Pos[static_cast<size_t>(I / (8 * 49))]));
  check(scatter(Tensor::empty({9, 8, 7, 7}, DType::F32), Idx,
                rnd({4, 8, 7, 7}, 420), 0)
            .expect(Expect::Fast));
  // No updates.
  check(scatter(rnd({3, 4}, 421), i64({}, {0, 4}), f32({}, {0, 4}), 0)
            .expect(Expect::Fast));
  // A reduction runs on the reference kernel.
  check(
      scatter(rnd({3, 4}, 422), i64({0, 2, 0, 1}, {1, 4}), rnd({1, 4}, 423), 0)
          .attr("reduction", std::string("add"))
          .expect(Expect::Reference));
}

TEST(CpuScatterElements, IndexOutOfRangeIsReported) {
  REQUIRE_ONEDNN();
  Case C = scatter(rnd({3, 4}, 430), i64({0, 3}, {1, 2}), rnd({1, 2}, 431), 0);
  std::vector<Tensor> Feeds;
  std::unique_ptr<ir::Graph> G = C.graph(Feeds);
  EXPECT_THROW(
      backends::compileCpu(*G, backends::CpuMode::NodeByNode)->run(Feeds),
      Error);
}

} // namespace
