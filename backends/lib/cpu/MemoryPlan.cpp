//===- MemoryPlan.cpp - Greedy-by-size arena placement --------------------===//
//
// Buffers are placed largest first; each goes to the lowest aligned offset
// where it fits between the already placed buffers whose lifetimes overlap
// its own. O(n^2) in the number of buffers, which is the number of values of
// one model (hundreds), once per compile.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlan.h"

#include <algorithm>
#include <numeric>

namespace nng::backends::cpu {

namespace {
size_t alignUp(size_t N) {
  return (N + ArenaAlignment - 1) / ArenaAlignment * ArenaAlignment;
}
bool overlaps(const BufferLife &A, const BufferLife &B) {
  return A.First <= B.Last && B.First <= A.Last;
}
} // namespace

ArenaPlan planArena(const std::vector<BufferLife> &Buffers) {
  ArenaPlan P;
  P.Offsets.assign(Buffers.size(), 0);
  std::vector<size_t> Order(Buffers.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return Buffers[A].Bytes > Buffers[B].Bytes;
  });
  // (offset, end) of the placed buffers that overlap the one being placed.
  std::vector<std::pair<size_t, size_t>> Busy;
  std::vector<size_t> Placed;
  for (size_t I : Order) {
    const BufferLife &B = Buffers[I];
    size_t Size = alignUp(std::max<size_t>(B.Bytes, 1));
    P.NaiveBytes += Size;
    Busy.clear();
    for (size_t J : Placed)
      if (overlaps(B, Buffers[J]))
        Busy.emplace_back(P.Offsets[J], P.Offsets[J] + alignUp(std::max<size_t>(
                                                           Buffers[J].Bytes, 1)));
    std::sort(Busy.begin(), Busy.end());
    size_t Offset = 0;
    for (const auto &[Begin, End] : Busy) {
      if (Offset + Size <= Begin)
        break;
      Offset = std::max(Offset, End);
    }
    P.Offsets[I] = Offset;
    P.PeakBytes = std::max(P.PeakBytes, Offset + Size);
    Placed.push_back(I);
  }
  return P;
}

} // namespace nng::backends::cpu
