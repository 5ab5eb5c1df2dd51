//===- LowerAttention.cpp - nng.Attention as one flash-attention loop -----===//
//
// nng.Attention(Q, K, V, mask?) on f32 runs as the backend's own loop, in
// the manner of flash attention: for each (batch entry, block of up to
// rowBlock() query rows) it walks the keys in blocks of KeyBlock, computing
// that block's scores ((Q * scale) K^T + mask) into a small local array,
// updating a running row maximum and sum (online softmax: what was
// accumulated is rescaled by exp(old max - new max)) and accumulating the
// probabilities times V's rows; the [.., M, N] scores never reach memory.
// Work splits over batch entries x row blocks; when those are fewer than
// twice the threads (a decoder's step: a few query rows against a long
// cache), the keys split too, each part keeps its own maximum, sum and
// accumulator, and a second pass combines them.
//
// The step reads its extents from its slots at each run, so a reshaped
// Program (a new sequence or cache length) keeps it. Inner loops run along
// contiguous memory (D for Q.K with K as [N, D], 16 keys at a time for K as
// [D, N], 16 of Dv for P.V) over blocks of rows x 16 partial results that
// stay in vector registers (one copy of the loop per row count); the exp is
// VectorMath.h's. target_clones picks the AVX-512, AVX2 or baseline copy
// from the CPU at run time. Results differ from the reference (the unfused
// graph's rounding) by float rounding only.
//
//===----------------------------------------------------------------------===//

#include "InPlaceViews.h"
#include "VectorMath.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace nng::backends::cpu {

