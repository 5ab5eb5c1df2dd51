//===- KernelsPool.cpp - Max, average, Lp and global pooling -------------===//
//
// Reference kernels of the pooling ops over N-d inputs (N, C, spatial...):
// MaxPool (with the Indices output in row- or column-major storage order,
// dilations, ceil_mode), AveragePool (count_include_pad), LpPool, and the
// global pools. Computed in double per (batch, channel) plane; padded
// positions never win a max and count for an average only with
// count_include_pad (up to the end of the padded input, as PyTorch does).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// Calls Visit(InFlat, InIdx) for each window position of output OIdx that
/// lies inside the input, and returns how many window positions lie inside
/// the padded input (for count_include_pad).
template <typename Fn>
int64_t forEachInWindow(const Window &W, const std::vector<int64_t> &OIdx,
                        std::vector<int64_t> &KIdx, std::vector<int64_t> &InIdx,
                        Fn &&Visit) {
  size_t R = W.rank();
  int64_t KN = W.kernelNumel(), Padded = 0;
  for (int64_t K = 0; K < KN; ++K) {
    unflatten(K, W.Kernel, KIdx.data());
    bool Inside = true, InPadded = true;
    int64_t Flat = 0;
    for (size_t D = 0; D < R; ++D) {
      int64_t P =
          OIdx[D] * W.Strides[D] - W.PadBegin[D] + KIdx[D] * W.Dilations[D];
      InIdx[D] = P;
      Inside = Inside && P >= 0 && P < W.In[D];
      InPadded = InPadded && P < W.In[D] + W.PadEnd[D];
      Flat = Flat * W.In[D] + P;
    }
    Padded += InPadded;
    if (Inside)
      Visit(Flat, InIdx);
  }
  return Padded;
}

/// A pooling op's input in f64 and its geometry: output shape
/// (N, C, W.Out...), number of (n, c) planes and spatial sizes.
struct PoolPlan {
  Tensor X64;
  Window W;
  Shape OutShape;
  int64_t Planes, InSp, OutSp;
};

PoolPlan poolPlan(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (X.rank() < 3)
    C.fail("X must have shape (N, C, spatial...), got ", X.shape().toString());
  PoolPlan P;
  P.W = forwardWindow(C, X.shape());
  P.X64 = toF64(X);
  P.OutShape = Shape{X.size(0), X.size(1)};
  for (int64_t E : P.W.Out)
    P.OutShape.push_back(E);
  P.Planes = X.size(0) * X.size(1);
  P.InSp = 1;
  for (int64_t E : P.W.In)
    P.InSp *= E;
  P.OutSp = P.W.outNumel();
  return P;
}

/// Applies Reduce(Plane, PlaneData, OIdx, KIdx, InIdx) -> double over every
/// output position of every plane, in parallel; returns the f64 output.
template <typename Fn> Tensor runPool(const PoolPlan &P, Fn &&Reduce) {
  Tensor Y = Tensor::empty(P.OutShape, DType::F64);
  const double *PX = ptr<double>(P.X64);
  double *PY = mutPtr<double>(Y);
  size_t R = P.W.rank();
  parallelFor(0, P.Planes, 1, [&](int64_t Begin, int64_t End) {
    std::vector<int64_t> OIdx(R), KIdx(R), InIdx(R);
    for (int64_t Pl = Begin; Pl < End; ++Pl)
      for (int64_t O = 0; O < P.OutSp; ++O) {
        unflatten(O, P.W.Out, OIdx.data());
        PY[Pl * P.OutSp + O] = Reduce(Pl, PX + Pl * P.InSp, OIdx, KIdx, InIdx);
      }
  });
  return Y;
}

void requirePoolType(KernelContext &C, bool AllowInt8) {
  DType T = C.in(0).dtype();
  if (!isFloatingPoint(T) && !(AllowInt8 && (T == DType::I8 || T == DType::U8)))
    C.fail("X must be floating-point", AllowInt8 ? " or i8/u8" : "", ", got ",
           dtypeName(T));
}

} // namespace

