//===- ViewGeometry.h - What Slice and Transpose keep -----------*- C++ -*-===//
//
// The geometry of ONNX's view ops, in one place for shape inference, the
// kernels and the cpu backend's views: Slice on one axis (negative bounds
// count from the end, out-of-range bounds are clamped: to [0, extent] going
// forward, to [-1, extent - 1] going backward), Transpose's perm, and
// which input index each output index of Pad reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

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

/// Transpose's perm for rank Rank: Given (each axis of [0, Rank) once), or
/// the reversed axes when Given is empty (the attribute's absence);
/// nullopt when Given is not a permutation.
inline std::optional<std::vector<int64_t>>
transposePerm(const std::vector<int64_t> &Given, int64_t Rank) {
  std::vector<int64_t> Perm = Given;
  if (Perm.empty())
    for (int64_t D = Rank; D-- > 0;)
      Perm.push_back(D);
  if (static_cast<int64_t>(Perm.size()) != Rank)
    return std::nullopt;
  std::vector<bool> Seen(static_cast<size_t>(Rank), false);
  for (int64_t P : Perm) {
    if (P < 0 || P >= Rank || Seen[P])
      return std::nullopt;
    Seen[P] = true;
  }
  return Perm;
}

/// Pad's modes (ONNX's "constant", "reflect", "edge").
enum class PadMode { Constant, Reflect, Edge };

/// The index of an axis of extent N (> 0 unless Constant) that Pad's
/// output index O reads, with PadBegin elements padded before it: -1 for
/// the constant; an edge's element clamped; reflected without repeating the
/// edge, periodically like numpy (an axis of extent 1 reflects as an edge).
inline int64_t padSource(int64_t O, int64_t PadBegin, int64_t N,
                         PadMode Mode) {
  int64_t P = O - PadBegin;
  if (P >= 0 && P < N)
    return P;
  if (Mode == PadMode::Constant)
    return -1;
  if (Mode == PadMode::Edge || N == 1)
    return P < 0 ? 0 : N - 1;
  int64_t Period = 2 * (N - 1);
  P = ((P % Period) + Period) % Period;
  return P >= N ? Period - P : P;
}

} // namespace nng::ir