namespace {

/// Query rows computed together (they share each loaded key and value row):
/// 8 where a vector register holds 16 floats (AVX-512: 8 x 2 accumulators
/// of 32 registers: one thread on an AMD EPYC ran 6 heads of 256 x 64 in
/// 0.74-0.86 ms, 0.94 with 4 rows, best of 300 runs), else 4 (AVX2's 16
/// registers hold 4 x 2 of two halves each).
constexpr int64_t MaxRowBlock = 8;
int64_t rowBlock() {
  static const int64_t Rows =
      __builtin_cpu_supports("avx512f") ? MaxRowBlock : 4;
  return Rows;
}
/// Keys whose scores are computed before the running softmax is updated:
/// 256 (all of them for most sequences, so what was accumulated is rarely
/// rescaled) took 0.92-1.00x the time of 128 on the encoder at 144-250
/// positions (Intel Xeon, AVX-512).
constexpr int64_t KeyBlock = 256;
static_assert(KeyBlock % 16 == 0, "a block's scores are whole vectors");
/// The largest Dv the loop serves (its accumulators live on the stack).
constexpr int64_t MaxDv = 512;
/// The largest D the loop serves (a block's query rows are copied to the
/// stack).
constexpr int64_t MaxD = 512;
/// Partial sums of the dot products (one AVX-512 register of floats).
constexpr int64_t Lanes = 16;

/// The extents of one run and where each batch entry's matrices start.
struct AttentionGeometry {
  int64_t Batches = 1, M = 0, N = 0, D = 0, Dv = 0;
  /// Per batch entry: element offsets of Q, K, V and the mask.
  std::vector<int64_t> QOff, KOff, VOff, MaskOff;
  /// The mask's element strides along the query rows and the keys (0 where
  /// it broadcasts).
  int64_t MaskRow = 0, MaskCol = 0;
  /// Element strides between consecutive rows: of Q (query rows), of K
  /// (keys as [N, D]; along D for keys as [D, N]) and of V (keys). Dense
  /// operands have D, D (N when KT) and Dv; operands read in place where an
  /// earlier step left them have their own.
  int64_t QLd = 0, KLd = 0, VLd = 0;
  /// K is given as [.., D, N].
  bool KT = false;
};

/// Row-major strides of S with 0 for axes of extent 1, aligned to the right
/// of rank R (missing leading axes broadcast too).
std::vector<int64_t> broadcastStrides(const Shape &S, size_t R) {
  std::vector<int64_t> St(R, 0);
  int64_t Run = 1;
  for (size_t I = 0; I < S.rank(); ++I) {
    size_t Ax = S.rank() - 1 - I;
    St[R - 1 - I] = S[Ax] == 1 ? 0 : Run;
    Run *= S[Ax];
  }
  return St;
}

/// The geometry of Q, K (as [.., N, D], or [.., D, N] when KT), V and the
/// mask (empty shape: none; it has rank >= 1 then, or is a scalar) for an
/// output of shape Y; nullopt when they do not fit together or the loop
/// does not serve them (an empty extent, Dv over MaxDv).
std::optional<AttentionGeometry>
attentionGeometry(const Shape &Q, const Shape &K, const Shape &V,
                  const Shape *Mask, const Shape &Y, bool KT) {
  if (Q.rank() < 2 || K.rank() < 2 || V.rank() < 2 || Y.rank() < 2)
    return std::nullopt;
  AttentionGeometry G;
  size_t R = Y.rank();
  G.M = Q[Q.rank() - 2];
  G.D = Q[Q.rank() - 1];
  G.N = K[K.rank() - (KT ? 1 : 2)];
  G.Dv = V[V.rank() - 1];
  if (K[K.rank() - (KT ? 2 : 1)] != G.D || V[V.rank() - 2] != G.N ||
      Y[R - 2] != G.M || Y[R - 1] != G.Dv || G.M <= 0 || G.N <= 0 ||
      G.D <= 0 || G.Dv <= 0 || G.Dv > MaxDv || G.D > MaxD)
    return std::nullopt;
  std::vector<const Shape *> Ops = {&Q, &K, &V};
  if (Mask)
    Ops.push_back(Mask);
  // Every operand's batch axes must broadcast to Y's.
  for (const Shape *S : Ops) {
    if (S->rank() > R)
      return std::nullopt;
    for (size_t I = 2; I < S->rank(); ++I) {
      int64_t E = (*S)[S->rank() - 1 - I], YE = Y[R - 1 - I];
      if (E != 1 && E != YE)
        return std::nullopt;
    }
  }
  if (Mask) {
    const Shape &MS = *Mask;
    int64_t MR = MS.rank() >= 2 ? MS[MS.rank() - 2] : 1;
    int64_t MC = MS.rank() >= 1 ? MS[MS.rank() - 1] : 1;
    if ((MR != 1 && MR != G.M) || (MC != 1 && MC != G.N))
      return std::nullopt;
  }
  std::vector<std::vector<int64_t>> St;
  for (const Shape *S : Ops)
    St.push_back(broadcastStrides(*S, R));
  if (Mask) {
    G.MaskRow = St[3][R - 2];
    G.MaskCol = St[3][R - 1];
  }
  G.QLd = G.D;
  G.KLd = KT ? G.N : G.D;
  G.VLd = G.Dv;
  G.KT = KT;
  for (size_t I = 0; I + 2 < R; ++I)
    G.Batches *= Y[I];
  std::vector<int64_t> *Offs[] = {&G.QOff, &G.KOff, &G.VOff, &G.MaskOff};
  for (size_t O = 0; O < Ops.size(); ++O)
    Offs[O]->assign(G.Batches, 0);
  // Batch entry B's offsets, from its index along each batch axis.
  for (int64_t B = 0; B < G.Batches; ++B) {
    int64_t Rem = B;
    for (size_t I = R - 2; I-- > 0;) {
      int64_t Idx = Rem % Y[I];
      Rem /= Y[I];
      for (size_t O = 0; O < Ops.size(); ++O)
        (*Offs[O])[B] += Idx * St[O][I];
    }
  }
  return G;
}

/// What the loop reads and writes at one run.
struct AttentionArgs {
  const AttentionGeometry *G;
  const float *Q, *K, *V, *Mask; ///< Mask null: none.
  float *Y;
  float Scale;
};

/// The running softmax state of Rows query rows: maximum, sum and the
/// accumulated probabilities times V ([Rows, Dv]).
struct RowState {
  float Max[MaxRowBlock], Sum[MaxRowBlock];
  float Acc[MaxRowBlock * MaxDv];

