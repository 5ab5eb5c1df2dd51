//===- LowerCast.cpp - Cast between f16 and f32 as an own loop ------------===//
//
// The Casts an f16 graph compiled in f32 begins and ends with (WidenHalf.h),
// and any other Cast between f16 and f32: one elementwise loop over the
// plain bytes, split over the threads, serving every shape (its extent is
// read from its slot at each run); a Cast to the type it has is a view.
// Other casts run on the node kernel.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Half.h"
#include "nngraph/runtime/Parallel.h"

namespace nng::backends::cpu {

bool lowerCast(LowerContext &C, const ir::Node &N) {
  int In = C.slotOf(N.input(0));
  DType From = C.slot(In).Type;
  DType To = C.PendingTypes.at(N.output(0)).first;
  if (From == To)
    return lowerAlias(C, N); // A Cast to its own type (an f16 graph's
                             // Cast to f32, once widened) is a view.
  bool Widen = From == DType::F16 && To == DType::F32;
  if (!Widen && !(From == DType::F32 && To == DType::F16))
    return false;
  if (C.slot(In).Blocked)
    In = C.B.plainOf(In);
  int Out = C.defineBuffer(N.output(0));
  emitLoop(
      C, {In}, Out, C.describe(N),
      [In, Out, Widen](Program &P) {
        int64_t Count = P.Slots[In].S.numel();
        const void *X = P.dataOf(In);
        char *Y = P.bufferData(Out);
        parallelFor(0, Count, int64_t(1) << 15, [&](int64_t B, int64_t E) {
          if (Widen) {
            const auto *H = static_cast<const uint16_t *>(X);
            auto *F = reinterpret_cast<float *>(Y);
            for (int64_t I = B; I < E; ++I)
              F[I] = halfBitsToFloat(H[I]);
          } else {
            const auto *F = static_cast<const float *>(X);
            auto *H = reinterpret_cast<uint16_t *>(Y);
            for (int64_t I = B; I < E; ++I)
              H[I] = floatToHalfBits(F[I]);
          }
        });
      },
      [](const Program &, const SlotShapes &) { return true; });
  return true;
}

} // namespace nng::backends::cpu
