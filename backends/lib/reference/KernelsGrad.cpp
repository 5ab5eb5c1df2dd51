//===- KernelsGrad.cpp - Gradients of Conv's weight and of the pools -----===//
//
// Reference kernels of the nng gradient ops that eager autograd uses:
// nng.ConvGradWeight (dW of Conv from X and dY), nng.MaxPoolGrad (each dY
// element added to its window's first maximum, the element the forward
// MaxPool kernel picks as its index) and nng.AveragePoolGrad (each dY element
// spread evenly over its window with the divisor the forward AveragePool
// uses). The geometry comes from ir's forwardWindow (WindowGeometry.h), so
// strides, pads, auto_pad, dilations and ceil_mode mean exactly what they
// mean in the forward ops and in shape inference.
// Computed in double, in parallel over independent outputs.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::reference {

namespace {

/// Checks that dY has the forward output shape [N, M, Win.Out...] for an
/// input X of shape [N, ...].
void checkGradShape(const KernelContext &C, const Tensor &X, const Tensor &DY,
                    int64_t M, const Window &Win) {
  Shape Want{X.size(0), M};
  for (int64_t E : Win.Out)
    Want.push_back(E);
  if (DY.shape() != Want)
    C.fail("dY ", DY.shape().toString(), " must have the forward output shape ",
           Want.toString(), " of X ", X.shape().toString());
}

/// Fails unless X is a float tensor of shape (N, C, spatial...) and dY has
/// its dtype and rank.
void checkGradOperands(const KernelContext &C, const Tensor &X,
                       const Tensor &DY) {
  requireFloat(C, X, "X");
  requireSameDType(C, X, DY, "X", "dY");
  if (X.rank() < 3)
    C.fail("X must have shape (N, C, spatial...), got ", X.shape().toString());
  if (DY.rank() != X.rank())
    C.fail("dY ", DY.shape().toString(), " must have the rank of X ",
           X.shape().toString());
}

/// Calls Visit(InFlat) for each position of output OIdx's window that lies
/// inside the input, in window scan order (row-major over the kernel), and
/// returns how many window positions lie inside the padded input. The same
/// walk as the forward pools (KernelsPool.cpp), so ties and divisors agree.
template <typename Fn>
int64_t forEachInWindow(const Window &W, const int64_t *OIdx, int64_t *KIdx,
                        Fn &&Visit) {
  size_t R = W.rank();
  int64_t KN = W.kernelNumel(), Padded = 0;
  for (int64_t K = 0; K < KN; ++K) {
    unflatten(K, W.Kernel, KIdx);
    bool Inside = true, InPadded = true;
    int64_t Flat = 0;
    for (size_t D = 0; D < R; ++D) {
      int64_t P =
          OIdx[D] * W.Strides[D] - W.PadBegin[D] + KIdx[D] * W.Dilations[D];
      Inside = Inside && P >= 0 && P < W.In[D];
      InPadded = InPadded && P < W.In[D] + W.PadEnd[D];
      Flat = Flat * W.In[D] + P;
    }
    Padded += InPadded;
    if (Inside)
      Visit(Flat);
  }
  return Padded;
}

/// Runs Scatter(PlaneX, PlaneDY, PlaneDX, OIdx, KIdx, OFlat) for every output
/// position of every (n, c) plane of a pool gradient; planes run in
/// parallel (a window never leaves its plane, so the scatters never race).
/// Returns dX in X's dtype.
template <typename Fn> Tensor poolGrad(KernelContext &C, Fn &&Scatter) {
  const Tensor &X = C.in(0), &DY = C.in(1);
  checkGradOperands(C, X, DY);
  Window Win = forwardWindow(C, X.shape());
  checkGradShape(C, X, DY, X.size(1), Win);
  Tensor X64 = toF64(X), DY64 = toF64(DY);
  Tensor DX = Tensor::empty(X.shape(), DType::F64); // Zero-filled.
  int64_t Planes = X.size(0) * X.size(1), InSp = 1, OutSp = Win.outNumel();
  for (int64_t E : Win.In)
    InSp *= E;
  const double *PX = ptr<double>(X64), *PDY = ptr<double>(DY64);
  double *PDX = mutPtr<double>(DX);
  size_t R = Win.rank();
  parallelFor(0, Planes, 1, [&](int64_t Begin, int64_t End) {
    std::vector<int64_t> OIdx(R), KIdx(R);
    for (int64_t Pl = Begin; Pl < End; ++Pl)
      for (int64_t O = 0; O < OutSp; ++O) {
        unflatten(O, Win.Out, OIdx.data());
        Scatter(Win, PX + Pl * InSp, PDY[Pl * OutSp + O], PDX + Pl * InSp,
                OIdx.data(), KIdx.data());
      }
  });
  return DX.to(X.dtype());
}

} // namespace