  void reset(int64_t Rows, int64_t Dv) {
    for (int64_t R = 0; R < Rows; ++R) {
      Max[R] = -INFINITY;
      Sum[R] = 0;
    }
    std::fill(Acc, Acc + Rows * Dv, 0.0f);
  }
};

/// The sum of V's lanes, halves added pairwise (four vector adds, not a
/// chain of sixteen scalar ones through memory).
inline float sum16(V16 V) {
  typedef float V8 __attribute__((vector_size(32)));
  typedef float V4 __attribute__((vector_size(16)));
  V8 H = __builtin_shufflevector(V, V, 0, 1, 2, 3, 4, 5, 6, 7) +
         __builtin_shufflevector(V, V, 8, 9, 10, 11, 12, 13, 14, 15);
  V4 Q = __builtin_shufflevector(H, H, 0, 1, 2, 3) +
         __builtin_shufflevector(H, H, 4, 5, 6, 7);
  return (Q[0] + Q[2]) + (Q[1] + Q[3]);
}
/// The largest of V's lanes by halves (a lane that is NaN loses, as in
/// `M < X ? X : M`).
inline float max16(V16 V) {
  typedef float V8 __attribute__((vector_size(32)));
  typedef float V4 __attribute__((vector_size(16)));
  auto Max = [](auto A, auto B) { return A < B ? B : A; };
  V8 H = Max(__builtin_shufflevector(V, V, 0, 1, 2, 3, 4, 5, 6, 7),
             __builtin_shufflevector(V, V, 8, 9, 10, 11, 12, 13, 14, 15));
  V4 Q = Max(__builtin_shufflevector(H, H, 0, 1, 2, 3),
             __builtin_shufflevector(H, H, 4, 5, 6, 7));
  float A = Q[0] < Q[2] ? Q[2] : Q[0], B = Q[1] < Q[3] ? Q[3] : Q[1];
  return A < B ? B : A;
}

/// Walks keys [J0, J1) for R query rows from I0 of batch entry B, updating
/// St (flash attention's inner loop); K is this entry's keys as [N, D], or
/// as [D, N] when KT. R is a constant, so the blocks of R x 32 partial
/// results below stay in vector registers (8 independent chains for R =
/// 4); always inlined into the per-R copies that target_clones compiles for
/// each CPU.
template <int R>
[[gnu::always_inline]] inline void
attendKeysRows(const AttentionArgs &A, const float *K, bool KT, bool KPad,
               int64_t KLd, const float *V, int64_t VLd, int64_t B, int64_t I0,
               int64_t J0, int64_t J1, RowState &St) {
  const AttentionGeometry &G = *A.G;
  const int64_t D = G.D, Dv = G.Dv, QLd = D;
  // The block's query rows times the scale, dense: rows read in place lie
  // a projection's width apart (18 KiB for a batch of 4 at width 384: a
  // few sets of the L1 cache, which the rows then miss), and the scores
  // need no pass of their own for the scale (by float rounding only).
  alignas(64) float Q[R * MaxD];
  {
    const float *QIn = A.Q + G.QOff[B] + I0 * G.QLd;
    for (int Rr = 0; Rr < R; ++Rr)
      for (int64_t L = 0; L < D; ++L)
        Q[Rr * D + L] = QIn[Rr * G.QLd + L] * A.Scale;
  }
  alignas(64) float S[R][KeyBlock];
  for (int64_t Jb = J0; Jb < J1; Jb += KeyBlock) {
    const int64_t Nb = std::min(KeyBlock, J1 - Jb);
    const int64_t NbV = (Nb + Lanes - 1) / Lanes * Lanes;
    // Scores of the block.
    if (!KT) {
      // K as [N, D]: per key, R dot products along D.
      for (int64_t J = 0; J < Nb; ++J) {
        const float *KRow = K + (Jb + J) * KLd;
        V16 Acc[R] = {};
        int64_t L = 0;
        for (; L + Lanes <= D; L += Lanes) {
          const V16 Kv = load16(KRow + L);
          for (int Rr = 0; Rr < R; ++Rr)
            Acc[Rr] += load16(Q + Rr * QLd + L) * Kv;
        }
        for (int Rr = 0; Rr < R; ++Rr) {
          float Sum = sum16(Acc[Rr]);
          for (int64_t T = L; T < D; ++T)
            Sum += Q[Rr * QLd + T] * KRow[T];
          S[Rr][J] = Sum;
        }
      }
    } else {
      // K as [D, N]: 32 (then 16) keys at a time, Q's element broadcast;
      // with KPad its rows hold zeros up to a multiple of 16 keys, so the
      // last keys need no scalar tail (their extra scores go unread).
      const int64_t NbK = KPad ? (Nb + Lanes - 1) / Lanes * Lanes : Nb;
      int64_t J = 0;
      for (; J + 2 * Lanes <= NbK; J += 2 * Lanes) {
        V16 Acc0[R] = {}, Acc1[R] = {};
        for (int64_t L = 0; L < D; ++L) {
          const float *KRow = K + L * KLd + Jb + J;
          const V16 K0 = load16(KRow), K1 = load16(KRow + Lanes);
          for (int Rr = 0; Rr < R; ++Rr) {
            const float QL = Q[Rr * QLd + L];
            Acc0[Rr] += K0 * QL;
            Acc1[Rr] += K1 * QL;
          }
        }
        for (int Rr = 0; Rr < R; ++Rr) {
          store16(&S[Rr][J], Acc0[Rr]);
          store16(&S[Rr][J + Lanes], Acc1[Rr]);
        }
      }
      for (; J + Lanes <= NbK; J += Lanes) {
        V16 Acc[R] = {};
        for (int64_t L = 0; L < D; ++L) {
          const V16 Kv = load16(K + L * KLd + Jb + J);
          for (int Rr = 0; Rr < R; ++Rr)
            Acc[Rr] += Kv * Q[Rr * QLd + L];
        }
        for (int Rr = 0; Rr < R; ++Rr)
          store16(&S[Rr][J], Acc[Rr]);
      }
      for (; J < Nb; ++J)
        for (int Rr = 0; Rr < R; ++Rr) {
          float Sum = 0;
          for (int64_t L = 0; L < D; ++L)
            Sum += Q[Rr * QLd + L] * K[L * KLd + Jb + J];
          S[Rr][J] = Sum;
        }
    }
    bool Skip[R];
    for (int Rr = 0; Rr < R; ++Rr) {
      float *SR = S[Rr];
      if (A.Mask) {
        const float *MRow =
            A.Mask + G.MaskOff[B] + (I0 + Rr) * G.MaskRow + Jb * G.MaskCol;
        const int64_t MC = G.MaskCol;
        if (MC == 1)
          for (int64_t J = 0; J < Nb; ++J)
            SR[J] += MRow[J];
        else
          for (int64_t J = 0; J < Nb; ++J)
            SR[J] += MRow[J * MC];
      }
      // Keys past the block's end up to whole vectors score -inf: no
      // weight, and no scalar tails below.
      for (int64_t J = Nb; J < NbV; ++J)
        SR[J] = -INFINITY;
      // Online softmax: the new maximum rescales what came before.
      V16 Mv = {};
      Mv -= INFINITY;
      for (int64_t J = 0; J < NbV; J += Lanes) {
        const V16 X = load16(SR + J);
        Mv = Mv < X ? X : Mv;
      }
      float Mx = max16(Mv);
      Mx = Mx < St.Max[Rr] ? St.Max[Rr] : Mx;
      Skip[Rr] = Mx == -INFINITY; // All masked so far: nothing to add.
      if (Skip[Rr])
        continue;
      const float Corr = expFloat(St.Max[Rr] - Mx);
      St.Max[Rr] = Mx;
      V16 SumV = {};
      for (int64_t J = 0; J < NbV; J += Lanes) {
        for (int64_t X = 0; X < Lanes; ++X)
          SR[J + X] = expNonPositive(SR[J + X] - Mx);
        SumV += load16(SR + J);
      }
      const float Total = sum16(SumV);
      St.Sum[Rr] = St.Sum[Rr] * Corr + Total;
      if (Corr != 1.0f) {
        float *AccR = St.Acc + Rr * Dv;
        for (int64_t E = 0; E < Dv; ++E)
          AccR[E] *= Corr;
      }
    }
    for (int Rr = 0; Rr < R; ++Rr)
      if (Skip[Rr])
        for (int64_t J = 0; J < Nb; ++J)
          S[Rr][J] = 0;
    // Probabilities times V's rows: R x 32 (then 16) accumulators per
    // chunk of Dv.
    int64_t E0 = 0;
    for (; E0 + 2 * Lanes <= Dv; E0 += 2 * Lanes) {
      V16 Acc0[R], Acc1[R];
      for (int Rr = 0; Rr < R; ++Rr) {
        Acc0[Rr] = load16(St.Acc + Rr * Dv + E0);
        Acc1[Rr] = load16(St.Acc + Rr * Dv + E0 + Lanes);
      }
      for (int64_t J = 0; J < Nb; ++J) {
        const float *VRow = V + (Jb + J) * VLd + E0;
        const V16 V0 = load16(VRow), V1 = load16(VRow + Lanes);
        for (int Rr = 0; Rr < R; ++Rr) {
          const float P = S[Rr][J];
          Acc0[Rr] += V0 * P;
          Acc1[Rr] += V1 * P;
        }
      }
      for (int Rr = 0; Rr < R; ++Rr) {
        store16(St.Acc + Rr * Dv + E0, Acc0[Rr]);
        store16(St.Acc + Rr * Dv + E0 + Lanes, Acc1[Rr]);
      }
    }
    for (; E0 + Lanes <= Dv; E0 += Lanes) {
      V16 Acc[R];
      for (int Rr = 0; Rr < R; ++Rr)
        Acc[Rr] = load16(St.Acc + Rr * Dv + E0);
      for (int64_t J = 0; J < Nb; ++J) {
        const V16 Vv = load16(V + (Jb + J) * VLd + E0);
        for (int Rr = 0; Rr < R; ++Rr)
          Acc[Rr] += Vv * S[Rr][J];
      }
      for (int Rr = 0; Rr < R; ++Rr)
        store16(St.Acc + Rr * Dv + E0, Acc[Rr]);
    }
    if (E0 < Dv)
      for (int64_t J = 0; J < Nb; ++J) {
        const float *VRow = V + (Jb + J) * VLd;
        for (int Rr = 0; Rr < R; ++Rr) {
          const float P = S[Rr][J];
          float *AccR = St.Acc + Rr * Dv;
          for (int64_t E = E0; E < Dv; ++E)
            AccR[E] += P * VRow[E];
        }
      }
  }
}

/// attendKeysRows<R> as a function of its own per row count R, so that
/// each gets its CPU-specific copies (target_clones takes no templates).
#define NNG_ATTEND_KEYS(R)                                                     \
  NNG_VECTOR_CLONES                                                            \
  void attendKeys##R(const AttentionArgs &A, const float *K, bool KT,          \
                     bool KPad, int64_t KLd, const float *V, int64_t VLd,      \
                     int64_t B, int64_t I0, int64_t J0, int64_t J1,            \
                     RowState &St) {                                           \
    attendKeysRows<R>(A, K, KT, KPad, KLd, V, VLd, B, I0, J0, J1, St);         \
  }
