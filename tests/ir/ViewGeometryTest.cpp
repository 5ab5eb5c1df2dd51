//===- ViewGeometryTest.cpp - Slice's clamping and Transpose's perm -------===//
//
// ir::sliceAxis (negative bounds, clamping forward and backward, empty
// results, extreme steps) and ir::transposePerm (the default reversal and
// the rejected non-permutations) as inference, the reference kernel and
// the cpu backend's views use them.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/ViewGeometry.h"

#include <gtest/gtest.h>

#include <climits>

using namespace nng::ir;

namespace {

TEST(ViewGeometry, SliceAxisClampsLikeNumpy) {
  auto Is = [](SliceAxis A, int64_t Start, int64_t Len) {
    return A.Length == Len && (Len == 0 || A.Start == Start);
  };
  EXPECT_TRUE(Is(sliceAxis(10, 2, 5, 1), 2, 3));
  EXPECT_TRUE(Is(sliceAxis(10, -3, INT64_MAX, 1), 7, 3));
  EXPECT_TRUE(Is(sliceAxis(10, -100, 100, 3), 0, 4));  // 0 3 6 9
  EXPECT_TRUE(Is(sliceAxis(10, 8, 1, -2), 8, 4));      // 8 6 4 2
  EXPECT_TRUE(Is(sliceAxis(10, 100, -100, -1), 9, 10)); // reversed whole
  EXPECT_TRUE(Is(sliceAxis(10, 5, 2, 1), 0, 0));
  EXPECT_TRUE(Is(sliceAxis(0, 0, 5, 1), 0, 0));
  EXPECT_TRUE(Is(sliceAxis(10, 0, 10, INT64_MAX), 0, 1));
  EXPECT_TRUE(Is(sliceAxis(10, 9, -11, INT64_MIN), 9, 1));
}

TEST(ViewGeometry, TransposePermIsAPermutationOrNothing) {
  EXPECT_EQ(transposePerm({}, 3), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(transposePerm({1, 0, 2}, 3), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(transposePerm({}, 0), std::vector<int64_t>{});
  EXPECT_FALSE(transposePerm({0, 1}, 3));     // Too short.
  EXPECT_FALSE(transposePerm({0, 0, 1}, 3));  // Repeated axis.
  EXPECT_FALSE(transposePerm({0, 1, 3}, 3));  // Out of range.
  EXPECT_FALSE(transposePerm({0, -1, 1}, 3)); // Negative (ONNX has none).
}

} // namespace
