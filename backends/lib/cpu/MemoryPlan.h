//===- MemoryPlan.h - Static arena planning from liveness ------*- C++ -*-===//
//
// The cpu backend's memory plan: every intermediate buffer of a compiled
// schedule is live from the step that first writes it to the step that last
// reads it (inclusive); buffers whose lifetimes do not overlap share bytes of
// one arena. Placement is greedy by size (largest first, each at the lowest
// aligned offset that does not collide with an already placed buffer live at
// the same time), the strategy TensorFlow Lite's arena planner uses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nng::backends::cpu {

/// One buffer to place: its size and the inclusive step range it is live.
struct BufferLife {
  size_t Bytes = 0;
  int64_t First = 0, Last = 0;
};

/// Where each buffer goes and how big the arena must be.
struct ArenaPlan {
  std::vector<size_t> Offsets; ///< One per buffer, multiples of Alignment.
  size_t PeakBytes = 0;        ///< Arena size.
  size_t NaiveBytes = 0;       ///< Sum of all (aligned) buffers: no reuse.
};

/// Bytes every buffer offset is aligned to (a cache line, AVX-512's width).
constexpr size_t ArenaAlignment = 64;

/// Places Buffers in one arena so that buffers live at the same step never
/// overlap.
ArenaPlan planArena(const std::vector<BufferLife> &Buffers);

} // namespace nng::backends::cpu