NNG_ATTEND_KEYS(1)
NNG_ATTEND_KEYS(2)
NNG_ATTEND_KEYS(3)
NNG_ATTEND_KEYS(4)
NNG_ATTEND_KEYS(5)
NNG_ATTEND_KEYS(6)
NNG_ATTEND_KEYS(7)
NNG_ATTEND_KEYS(8)
#undef NNG_ATTEND_KEYS
static_assert(MaxRowBlock == 8, "attendKeys has a copy per row count");

/// Keys and values of one batch entry as the loop reads them: K (as [N,
/// D], or [D, N] when KT) and V with rows KLd and VLd apart; KPad: K's rows
/// of [D, N] hold zeros up to a multiple of 16 keys.
struct KeysValues {
  const float *K;
  bool KT, KPad;
  int64_t KLd;
  const float *V;
  int64_t VLd;
};

/// Batch entry B's keys and values where the operands lie.
KeysValues operandKeysValues(const AttentionArgs &A, int64_t B) {
  const AttentionGeometry &G = *A.G;
  return {A.K + G.KOff[B], G.KT, false, G.KLd, A.V + G.VOff[B], G.VLd};
}

/// Walks keys [J0, J1) for rows [I0, I0 + Rows) of batch entry B, whose
/// keys and values are KV.
void attendKeys(const AttentionArgs &A, int64_t B, int64_t I0, int64_t Rows,
                int64_t J0, int64_t J1, RowState &St, const KeysValues &KV) {
  using AttendFn =
      void (*)(const AttentionArgs &, const float *, bool, bool, int64_t,
               const float *, int64_t, int64_t, int64_t, int64_t, int64_t,
               RowState &);
  static const AttendFn ByRows[MaxRowBlock] = {
      attendKeys1, attendKeys2, attendKeys3, attendKeys4,
      attendKeys5, attendKeys6, attendKeys7, attendKeys8};
  ByRows[std::clamp<int64_t>(Rows, 1, MaxRowBlock) - 1](
      A, KV.K, KV.KT, KV.KPad, KV.KLd, KV.V, KV.VLd, B, I0, J0, J1, St);
}

