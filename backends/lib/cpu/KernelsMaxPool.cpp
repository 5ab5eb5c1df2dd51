//===- KernelsMaxPool.cpp - Typed f32 loops for 2-D max pooling -----------===//
//
// MaxPool (no Indices output) and nng.MaxPoolGrad over f32 [N, C, H, W]
// with undilated windows that lie wholly inside the input (no padding, no
// ceil-mode overhang): oneDNN 2.6 runs plain-layout max pooling on a slow
// implementation. The window choice is the reference kernel's: the first
// maximum in scan order wins and a NaN beats any number (so NaN inputs need
// no fallback). The gradient path also requires windows that do not
// overlap (stride >= kernel), so each dX element receives at most one dY
// value and the result equals the reference's exactly. Anything else goes
// to the fallback kernel. The common 2x2 window with stride 2 has its own
// branch-free row loops (the gradient's in SSE2, four windows at a time:
// the compiler does not vectorize its interleaved stores).
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"
#include "Kernels.h"

#include <cmath>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace nng::backends::cpu {

namespace {

/// The geometry of a pool the loops serve.
struct Pool2D {
  int64_t Planes = 0, H = 0, W = 0, KH = 0, KW = 0, SH = 0, SW = 0;
  int64_t OH = 0, OW = 0;
};

/// The pool of node C over the f32 X, or false when the loops cannot serve
/// it (NonOverlapping: also require stride >= kernel).
bool poolOf(KernelContext &C, const Tensor &X, bool NonOverlapping, Pool2D &P) {
  if (!X.defined() || X.dtype() != DType::F32 || X.rank() != 4 ||
      X.numel() == 0)
    return false;
  Window Win;
  try {
    Win = reference::forwardWindow(C, X.shape());
  } catch (...) {
    return false; // The reference kernel reports it.
  }
  if (Win.rank() != 2)
    return false;
  for (size_t D = 0; D < 2; ++D) {
    if (Win.Dilations[D] != 1 || Win.PadBegin[D] != 0 || Win.Kernel[D] < 1 ||
        Win.Strides[D] < 1 || Win.In[D] < Win.Kernel[D] ||
        Win.Out[D] != (Win.In[D] - Win.Kernel[D]) / Win.Strides[D] + 1)
      return false;
    if (NonOverlapping && Win.Strides[D] < Win.Kernel[D])
      return false;
  }
  P.Planes = X.size(0) * X.size(1);
  P.H = Win.In[0];
  P.W = Win.In[1];
  P.KH = Win.Kernel[0];
  P.KW = Win.Kernel[1];
  P.SH = Win.Strides[0];
  P.SW = Win.Strides[1];
  P.OH = Win.Out[0];
  P.OW = Win.Out[1];
  return true;
}

/// The offset (within its plane) of the window maximum at (OY, OX).
inline int64_t argMaxAt(const float *In, const Pool2D &P, int64_t OY,
                        int64_t OX) {
  int64_t Y0 = OY * P.SH, X0 = OX * P.SW;
  int64_t BestAt = Y0 * P.W + X0;
  float Best = In[BestAt];
  for (int64_t KY = 0; KY < P.KH; ++KY)
    for (int64_t KX = 0; KX < P.KW; ++KX) {
      int64_t At = (Y0 + KY) * P.W + X0 + KX;
      float V = In[At];
      if (V > Best || (std::isnan(V) && !std::isnan(Best))) {
        Best = V;
        BestAt = At;
      }
    }
  return BestAt;
}

int64_t planeGrain(const Pool2D &P) {
  return std::max<int64_t>(1, (1 << 15) / (P.H * P.W));
}

/// True for the common 2x2 window with stride 2.
bool isTwoByTwo(const Pool2D &P) {
  return P.KH == 2 && P.KW == 2 && P.SH == 2 && P.SW == 2;
}

/// Whether V replaces Best as the window maximum in scan order: larger, or
/// a NaN over a number (written so that the forward row loop vectorizes).
inline bool beats(float V, float Best) {
  return V > Best || (V != V && Best == Best);
}

/// The 2x2 / stride 2 forward over one plane.
void maxPool2x2Plane(const float *I, float *O, const Pool2D &P) {
  for (int64_t OY = 0; OY < P.OH; ++OY) {
    const float *R0 = I + 2 * OY * P.W, *R1 = R0 + P.W;
    float *Out = O + OY * P.OW;
    for (int64_t OX = 0; OX < P.OW; ++OX) {
      float M = R0[2 * OX];
      float B = R0[2 * OX + 1], C = R1[2 * OX], D = R1[2 * OX + 1];
      M = beats(B, M) ? B : M;
      M = beats(C, M) ? C : M;
      M = beats(D, M) ? D : M;
      Out[OX] = M;
    }
  }
}

#ifdef __SSE2__
/// Lanes of V that beat Best (beats() on four lanes).
inline __m128 beats4(__m128 V, __m128 Best) {
  __m128 NaNOverNumber =
      _mm_and_ps(_mm_cmpunord_ps(V, V), _mm_cmpord_ps(Best, Best));
  return _mm_or_ps(_mm_cmpgt_ps(V, Best), NaNOverNumber);
}
/// Mask ? A : B per lane.
inline __m128 select4(__m128 Mask, __m128 A, __m128 B) {
  return _mm_or_ps(_mm_and_ps(Mask, A), _mm_andnot_ps(Mask, B));
}

/// Four windows of the 2x2 gradient from output column OX on: the rows'
/// even and odd elements deinterleaved, the winner masks, dY masked by each
/// and interleaved back. Returns the next column.
int64_t maxPoolGrad2x2Row4(const float *R0, const float *R1, const float *GR,
                           float *O0, float *O1, int64_t OW) {
  const __m128 Ones = _mm_castsi128_ps(_mm_set1_epi32(-1));
  int64_t OX = 0;
  for (; OX + 4 <= OW; OX += 4) {
    __m128 T0 = _mm_loadu_ps(R0 + 2 * OX), T1 = _mm_loadu_ps(R0 + 2 * OX + 4);
    __m128 U0 = _mm_loadu_ps(R1 + 2 * OX), U1 = _mm_loadu_ps(R1 + 2 * OX + 4);
    __m128 A = _mm_shuffle_ps(T0, T1, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 B = _mm_shuffle_ps(T0, T1, _MM_SHUFFLE(3, 1, 3, 1));
    __m128 C = _mm_shuffle_ps(U0, U1, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 D = _mm_shuffle_ps(U0, U1, _MM_SHUFFLE(3, 1, 3, 1));
    __m128 TB = beats4(B, A), M = select4(TB, B, A);
    __m128 TC = beats4(C, M);
    M = select4(TC, C, M);
    __m128 TD = beats4(D, M);
    __m128 WC = _mm_andnot_ps(TD, TC);
    __m128 WB = _mm_andnot_ps(_mm_or_ps(TC, TD), TB);
    __m128 WA = _mm_andnot_ps(_mm_or_ps(TB, _mm_or_ps(TC, TD)), Ones);
    __m128 G = _mm_loadu_ps(GR + OX);
    __m128 GA = _mm_and_ps(WA, G), GB = _mm_and_ps(WB, G);
    __m128 GC = _mm_and_ps(WC, G), GD = _mm_and_ps(TD, G);
    _mm_storeu_ps(O0 + 2 * OX, _mm_unpacklo_ps(GA, GB));
    _mm_storeu_ps(O0 + 2 * OX + 4, _mm_unpackhi_ps(GA, GB));
    _mm_storeu_ps(O1 + 2 * OX, _mm_unpacklo_ps(GC, GD));
    _mm_storeu_ps(O1 + 2 * OX + 4, _mm_unpackhi_ps(GC, GD));
  }
  return OX;
}
#endif

/// The 2x2 / stride 2 gradient over one plane: each dY value goes to its
/// window's first maximum, every other dX element (the rest of the window,
/// rows and columns no window covers) is zero.
void maxPoolGrad2x2Plane(const float *I, const float *G, float *O,
                         const Pool2D &P) {
  for (int64_t OY = 0; OY < P.OH; ++OY) {
    const float *R0 = I + 2 * OY * P.W, *R1 = R0 + P.W;
    float *O0 = O + 2 * OY * P.W, *O1 = O0 + P.W;
    const float *GR = G + OY * P.OW;
    int64_t OX = 0;
#ifdef __SSE2__
    OX = maxPoolGrad2x2Row4(R0, R1, GR, O0, O1, P.OW);
#endif
    for (; OX < P.OW; ++OX) {
      float A = R0[2 * OX], B = R0[2 * OX + 1];
      float C = R1[2 * OX], D = R1[2 * OX + 1];
      bool TB = beats(B, A);
      float M = TB ? B : A;
      int Arg = TB ? 1 : 0;
      bool TC = beats(C, M);
      M = TC ? C : M;
      Arg = TC ? 2 : Arg;
      Arg = beats(D, M) ? 3 : Arg;
      float GV = GR[OX];
      O0[2 * OX] = Arg == 0 ? GV : 0.f;
      O0[2 * OX + 1] = Arg == 1 ? GV : 0.f;
      O1[2 * OX] = Arg == 2 ? GV : 0.f;
      O1[2 * OX + 1] = Arg == 3 ? GV : 0.f;
    }
    for (int64_t X = 2 * P.OW; X < P.W; ++X)
      O0[X] = O1[X] = 0.f;
  }
  std::fill(O + 2 * P.OH * P.W, O + P.H * P.W, 0.f);
}

} // namespace

bool runFastMaxPool(KernelContext &C) {
  if (C.N.numOutputs() != 1)
    return false;
  Tensor X = C.in(0);
  Pool2D P;
  if (!poolOf(C, X, false, P))
    return false;
  X = dense(X);
  Tensor &Y =
      C.allocOutput(0, Shape{X.size(0), X.size(1), P.OH, P.OW}, DType::F32);
  const float *In = static_cast<const float *>(X.rawData());
  float *Out = static_cast<float *>(Y.rawData());
  bool TwoByTwo = isTwoByTwo(P);
  parallelFor(0, P.Planes, planeGrain(P), [&](int64_t B, int64_t E) {
    for (int64_t Pl = B; Pl < E; ++Pl) {
      const float *I = In + Pl * P.H * P.W;
      float *O = Out + Pl * P.OH * P.OW;
      if (TwoByTwo) {
        maxPool2x2Plane(I, O, P);
        continue;
      }
      for (int64_t OY = 0; OY < P.OH; ++OY)
        for (int64_t OX = 0; OX < P.OW; ++OX)
          O[OY * P.OW + OX] = I[argMaxAt(I, P, OY, OX)];
    }
  });
  return true;
}

bool runFastMaxPoolGrad(KernelContext &C) {
  if (!C.hasInput(1))
    return false;
  Tensor X = C.in(0), DY = C.in(1);
  Pool2D P;
  if (!poolOf(C, X, true, P) || DY.dtype() != DType::F32 ||
      DY.shape() != Shape{X.size(0), X.size(1), P.OH, P.OW})
    return false;
  X = dense(X);
  DY = dense(DY);
  Tensor &DX = C.allocOutput(0, X.shape(), DType::F32);
  const float *In = static_cast<const float *>(X.rawData());
  const float *G = static_cast<const float *>(DY.rawData());
  float *Out = static_cast<float *>(DX.rawData());
  bool TwoByTwo = isTwoByTwo(P);
  parallelFor(0, P.Planes, planeGrain(P), [&](int64_t B, int64_t E) {
    for (int64_t Pl = B; Pl < E; ++Pl) {
      const float *I = In + Pl * P.H * P.W;
      const float *GP = G + Pl * P.OH * P.OW;
      float *O = Out + Pl * P.H * P.W;
      if (TwoByTwo) {
        maxPoolGrad2x2Plane(I, GP, O, P);
        continue;
      }
      std::fill(O, O + P.H * P.W, 0.f);
      for (int64_t OY = 0; OY < P.OH; ++OY)
        for (int64_t OX = 0; OX < P.OW; ++OX)
          O[argMaxAt(I, P, OY, OX)] += GP[OY * P.OW + OX];
    }
  });
  return true;
}

} // namespace nng::backends::cpu
