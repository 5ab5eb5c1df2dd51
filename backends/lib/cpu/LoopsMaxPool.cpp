//===- LoopsMaxPool.cpp - Max pooling of blocked layouts, NaN kept ----------===//
//
// Max pooling over the channel blocks of a blocked layout (or plain NCHW),
// where oneDNN's maps NaN to numbers: the reference's max, in which a NaN
// anywhere in the window wins; target_clones picks the AVX-512, AVX2 or
// baseline copy from the CPU at run time.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::cpu {

namespace {

/// The reference's max: a NaN anywhere in the window wins.
inline float nanMax(float A, float B) { return (A < B || B != B) ? B : A; }

/// One output row of a 2-d max pool over Blk interleaved channels:
/// Src[h][w][Blk], Dst[ow][Blk] for output row Oh. Fixed: Blk is the
/// compile-time Fixed (nChw16c's 16: its loops become whole vectors, with
/// no remainder code per window element), else G.Block (NHWC: all channels
/// in one block, in chunks of 64 accumulators).
template <int64_t Fixed>
[[gnu::always_inline]] inline void maxPoolRowOf(const float *__restrict Src,
                                                float *__restrict Dst,
                                                const MaxPoolGeometry &G,
                                                int64_t Oh) {
  const int64_t Blk = Fixed ? Fixed : G.Block;
  for (int64_t Ow = 0; Ow < G.OW; ++Ow) {
    for (int64_t C0 = 0; C0 < Blk; C0 += 64) {
      int64_t CN = std::min<int64_t>(64, Blk - C0);
      float Acc[64];
#pragma GCC unroll 1
      for (int64_t C = 0; C < CN; ++C)
        Acc[C] = -INFINITY;
      for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
        int64_t H = Oh * G.SH - G.PT + Kh * G.DH;
        if (H < 0 || H >= G.H)
          continue;
        for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
          int64_t W = Ow * G.SW - G.PL + Kw * G.DW;
          if (W < 0 || W >= G.W)
            continue;
          const float *X = Src + (H * G.W + W) * Blk + C0;
          // (Not unrolled: GCC vectorizes the loop, not its unrolled copy.)
#pragma GCC unroll 1
          for (int64_t C = 0; C < CN; ++C)
            Acc[C] = nanMax(Acc[C], X[C]);
        }
      }
      float *Y = Dst + Ow * Blk + C0;
#pragma GCC unroll 1
      for (int64_t C = 0; C < CN; ++C)
        Y[C] = Acc[C];
    }
  }
}

NNG_VECTOR_CLONES
void maxPoolRow(const float *__restrict Src, float *__restrict Dst,
                const MaxPoolGeometry &G, int64_t Oh) {
  maxPoolRowOf<0>(Src, Dst, G, Oh);
}

NNG_VECTOR_CLONES
void maxPoolRow16(const float *__restrict Src, float *__restrict Dst,
                  const MaxPoolGeometry &G, int64_t Oh) {
  maxPoolRowOf<16>(Src, Dst, G, Oh);
}

} // namespace

void maxPool2d(const float *Src, float *Dst, const MaxPoolGeometry &G) {
  // Planes: (batch, channel block) pairs; each is H*W*Blk in, OH*OW*Blk out.
  int64_t Planes = G.N * G.CBlocks;
  int64_t InPlane = G.H * G.W * G.Block, OutPlane = G.OH * G.OW * G.Block;
  parallelFor(0, Planes * G.OH, 1, [&](int64_t B, int64_t E) {
    for (int64_t I = B; I < E; ++I) {
      int64_t Plane = I / G.OH, Oh = I % G.OH;
      const float *S = Src + Plane * InPlane;
      float *D = Dst + Plane * OutPlane + Oh * G.OW * G.Block;
      if (G.Block == 16)
        maxPoolRow16(S, D, G, Oh);
      else
        maxPoolRow(S, D, G, Oh);
    }
  });
}

} // namespace nng::backends::cpu