/// Kt [D, N] (rows KtLd apart) = K [N, D] of batch entry B: rows of many
/// queries then read 32 keys at a time instead of one dot product per key.
/// In tiles of 16 x 16, so that the 16 rows of Kt a tile writes stay in
/// the L1 cache while it fills a line of each (a key at a time wrote D
/// lines per key: 12% of the attention's time at 200 keys).
void transposeKeys(const AttentionArgs &A, int64_t B, float *Kt,
                   int64_t KtLd) {
  const int64_t N = A.G->N, D = A.G->D, Ld = A.G->KLd;
  const float *K = A.K + A.G->KOff[B];
  constexpr int64_t Tile = 16;
  for (int64_t J0 = 0; J0 < N; J0 += Tile)
    for (int64_t L0 = 0; L0 < D; L0 += Tile) {
      const int64_t J1 = std::min(N, J0 + Tile), L1 = std::min(D, L0 + Tile);
      for (int64_t J = J0; J < J1; ++J)
        for (int64_t L = L0; L < L1; ++L)
          Kt[L * KtLd + J] = K[J * Ld + L];
    }
}

/// Vp [N, Dv] = V of batch entry B, dense.
void packValues(const AttentionArgs &A, int64_t B, float *Vp) {
  const int64_t N = A.G->N, Dv = A.G->Dv, Ld = A.G->VLd;
  const float *V = A.V + A.G->VOff[B];
  for (int64_t J = 0; J < N; ++J)
    std::copy(V + J * Ld, V + J * Ld + Dv, Vp + J * Dv);
}

