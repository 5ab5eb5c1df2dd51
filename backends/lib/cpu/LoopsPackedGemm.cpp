//===- LoopsPackedGemm.cpp - Products over weights packed once, any rows --===//
//
// Y = A x W (+ bias) (+ residual), then a clamp or a leaky activation, for
// any number of rows of A, over W packed once into panels of 64 columns
// (what ONNX Runtime's MLAS does for its prepacked weights). oneDNN 2.6
// serves rows given at run time with its gemm, which copies the weights on
// every call; its brgemm reads them packed but is made for one row count,
// at about 1 ms a shape. This loop is what linear layers whose rows vary
// run on AVX-512 CPUs (LowerMatMul.cpp).
//
// Blocks of 6 rows x 64 columns stay in vector registers (24 of them: 6
// rows x 4 vectors) while the loop walks W's panel (up to 2048 rows of it;
// the sums of a longer K go through Y between the passes); the first pass
// starts from the residual, and the last adds the bias as it stores and
// applies the activation to the stored rows (epilogueRange: the shared
// formulas of ElementwiseFormulas.h). Threads split the panels, or the rows
// when the panels are fewer than the threads.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "VectorMath.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cstring>

/// The loop is compiled for AVX-512 (x86-64-v4) by GCC, whatever the
/// build's target, and runs where the CPU has it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NNG_PACKED_GEMM 1
#define NNG_AVX512_TARGET __attribute__((target("arch=x86-64-v4")))
#else
#define NNG_PACKED_GEMM 0
#define NNG_AVX512_TARGET
#endif

