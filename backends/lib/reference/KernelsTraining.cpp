//===- KernelsTraining.cpp - Batch norm training and Relu's gradient -----===//
//
// Reference kernels of the fused training ops: nng.BatchNormTraining (the
// per-channel batch mean and biased variance over every axis but axis 1,
// then the normalized, scaled and shifted Y), nng.BatchNormTrainingGrad
// (dB = sum dY, dscale = sum dY * xhat, dX = scale * invstd * (dY - dB / M -
// xhat * dscale / M) with M the values per channel) and nng.ReluGrad (dY
// where Y > 0, else 0; a NaN Y gives 0). Statistics and sums in double, one
// channel at a time, obviously like the formulas: the oracle of the cpu
// backend's loops (backends/lib/cpu/KernelsTraining.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// X viewed as (N, C, Inner).
struct NCInner {
  int64_t N = 0, Ch = 0, Inner = 1;
  int64_t at(int64_t Nb, int64_t Ci, int64_t I) const {
    return (Nb * Ch + Ci) * Inner + I;
  }
};

/// Checks that X (named What) is floating with shape (N, C, ...).
NCInner ncInner(const KernelContext &C, const Tensor &X, const char *What) {
  requireFloat(C, X, What);
  if (X.rank() < 2)
    C.fail(What, " must have shape (N, C, ...), got ", X.shape().toString());
  NCInner L{X.size(0), X.size(1), 1};
  for (size_t D = 2; D < X.rank(); ++D)
    L.Inner *= X.size(D);
  return L;
}

/// Input I as f64 [Ch], or Default everywhere when it is absent; fails
/// unless it has X's dtype and shape [Ch].
std::vector<double> channelValues(const KernelContext &C, size_t I,
                                  const Tensor &X, int64_t Ch,
                                  const char *What, double Default) {
  if (!C.hasInput(I))
    return std::vector<double>(Ch, Default);
  const Tensor &T = C.in(I);
  requireSameDType(C, X, T, "X", What);
  if (T.shape() != Shape{Ch})
    C.fail(What, " ", T.shape().toString(), " must have shape [", Ch,
           "] (one value per channel of X ", X.shape().toString(), ")");
  Tensor T64 = toF64(T);
  const double *P = ptr<double>(T64);
  return std::vector<double>(P, P + Ch);
}

/// A [Ch] output of dtype T from doubles.
Tensor channelTensor(const std::vector<double> &V, DType T) {
  Tensor R = Tensor::empty(Shape{static_cast<int64_t>(V.size())}, DType::F64);
  std::copy(V.begin(), V.end(), mutPtr<double>(R));
  return R.to(T);
}

} // namespace

void kernelBatchNormTraining(KernelContext &C) {
  const Tensor &X = C.in(0);
  NCInner L = ncInner(C, X, "X");
  std::vector<double> Scale = channelValues(C, 1, X, L.Ch, "scale", 1.0);
  std::vector<double> Bias = channelValues(C, 2, X, L.Ch, "B", 0.0);
  double Eps = C.attrFloat("epsilon");
  int64_t Count = L.N * L.Inner;
  if (Count == 0)
    C.fail("X ", X.shape().toString(),
           " has no values per channel to take statistics over");
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64);
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  double *PY = mutPtr<double>(Y);
  std::vector<double> Mean(L.Ch), Var(L.Ch);
  for (int64_t Ci = 0; Ci < L.Ch; ++Ci) {
    double Sum = 0, Sq = 0;
    for (int64_t Nb = 0; Nb < L.N; ++Nb)
      for (int64_t I = 0; I < L.Inner; ++I)
        Sum += PX[L.at(Nb, Ci, I)];
    double M = Sum / static_cast<double>(Count);
    for (int64_t Nb = 0; Nb < L.N; ++Nb)
      for (int64_t I = 0; I < L.Inner; ++I) {
        double D = PX[L.at(Nb, Ci, I)] - M;
        Sq += D * D;
      }
    Mean[Ci] = M;
    Var[Ci] = Sq / static_cast<double>(Count);
    double InvStd = 1.0 / std::sqrt(Var[Ci] + Eps);
    for (int64_t Nb = 0; Nb < L.N; ++Nb)
      for (int64_t I = 0; I < L.Inner; ++I) {
        int64_t At = L.at(Nb, Ci, I);
        PY[At] = (PX[At] - M) * InvStd * Scale[Ci] + Bias[Ci];
      }
  }
  C.Outputs.resize(3);
  C.Outputs[0] = Y.to(X.dtype());
  C.Outputs[1] = channelTensor(Mean, X.dtype());
  C.Outputs[2] = channelTensor(Var, X.dtype());
}