/// A row stride of at least N floats, in whole 64-byte lines, whose line
/// count is odd: the D rows of a local Kt then fall into every set of the
/// L1 cache, not a few (N = 256 gives 1 KiB rows, 4 sets of 64).
int64_t localLd(int64_t N) {
  int64_t Ld = (N + 15) / 16 * 16;
  return (Ld / 16) % 2 ? Ld : Ld + 16;
}

/// Y's rows [I0, I0 + Rows) of batch entry B from a finished state.
void writeRows(const AttentionArgs &A, int64_t B, int64_t I0, int64_t Rows,
               const RowState &St) {
  const int64_t Dv = A.G->Dv;
  float *Y = A.Y + (B * A.G->M + I0) * Dv;
  for (int64_t R = 0; R < Rows; ++R) {
    const float Inv = 1.0f / St.Sum[R];
    for (int64_t E = 0; E < Dv; ++E)
      Y[R * Dv + E] = St.Acc[R * Dv + E] * Inv;
  }
}

/// One run of the loop.
void runAttention(const AttentionArgs &A) {
  const AttentionGeometry &G = *A.G;
  const int64_t RowBlock = rowBlock();
  const int64_t RowBlocks = (G.M + RowBlock - 1) / RowBlock;
  const int64_t Tasks = G.Batches * RowBlocks;
  const int64_t Threads = std::max(1, numThreads());
  // Key parts per task: more than one only when the tasks alone cannot
  // keep the threads busy and the keys are many.
  int64_t Parts = 1;
  if (Tasks < 2 * Threads && G.N >= 2 * KeyBlock)
    Parts = std::min((2 * Threads + Tasks - 1) / Tasks,
                     (G.N + KeyBlock - 1) / KeyBlock);
  const int64_t PartKeys = (G.N + Parts - 1) / Parts;
  auto TaskRows = [&](int64_t T, int64_t &B, int64_t &I0) {
    B = T / RowBlocks;
    I0 = (T % RowBlocks) * RowBlock;
    return std::min(RowBlock, G.M - I0);
  };
  if (Parts == 1 && !G.KT && G.M > 2 * RowBlock) {
    // Keys as [N, D] for many query rows: each task takes a group of row
    // blocks of one batch entry and transposes its keys once for them.
    int64_t Groups = std::max<int64_t>(
        1, std::min(RowBlocks, (2 * Threads + G.Batches - 1) / G.Batches));
    const int64_t PerGroup = (RowBlocks + Groups - 1) / Groups;
    Groups = (RowBlocks + PerGroup - 1) / PerGroup;
    parallelFor(0, G.Batches * Groups, 1, [&](int64_t Begin, int64_t End) {
      auto St = std::make_unique<RowState>();
      // The keys transposed and the values dense, once per task: values
      // read in place lie rows of the projection apart (a power of two
      // of lines for common widths, a few cache sets).
      const int64_t KtLd = localLd(G.N);
      const bool PackV = G.VLd != G.Dv;
      std::vector<float> Kt(KtLd * G.D), Vp(PackV ? G.N * G.Dv : 0);
      for (int64_t T = Begin; T < End; ++T) {
        int64_t B = T / Groups, First = (T % Groups) * PerGroup;
        transposeKeys(A, B, Kt.data(), KtLd);
        KeysValues KV = operandKeysValues(A, B);
        KV = {Kt.data(), true, /*KPad=*/true, KtLd, KV.V, KV.VLd};
        if (PackV) {
          packValues(A, B, Vp.data());
          KV.V = Vp.data();
          KV.VLd = G.Dv;
        }
        for (int64_t Rb = First; Rb < std::min(RowBlocks, First + PerGroup);
             ++Rb) {
          int64_t I0 = Rb * RowBlock, Rows = std::min(RowBlock, G.M - I0);
          St->reset(Rows, G.Dv);
          attendKeys(A, B, I0, Rows, 0, G.N, *St, KV);
          writeRows(A, B, I0, Rows, *St);
        }
      }
    });
    return;
  }
  if (Parts == 1) {
    parallelFor(0, Tasks, 1, [&](int64_t Begin, int64_t End) {
      auto St = std::make_unique<RowState>();
      for (int64_t T = Begin; T < End; ++T) {
        int64_t B, I0;
        int64_t Rows = TaskRows(T, B, I0);
        St->reset(Rows, G.Dv);
        attendKeys(A, B, I0, Rows, 0, G.N, *St, operandKeysValues(A, B));
        writeRows(A, B, I0, Rows, *St);
      }
    });
    return;
  }
  // Split keys: each part's state, then the combination per task.
  const int64_t Stride = RowBlock * (G.Dv + 2);
  std::vector<float> Partial(Tasks * Parts * Stride);
  parallelFor(0, Tasks * Parts, 1, [&](int64_t Begin, int64_t End) {
    auto St = std::make_unique<RowState>();
    for (int64_t U = Begin; U < End; ++U) {
      int64_t T = U / Parts, Pt = U % Parts, B, I0;
      int64_t Rows = TaskRows(T, B, I0);
      int64_t J0 = Pt * PartKeys, J1 = std::min(G.N, J0 + PartKeys);
      St->reset(Rows, G.Dv);
      if (J0 < J1)
        attendKeys(A, B, I0, Rows, J0, J1, *St, operandKeysValues(A, B));
      float *Out = Partial.data() + U * Stride;
      for (int64_t R = 0; R < Rows; ++R) {
        Out[R] = St->Max[R];
        Out[RowBlock + R] = St->Sum[R];
      }
      std::copy(St->Acc, St->Acc + Rows * G.Dv, Out + 2 * RowBlock);
    }
  });
  parallelFor(0, Tasks, 1, [&](int64_t Begin, int64_t End) {
    auto St = std::make_unique<RowState>();
    for (int64_t T = Begin; T < End; ++T) {
      int64_t B, I0;
      int64_t Rows = TaskRows(T, B, I0);
      St->reset(Rows, G.Dv);
      const float *P0 = Partial.data() + T * Parts * Stride;
      for (int64_t R = 0; R < Rows; ++R) {
        float Mx = -INFINITY;
        for (int64_t Pt = 0; Pt < Parts; ++Pt)
          Mx = std::max(Mx, P0[Pt * Stride + R]);
        St->Max[R] = Mx;
        float *AccR = St->Acc + R * G.Dv;
        for (int64_t Pt = 0; Pt < Parts; ++Pt) {
          const float *P = P0 + Pt * Stride;
          if (P[R] == -INFINITY)
            continue; // Every key of the part masked.
          float W = expFloat(P[R] - Mx);
          St->Sum[R] += P[RowBlock + R] * W;
          const float *Acc = P + 2 * RowBlock + R * G.Dv;
          for (int64_t E = 0; E < G.Dv; ++E)
            AccR[E] += Acc[E] * W;
        }
      }
      writeRows(A, B, I0, Rows, *St);
    }
  });
}