namespace nng::backends::cpu {

namespace {

/// Columns of a panel of packed weights (four AVX-512 vectors).
constexpr int64_t PanelCols = 64;
/// Rows of a block: 6 rows x 4 vectors of sums, 24 of the 32 AVX-512
/// registers, with W's four vectors of a row and a broadcast of A's.
constexpr int RowBlock = 6;
/// Rows of W (K) a pass over a panel walks at most: 2048 (a panel of 512
/// KiB, in the L2 cache). On an Intel Xeon (AVX-512, 2 threads, the
/// encoder's layers 384 x 1152, 384 x 384, 384 x 1536 and 1536 x 384 at
/// 16-1000 rows) passes of at most 256 rows took 1.08x the time of
/// oneDNN's brgemm made for those rows, 384 rows 1.05x, whole K 0.98x
/// (blocks of 8 rows x 2 vectors: 1.01x).
constexpr int64_t MaxPassK = 2048;

/// What the loop reads and writes.
struct GemmArgs {
  const float *A;
  const float *Panels;
  float *Y;
  int64_t M, K, N;
  const float *Bias, *Residual;
  Epilogue Act;
};

/// Rows [I0, I0 + R) x panel P's columns, over K rows [K0, K0 + Kc) of
/// the panel; First: the sums start at the residual (or 0), else from Y;
/// Last: the bias before the store, the activation after it. A panel's
/// columns past N (the last panel's) are computed and not stored.
template <int R>
[[gnu::always_inline]] inline void block(const GemmArgs &G, int64_t I0,
                                         int64_t P, int64_t K0, int64_t Kc,
                                         bool First, bool Last) {
  const int64_t K = G.K, N = G.N, C0 = P * PanelCols;
  const int64_t Cols = std::min<int64_t>(PanelCols, N - C0);
  const bool Full = Cols == PanelCols;
  const float *A = G.A + I0 * K + K0;
  const float *B = G.Panels + P * K * PanelCols + K0 * PanelCols;
  float *Y = G.Y + I0 * N + C0;
  // A partial panel's columns go through a local tile.
  alignas(64) float Tile[R][PanelCols];
  auto RowOut = [&](int Rr) -> float * { return Full ? Y + Rr * N : Tile[Rr]; };
  // The sums start from the residual (Y may be the residual itself: each
  // block reads its rows before it writes them), or from Y's partial sums.
  const float *From = First ? G.Residual : Y;
  if (From && First)
    From += I0 * N + C0;
  constexpr int NV = PanelCols / 16;
  V16 Acc[R][NV];
  for (int Rr = 0; Rr < R; ++Rr) {
    if (!From) {
      for (int V = 0; V < NV; ++V)
        Acc[Rr][V] = V16{};
      continue;
    }
    const float *Row = From + Rr * N;
    if (!Full) {
      std::fill(Tile[Rr], Tile[Rr] + PanelCols, 0.0f);
      std::copy(Row, Row + Cols, Tile[Rr]);
      Row = Tile[Rr];
    }
    for (int V = 0; V < NV; ++V)
      Acc[Rr][V] = load16(Row + 16 * V);
  }
#pragma GCC unroll 4
  for (int64_t L = 0; L < Kc; ++L) {
    V16 Bv[NV];
    for (int V = 0; V < NV; ++V)
      Bv[V] = load16(B + L * PanelCols + 16 * V);
    for (int Rr = 0; Rr < R; ++Rr) {
      const float X = A[Rr * K + L];
      for (int V = 0; V < NV; ++V)
        Acc[Rr][V] += Bv[V] * X;
    }
  }
  if (Last) {
    alignas(64) float PaddedBias[PanelCols];
    const float *Bias = G.Bias ? G.Bias + C0 : nullptr;
    if (Bias && !Full) {
      std::fill(PaddedBias, PaddedBias + PanelCols, 0.0f);
      std::copy(Bias, Bias + Cols, PaddedBias);
      Bias = PaddedBias;
    }
    for (int Rr = 0; Rr < R; ++Rr) {
      if (Bias)
        for (int V = 0; V < NV; ++V)
          Acc[Rr][V] += load16(Bias + 16 * V);
    }
  }
  for (int Rr = 0; Rr < R; ++Rr) {
    for (int V = 0; V < NV; ++V)
      store16(RowOut(Rr) + 16 * V, Acc[Rr][V]);
    if (!Full)
      std::copy(Tile[Rr], Tile[Rr] + Cols, Y + Rr * N);
    // The activation over the stored row (in the L1 cache): on the sums
    // still in registers, its constants took registers from the product's
    // loop (linear1's Relu layers 0.91 ms against 0.76).
    if (Last)
      epilogueRange(G.Act, Y + Rr * N, Y + Rr * N, Cols);
  }
}

/// Panels [P0, P1) x rows [I0, I1), every pass over K.
NNG_AVX512_TARGET void gemmRange(const GemmArgs &G, int64_t P0, int64_t P1,
                                 int64_t I0, int64_t I1) {
  const int64_t Passes = (G.K + MaxPassK - 1) / MaxPassK;
  const int64_t PassK = (G.K + Passes - 1) / Passes;
  for (int64_t K0 = 0; K0 < G.K; K0 += PassK) {
    const int64_t Kc = std::min(PassK, G.K - K0);
    const bool First = K0 == 0, Last = K0 + Kc == G.K;
    for (int64_t P = P0; P < P1; ++P) {
      int64_t I = I0;
      for (; I + RowBlock <= I1; I += RowBlock)
        block<RowBlock>(G, I, P, K0, Kc, First, Last);
      switch (I1 - I) {
#define NNG_TAIL(R)                                                            \
  case R:                                                                      \
    block<R>(G, I, P, K0, Kc, First, Last);                                    \
    break;
        NNG_TAIL(1)
        NNG_TAIL(2)
        NNG_TAIL(3)
        NNG_TAIL(4)
        NNG_TAIL(5)
#undef NNG_TAIL
      default:
        break;
      }
      static_assert(RowBlock == 6, "a tail case per row count below it");
    }
  }
}

} // namespace

bool packedGemmServes() {
#if NNG_PACKED_GEMM
  static const bool Yes = __builtin_cpu_supports("x86-64-v4");
  return Yes;
#else
  return false;
#endif
}

dnnl::memory::desc panelDesc(int64_t K, int64_t N) {
  dnnl_memory_desc_t D{};
  D.ndims = 2;
  D.dims[0] = K;
  D.dims[1] = N;
  D.data_type = dnnl_f32;
  D.padded_dims[0] = K;
  D.padded_dims[1] = (N + PanelCols - 1) / PanelCols * PanelCols;
  D.format_kind = dnnl_blocked;
  D.format_desc.blocking.strides[0] = PanelCols;
  D.format_desc.blocking.strides[1] = K * PanelCols;
  D.format_desc.blocking.inner_nblks = 1;
  D.format_desc.blocking.inner_blks[0] = PanelCols;
  D.format_desc.blocking.inner_idxs[0] = 1;
  return dnnl::memory::desc(D);
}

void packedGemm(const float *A, const float *Panels, float *Y, int64_t M,
                int64_t K, int64_t N, const float *Bias, const float *Residual,
                const Epilogue &Act) {
  GemmArgs G{A, Panels, Y, M, K, N, Bias, Residual, Act};
  const int64_t NumPanels = (N + PanelCols - 1) / PanelCols;
  const int64_t Blocks = (M + RowBlock - 1) / RowBlock;
  const int64_t Threads = std::max(1, numThreads());
  // Panel groups, each of all rows or of a share of the row blocks.
  const int64_t Groups = std::min(NumPanels, Threads);
  const int64_t RowParts = std::min(Blocks, (Threads + Groups - 1) / Groups);
  const int64_t PerGroup = (NumPanels + Groups - 1) / Groups;
  const int64_t PerPart = (Blocks + RowParts - 1) / RowParts;
  parallelFor(0, Groups * RowParts, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t T = Begin; T < End; ++T) {
      const int64_t Gr = T / RowParts, Rp = T % RowParts;
      const int64_t P0 = Gr * PerGroup, P1 = std::min(NumPanels, P0 + PerGroup);
      const int64_t I0 = Rp * PerPart * RowBlock,
                    I1 = std::min(M, I0 + PerPart * RowBlock);
      if (P0 < P1 && I0 < I1)
        gemmRange(G, P0, P1, I0, I1);
    }
  });
}

} // namespace nng::backends::cpu
