//===- LoopsCopy.cpp - Strided views made dense, runs concatenated ----------===//
//
// stridedCopy makes a strided view (a transpose, a slice, an attention
// operand's view made real) dense: rows of the source's innermost run,
// copied whole when they are contiguous, gathered otherwise. concatRuns
// is Concat of dense inputs: per outer index, each input's run in turn.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace nng::backends::cpu {

namespace {

/// Dst[I] = Src[I * Stride] for I < N, elements of type T.
template <typename T>
void gatherRow(const char *Src, char *Dst, int64_t N, int64_t Stride) {
  const T *S = reinterpret_cast<const T *>(Src);
  T *D = reinterpret_cast<T *>(Dst);
  for (int64_t I = 0; I < N; ++I)
    D[I] = S[I * Stride];
}

} // namespace

void stridedCopy(const char *Src, char *Dst, const StridedView &V,
                 size_t Elem) {
  // Drop size-1 axes and merge axes that are contiguous in the source.
  std::vector<int64_t> Sz, St;
  int64_t Numel = 1;
  for (size_t D = 0; D < V.Sizes.size(); ++D) {
    Numel *= V.Sizes[D];
    if (V.Sizes[D] == 1)
      continue;
    if (!Sz.empty() && St.back() == V.Strides[D] * V.Sizes[D]) {
      Sz.back() *= V.Sizes[D];
      St.back() = V.Strides[D];
    } else {
      Sz.push_back(V.Sizes[D]);
      St.push_back(V.Strides[D]);
    }
  }
  if (Numel == 0)
    return;
  Src += V.Offset * static_cast<int64_t>(Elem);
  if (Sz.empty()) {
    std::memcpy(Dst, Src, Elem);
    return;
  }
  const int64_t Inner = Sz.back(), InnerStride = St.back();
  const int64_t Outer = Numel / Inner, Rank = static_cast<int64_t>(Sz.size());
  const int64_t RowBytes = Inner * static_cast<int64_t>(Elem);
  parallelFor(0, Outer, std::max<int64_t>(1, 16384 / Inner),
              [&](int64_t B, int64_t E) {
    // The source offset of row B, then advanced like an odometer.
    std::vector<int64_t> Idx(Rank - 1);
    int64_t Off = 0;
    for (int64_t D = Rank - 2, R = B; D >= 0; --D) {
      Idx[D] = R % Sz[D];
      R /= Sz[D];
      Off += Idx[D] * St[D];
    }
    for (int64_t Row = B; Row < E; ++Row) {
      const char *S = Src + Off * static_cast<int64_t>(Elem);
      char *D = Dst + Row * RowBytes;
      if (InnerStride == 1)
        std::memcpy(D, S, RowBytes);
      else if (Elem == 4)
        gatherRow<uint32_t>(S, D, Inner, InnerStride);
      else if (Elem == 8)
        gatherRow<uint64_t>(S, D, Inner, InnerStride);
      else if (Elem == 2)
        gatherRow<uint16_t>(S, D, Inner, InnerStride);
      else if (Elem == 1)
        gatherRow<uint8_t>(S, D, Inner, InnerStride);
      else
        for (int64_t I = 0; I < Inner; ++I)
          std::memcpy(D + I * Elem, S + I * InnerStride * Elem, Elem);
      for (int64_t Ax = Rank - 2; Ax >= 0; --Ax) {
        Off += St[Ax];
        if (++Idx[Ax] < Sz[Ax])
          break;
        Off -= St[Ax] * Sz[Ax];
        Idx[Ax] = 0;
      }
    }
  });
}

void concatRuns(const std::vector<const float *> &Src,
                const std::vector<int64_t> &Runs, float *Dst, int64_t Outer) {
  int64_t Row = 0;
  for (int64_t R : Runs)
    Row += R;
  int64_t Grain = std::max<int64_t>(1, ElementGrain / std::max<int64_t>(Row, 1));
  parallelFor(0, Outer, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t O = Begin; O < End; ++O) {
      float *To = Dst + O * Row;
      for (size_t I = 0; I < Src.size(); ++I) {
        if (Runs[I] == 0)
          continue; // An empty input (an empty cache).
        std::memcpy(To, Src[I] + O * Runs[I], Runs[I] * sizeof(float));
        To += Runs[I];
      }
    }
  });
}

} // namespace nng::backends::cpu