/// Q, K and V's views when the loop reads them where a chain of view
/// nodes left them (InPlaceViews.h); null for dense operands.
using OperandViews = std::array<std::shared_ptr<const InPlaceView>, 3>;

/// Points operand Which (0: Q, 1: K, 2: V) of G at W, its view read in
/// place (Y: the output's shape); false when the loop cannot read it so: a
/// matrix axis spanning several strided axes, no contiguous axis where one
/// is needed, or batch axes other than the output's.
bool readInPlace(AttentionGeometry &G, int Which, const GroupedView &W,
                 const Shape &Y) {
  Shape S = logicalShape(W);
  size_t R = Y.rank();
  if (S.rank() != R)
    return false;
  for (size_t I = 0; I + 2 < R; ++I)
    if (S[I] != Y[I])
      return false;
  std::optional<MatrixView> M = matrixView(W);
  if (!M || static_cast<int64_t>(M->Offsets.size()) != G.Batches)
    return false;
  auto Unit = [](int64_t Stride, int64_t Extent) {
    return Stride == 1 || Extent == 1;
  };
  if (Which != 1) {
    if (!Unit(M->ColStride, S[R - 1]))
      return false;
    (Which == 0 ? G.QOff : G.VOff) = std::move(M->Offsets);
    (Which == 0 ? G.QLd : G.VLd) = M->RowStride;
    return true;
  }
  // The keys, as [N, D] or as the node gives them, [D, N]: whichever axis
  // is contiguous decides how the loop reads them.
  int64_t NStride = G.KT ? M->ColStride : M->RowStride;
  int64_t DStride = G.KT ? M->RowStride : M->ColStride;
  if (Unit(DStride, G.D)) {
    G.KT = false;
    G.KLd = NStride;
  } else if (Unit(NStride, G.N)) {
    G.KT = true;
    G.KLd = DStride;
  } else {
    return false;
  }
  G.KOff = std::move(M->Offsets);
  return true;
}