void kernelBatchNormTrainingGrad(KernelContext &C) {
  const Tensor &DY = C.in(0), &X = C.in(1);
  NCInner L = ncInner(C, X, "X");
  requireSameDType(C, X, DY, "X", "dY");
  if (DY.shape() != X.shape())
    C.fail("dY ", DY.shape().toString(), " must have the shape of X ",
           X.shape().toString());
  std::vector<double> Mean = channelValues(C, 2, X, L.Ch, "mean", 0.0);
  std::vector<double> Var = channelValues(C, 3, X, L.Ch, "var", 1.0);
  std::vector<double> Scale = channelValues(C, 4, X, L.Ch, "scale", 1.0);
  double Eps = C.attrFloat("epsilon");
  double Count = static_cast<double>(L.N * L.Inner);
  Tensor X64 = toF64(X), DY64 = toF64(DY);
  const double *PX = ptr<double>(X64), *PG = ptr<double>(DY64);
  Tensor DX = Tensor::empty(X.shape(), DType::F64);
  double *PD = mutPtr<double>(DX);
  std::vector<double> DScale(L.Ch), DBias(L.Ch);
  for (int64_t Ci = 0; Ci < L.Ch; ++Ci) {
    double InvStd = 1.0 / std::sqrt(Var[Ci] + Eps);
    double SumG = 0, SumGXHat = 0;
    for (int64_t Nb = 0; Nb < L.N; ++Nb)
      for (int64_t I = 0; I < L.Inner; ++I) {
        int64_t At = L.at(Nb, Ci, I);
        SumG += PG[At];
        SumGXHat += PG[At] * (PX[At] - Mean[Ci]) * InvStd;
      }
    DBias[Ci] = SumG;
    DScale[Ci] = SumGXHat;
    for (int64_t Nb = 0; Nb < L.N; ++Nb)
      for (int64_t I = 0; I < L.Inner; ++I) {
        int64_t At = L.at(Nb, Ci, I);
        double XHat = (PX[At] - Mean[Ci]) * InvStd;
        PD[At] = Scale[Ci] * InvStd *
                 (PG[At] - SumG / Count - XHat * SumGXHat / Count);
      }
  }
  C.Outputs.resize(3);
  C.Outputs[0] = DX.to(X.dtype());
  C.Outputs[1] = channelTensor(DScale, X.dtype());
  C.Outputs[2] = channelTensor(DBias, X.dtype());
}

void kernelReluGrad(KernelContext &C) {
  const Tensor &Y = C.in(0), &DY = C.in(1);
  requireFloat(C, DY, "dY");
  requireSameDType(C, Y, DY, "Y", "dY");
  if (Y.shape() != DY.shape())
    C.fail("dY ", DY.shape().toString(), " must have the shape of Y ",
           Y.shape().toString());
  Tensor Y64 = toF64(Y), DY64 = toF64(DY);
  const double *PY = ptr<double>(Y64), *PG = ptr<double>(DY64);
  Tensor DX = Tensor::empty(Y.shape(), DType::F64);
  double *PD = mutPtr<double>(DX);
  for (int64_t I = 0, E = Y.numel(); I < E; ++I)
    PD[I] = PY[I] > 0 ? PG[I] : 0.0;
  C.Outputs.resize(1);
  C.Outputs[0] = DX.to(DY.dtype());
}

} // namespace nng::backends::reference