void kernelConvGradWeight(KernelContext &C) {
  const Tensor &X = C.in(0), &DY = C.in(1);
  checkGradOperands(C, X, DY);
  int64_t Group = C.attrInt("group");
  if (Group <= 0)
    C.fail("group must be positive, got ", Group);
  int64_t N = X.size(0), Ch = X.size(1), M = DY.size(1);
  if (Ch % Group != 0 || M % Group != 0)
    C.fail("X has ", Ch, " channels and dY ", M, " with group ", Group,
           ": both must be divisible by group");
  Window Win = forwardWindow(C, X.shape());
  checkGradShape(C, X, DY, M, Win);
  size_t R = Win.rank();
  int64_t CPerG = Ch / Group, MPerG = M / Group, KN = Win.kernelNumel();
  int64_t InSp = 1, OutSp = Win.outNumel();
  for (int64_t E : Win.In)
    InSp *= E;
  Shape WShape{M, CPerG};
  for (int64_t E : Win.Kernel)
    WShape.push_back(E);
  Tensor X64 = toF64(X), DY64 = toF64(DY);
  Tensor DW = Tensor::empty(WShape, DType::F64);
  const double *PX = ptr<double>(X64), *PDY = ptr<double>(DY64);
  double *PDW = mutPtr<double>(DW);
  // Kernel taps as multi-indices scaled by the dilations.
  std::vector<int64_t> Taps(KN * R);
  for (int64_t K = 0; K < KN; ++K) {
    unflatten(K, Win.Kernel, &Taps[K * R]);
    for (size_t D = 0; D < R; ++D)
      Taps[K * R + D] *= Win.Dilations[D];
  }
  // dW[m, ci, k] = sum over n and output positions o of
  //   dY[n, m, o] * X[n, g * CPerG + ci, o * stride - pad + k * dilation].
  parallelFor(0, M * CPerG, 1, [&](int64_t Begin, int64_t End) {
    std::vector<int64_t> OIdx(R), Origin(R);
    std::vector<double> Acc(KN);
    for (int64_t MC = Begin; MC < End; ++MC) {
      int64_t Mc = MC / CPerG, Ci = MC % CPerG, XC = (Mc / MPerG) * CPerG + Ci;
      std::fill(Acc.begin(), Acc.end(), 0.0);
      for (int64_t Nb = 0; Nb < N; ++Nb) {
        const double *XPlane = PX + (Nb * Ch + XC) * InSp;
        const double *DYPlane = PDY + (Nb * M + Mc) * OutSp;
        for (int64_t O = 0; O < OutSp; ++O) {
          unflatten(O, Win.Out, OIdx.data());
          for (size_t D = 0; D < R; ++D)
            Origin[D] = OIdx[D] * Win.Strides[D] - Win.PadBegin[D];
          double G = DYPlane[O];
          for (int64_t K = 0; K < KN; ++K) {
            int64_t Flat = 0;
            bool Inside = true;
            for (size_t D = 0; D < R && Inside; ++D) {
              int64_t P = Origin[D] + Taps[K * R + D];
              Inside = P >= 0 && P < Win.In[D];
              Flat = Flat * Win.In[D] + P;
            }
            if (Inside)
              Acc[K] += G * XPlane[Flat];
          }
        }
      }
      std::copy(Acc.begin(), Acc.end(), PDW + MC * KN);
    }
  });
  C.Outputs[0] = DW.to(X.dtype());
}

void kernelMaxPoolGrad(KernelContext &C) {
  C.Outputs[0] = poolGrad(C,
                          [](const Window &W, const double *In, double G,
                             double *Out, const int64_t *OIdx, int64_t *KIdx) {
                            // The same choice as the forward MaxPool: the first
                            // maximum in window scan order wins, a NaN beats
                            // any number.
                            double Best = 0;
                            int64_t BestAt = -1;
                            forEachInWindow(W, OIdx, KIdx, [&](int64_t Flat) {
                              double V = In[Flat];
                              if (BestAt < 0 || V > Best ||
                                  (std::isnan(V) && !std::isnan(Best))) {
                                Best = V;
                                BestAt = Flat;
                              }
                            });
                            if (BestAt >= 0)
                              Out[BestAt] += G;
                          });
}

void kernelAveragePoolGrad(KernelContext &C) {
  bool IncludePad = C.attrInt("count_include_pad") != 0;
  C.Outputs[0] =
      poolGrad(C,
               [IncludePad](const Window &W, const double *, double G,
                            double *Out, const int64_t *OIdx, int64_t *KIdx) {
                 // The divisor is the forward one: the window positions inside
                 // the input, or with count_include_pad those inside the padded
                 // input.
                 int64_t Count = 0;
                 int64_t Padded =
                     forEachInWindow(W, OIdx, KIdx, [&](int64_t) { ++Count; });
                 if (Count == 0)
                   return;
                 double Share =
                     G / static_cast<double>(IncludePad ? Padded : Count);
                 forEachInWindow(W, OIdx, KIdx,
                                 [&](int64_t Flat) { Out[Flat] += Share; });
               });
}

} // namespace nng::backends::reference