/// The geometry at the slot shapes ShapeOf gives (Y: the output's shape),
/// with the operands Views names read in place; when one of those cannot
/// be, nullopt and *Refused says which.
std::optional<AttentionGeometry>
geometryAt(const std::vector<int> &In, const OperandViews &Views, bool HasMask,
           bool KT, const SlotShapeFn &ShapeOf, const Shape &Y,
           int *Refused = nullptr) {
  std::optional<AttentionGeometry> G = attentionGeometry(
      ShapeOf(In[0]), ShapeOf(In[1]), ShapeOf(In[2]),
      HasMask ? &ShapeOf(In[3]) : nullptr, Y, KT);
  for (int I = 0; G && I < 3; ++I) {
    if (!Views[I])
      continue;
    std::optional<GroupedView> W = Views[I]->At(ShapeOf);
    if (!W || !readInPlace(*G, I, *W, Y)) {
      if (Refused)
        *Refused = I;
      return std::nullopt;
    }
  }
  return G;
}

} // namespace

bool lowerAttention(LowerContext &C, const ir::Node &N) {
  bool HasMask = N.hasInput(3);
  size_t NumIn = HasMask ? 4 : 3;
  for (size_t I = 0; I < NumIn; ++I)
    if (!C.isF32(N.input(I)))
      return false;
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  bool KT = N.attrInt("k_transposed") != 0;
  float Scale = N.attrFloat("scale");
  // A transpose left unmaterialized for a product is made real first; so is
  // a mask left as a view.
  for (size_t I = 0; I < NumIn; ++I)
    if (C.slotOfValue(N.input(I)).TransposeOf >= 0)
      materializeTranspose(C, N.input(I));
  materializeInPlaceInputs(C, N, /*Keep=*/3);
  std::vector<int> In;
  OperandViews Views;
  auto Slots = [&] {
    In.clear();
    for (size_t I = 0; I < NumIn; ++I)
      In.push_back(C.B.plainOf(C.slotOf(N.input(I))));
    for (size_t I = 0; I < 3; ++I)
      Views[I] = C.slot(In[I]).InPlace;
  };
  Slots();
  auto Now = [&C](int S) -> const Shape & { return C.slot(S).S; };
  // An operand the loop cannot read where it lies is copied first.
  for (int Refused = -1;
       !geometryAt(In, Views, HasMask, KT, Now, YS, &Refused); Refused = -1) {
    if (Refused < 0)
      return false;
    materializeInPlace(C, N.input(Refused));
    Slots();
  }
  bool InPlace = Views[0] || Views[1] || Views[2];
  int Out = C.defineBuffer(N.output(0));
  // The geometry at the slots' shapes, made once per shape: a reshaped
  // program (a new sequence or cache length) takes it again in Adopt, and
  // a run reads it as it is.
  auto Geometry = [=](const SlotShapeFn &ShapeOf) {
    return geometryAt(In, Views, HasMask, KT, ShapeOf, ShapeOf(Out));
  };
  auto Cur = std::make_shared<AttentionGeometry>(*Geometry(Now));
  // The geometry at the shapes a reshape asks about (fits), which its
  // adopt then takes: each reshape computes it once.
  auto Next = std::make_shared<std::optional<AttentionGeometry>>();
  emitLoop(
      C, In, Out,
      C.describe(N) + " (flash attention" +
          (KT ? ", keys given transposed" : "") +
          (InPlace ? ", operands read in place" : "") + ")",
      [=](Program &P) {
        AttentionArgs A{Cur.get(),
                        static_cast<const float *>(P.dataOf(In[0])),
                        static_cast<const float *>(P.dataOf(In[1])),
                        static_cast<const float *>(P.dataOf(In[2])),
                        HasMask ? static_cast<const float *>(P.dataOf(In[3]))
                                : nullptr,
                        reinterpret_cast<float *>(P.bufferData(Out)), Scale};
        runAttention(A);
      },
      [=](const Program &, const SlotShapes &New) {
        *Next = Geometry([&New](int S) -> const Shape & { return New[S]; });
        return Next->has_value();
      },
      [=](Program &P) {
        std::optional<AttentionGeometry> G = std::move(*Next);
        Next->reset();
        if (!G)
          G = Geometry([&P](int S) -> const Shape & { return P.Slots[S].S; });
        if (!G)
          return false;
        *Cur = std::move(*G);
        return true;
      });
  return true;
}

} // namespace nng::backends::cpu
