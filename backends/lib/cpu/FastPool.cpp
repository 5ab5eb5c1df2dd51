//===- FastPool.cpp - Typed f32 loops for 2-D max pooling ----------------===//
//
// MaxPool (no Indices output) and nng.MaxPoolGrad over f32 [N, C, H, W]
// with undilated windows that lie wholly inside the input (no padding, no
// ceil-mode overhang): oneDNN 2.6 runs plain-layout max pooling on a slow
// implementation. The window choice is the reference kernel's: the first
// maximum in scan order wins and a NaN beats any number (so NaN inputs need
// no fallback). The gradient path also requires windows that do not
// overlap (stride >= kernel), so each dX element receives at most one dY
// value and the result equals the reference's exactly. Anything else goes
// to the fallback kernel.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"
#include "FastKernels.h"

#include <cmath>

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
    Win = reference::forwardWindow(C, X.shape(), C.attrInts("kernel_shape"),
                                   true, C.attrInt("ceil_mode") != 0);
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
  parallelFor(0, P.Planes, planeGrain(P), [&](int64_t B, int64_t E) {
    for (int64_t Pl = B; Pl < E; ++Pl) {
      const float *I = In + Pl * P.H * P.W;
      float *O = Out + Pl * P.OH * P.OW;
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
  parallelFor(0, P.Planes, planeGrain(P), [&](int64_t B, int64_t E) {
    for (int64_t Pl = B; Pl < E; ++Pl) {
      const float *I = In + Pl * P.H * P.W;
      const float *GP = G + Pl * P.OH * P.OW;
      float *O = Out + Pl * P.H * P.W;
      std::fill(O, O + P.H * P.W, 0.f);
      for (int64_t OY = 0; OY < P.OH; ++OY)
        for (int64_t OX = 0; OX < P.OW; ++OX)
          O[argMaxAt(I, P, OY, OX)] += GP[OY * P.OW + OX];
    }
  });
  return true;
}

} // namespace nng::backends::cpu
