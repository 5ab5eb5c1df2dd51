//===- SliceGeometry.h - What Slice keeps of one axis -----------*- C++ -*-===//
//
// ONNX Slice on one axis, in one place for shape inference, the reference
// kernel and the cpu backend's views: negative bounds count from the end,
// out-of-range bounds are clamped (to [0, extent] going forward, to
// [-1, extent - 1] going backward).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>

namespace nng::ir {

/// The elements Slice keeps of one axis: Length of them, the first at
/// index Start (meaningful when Length > 0), then every Step-th.
struct SliceAxis {
  int64_t Start = 0;
  int64_t Length = 0;
};

/// Slice [Start, End) by Step (nonzero) of an axis of extent Extent.
inline SliceAxis sliceAxis(int64_t Extent, int64_t Start, int64_t End,
                           int64_t Step) {
  if (Extent <= 0)
    return {};
  Step = std::max<int64_t>(Step, -INT64_MAX); // -Step must not overflow.
  if (Start < 0)
    Start += Extent;
  if (End < 0)
    End += Extent;
  if (Step > 0) {
    Start = std::clamp<int64_t>(Start, 0, Extent);
    End = std::clamp<int64_t>(End, 0, Extent);
    return {Start, End > Start ? 1 + (End - Start - 1) / Step : 0};
  }
  Start = std::clamp<int64_t>(Start, 0, Extent - 1);
  End = std::clamp<int64_t>(End, -1, Extent - 1);
  return {Start, Start > End ? 1 + (Start - End - 1) / -Step : 0};
}

} // namespace nng::ir