void kernelMaxPool(KernelContext &C) {
  requirePoolType(C, true);
  int64_t StorageOrder = C.attrInt("storage_order");
  if (StorageOrder != 0 && StorageOrder != 1)
    C.fail("storage_order must be 0 or 1, got ", StorageOrder);
  PoolPlan P = poolPlan(C);
  bool WantIndices = C.Outputs.size() > 1;
  Tensor Idx = Tensor::empty(P.OutShape, DType::I64);
  int64_t *PI = mutPtr<int64_t>(Idx);
  DType T = C.in(0).dtype();
  double Lowest = isFloatingPoint(T) ? -INFINITY
                  : T == DType::I8   ? -128.0
                                     : 0.0;
  size_t R = P.W.rank();
  Tensor Y = runPool(
      P, [&](int64_t Pl, const double *In, const std::vector<int64_t> &OIdx,
             std::vector<int64_t> &KIdx, std::vector<int64_t> &InIdx) {
        double Best = Lowest;
        int64_t BestAt = -1;
        forEachInWindow(P.W, OIdx, KIdx, InIdx,
                        [&](int64_t Flat, const std::vector<int64_t> &At) {
                          double V = In[Flat];
                          // The first maximum wins; NaN propagates.
                          if (BestAt < 0 || V > Best ||
                              (std::isnan(V) && !std::isnan(Best))) {
                            Best = V;
                            // Index into the whole of X, spatial part row-major
                            // or column-major (storage_order 1).
                            int64_t S = 0;
                            if (StorageOrder == 0) {
                              S = Flat;
                            } else {
                              for (size_t D = R; D-- > 0;)
                                S = S * P.W.In[D] + At[D];
                            }
                            BestAt = Pl * P.InSp + S;
                          }
                        });
        int64_t O = 0;
        for (size_t D = 0; D < R; ++D)
          O = O * P.W.Out[D] + OIdx[D];
        PI[Pl * P.OutSp + O] = BestAt;
        return Best;
      });
  C.Outputs[0] = Y.to(T);
  if (WantIndices)
    C.Outputs[1] = Idx;
}

void kernelAveragePool(KernelContext &C) {
  requirePoolType(C, false);
  bool IncludePad = C.attrInt("count_include_pad") != 0;
  PoolPlan P = poolPlan(C);
  Tensor Y = runPool(
      P, [&](int64_t, const double *In, const std::vector<int64_t> &OIdx,
             std::vector<int64_t> &KIdx, std::vector<int64_t> &InIdx) {
        double Sum = 0;
        int64_t Count = 0;
        int64_t Padded =
            forEachInWindow(P.W, OIdx, KIdx, InIdx,
                            [&](int64_t Flat, const std::vector<int64_t> &) {
                              Sum += In[Flat];
                              ++Count;
                            });
        return Sum / static_cast<double>(IncludePad ? Padded : Count);
      });
  C.Outputs[0] = Y.to(C.in(0).dtype());
}

void kernelLpPool(KernelContext &C) {
  requirePoolType(C, false);
  double Pw = static_cast<double>(C.attrInt("p"));
  if (Pw <= 0)
    C.fail("p must be positive, got ", C.attrInt("p"));
  PoolPlan P = poolPlan(C);
  Tensor Y = runPool(
      P, [&](int64_t, const double *In, const std::vector<int64_t> &OIdx,
             std::vector<int64_t> &KIdx, std::vector<int64_t> &InIdx) {
        double Sum = 0;
        forEachInWindow(P.W, OIdx, KIdx, InIdx,
                        [&](int64_t Flat, const std::vector<int64_t> &) {
                          Sum += std::pow(std::fabs(In[Flat]), Pw);
                        });
        return std::pow(Sum, 1.0 / Pw);
      });
  C.Outputs[0] = Y.to(C.in(0).dtype());
}

namespace {
/// Reduces each (n, c) plane of X with Reduce(Plane, Count) -> double.
template <typename Fn> void globalPool(KernelContext &C, Fn Reduce) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "X");
  if (X.rank() < 2)
    C.fail("X must have shape (N, C, spatial...), got ", X.shape().toString());
  Shape OutShape{X.size(0), X.size(1)};
  int64_t Inner = 1;
  for (size_t D = 2; D < X.rank(); ++D) {
    OutShape.push_back(1);
    Inner *= X.size(D);
  }
  Tensor X64 = toF64(X);
  Tensor Y = Tensor::empty(OutShape, DType::F64);
  const double *PX = ptr<double>(X64);
  double *PY = mutPtr<double>(Y);
  for (int64_t Pl = 0; Pl < X.size(0) * X.size(1); ++Pl)
    PY[Pl] = Reduce(PX + Pl * Inner, Inner);
  C.Outputs[0] = Y.to(X.dtype());
}
} // namespace

void kernelGlobalAveragePool(KernelContext &C) {
  globalPool(C, [](const double *P, int64_t N) {
    double S = 0;
    for (int64_t I = 0; I < N; ++I)
      S += P[I];
    return S / static_cast<double>(N);
  });
}

void kernelGlobalMaxPool(KernelContext &C) {
  globalPool(C, [](const double *P, int64_t N) {
    double M = -INFINITY;
    for (int64_t I = 0; I < N; ++I) {
      if (std::isnan(P[I]))
        return P[I]; // NaN propagates.
      M = std::max(M, P[I]);
    }
    return M;
  });
}

} // namespace nng::backends::reference
