//===- KernelsLoss.cpp - Losses, normalizations and Det -------------------===//
//
// Reference kernels of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (one shared loss over [N, C, d1...] log-probabilities: per-class weights,
// ignore_index, reduction none/sum/mean where mean divides by the summed
// weights of the counted elements), MeanVarianceNormalization (the ONNX
// function body: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9)), LRN (across
// channels) and Det (LU with partial pivoting). All compute in double and
// convert back to the input dtype.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::reference {

namespace {

/// The loss of NegativeLogLikelihoodLoss over LogProb (f64, contiguous,
/// [N, C, d1...]) with labels input 1 and optional weights input 2;
/// returns the f64 result in the output's shape.
Tensor nllLoss(KernelContext &C, const Tensor &LogProb) {
  const Shape &S = LogProb.shape();
  if (S.rank() < 2)
    C.fail("input must be [N, C, d1, ...], got ", S.toString());
  const Tensor &Target = C.in(1);
  if (!isIntegral(Target.dtype()))
    C.fail("labels must be i32 or i64, got ", dtypeName(Target.dtype()));
  Shape TShape(std::vector<int64_t>{S[0]});
  for (size_t D = 2; D < S.rank(); ++D)
    TShape.push_back(S[D]);
  if (Target.shape() != TShape)
    C.fail("labels ", Target.shape().toString(), " must have shape ",
           TShape.toString(), " for input ", S.toString());
  int64_t N = S[0], Classes = S[1], Inner = 1;
  for (size_t D = 2; D < S.rank(); ++D)
    Inner *= S[D];
  std::vector<double> W;
  if (C.hasInput(2)) {
    const Tensor &Wt = C.in(2);
    if (Wt.shape() != Shape{Classes})
      C.fail("weights ", Wt.shape().toString(), " must have shape [", Classes,
             "]");
    W = Wt.toDoubleVector();
  }
  bool HasIgnore = C.N.attrs().has("ignore_index");
  int64_t Ignore = HasIgnore ? C.attrInt("ignore_index") : 0;
  std::vector<int64_t> T = Target.toIntVector();
  const double *P = ptr<double>(LogProb);
  Tensor Loss = Tensor::empty(TShape, DType::F64);
  double *PL = mutPtr<double>(Loss);
  double WeightSum = 0, LossSum = 0;
  for (int64_t B = 0; B < N; ++B)
    for (int64_t I = 0; I < Inner; ++I) {
      int64_t Flat = B * Inner + I, Label = T[Flat];
      if (HasIgnore && Label == Ignore) {
        PL[Flat] = 0;
        continue;
      }
      if (Label < 0 || Label >= Classes)
        C.fail("label ", Label, " at position ", Flat, " is out of range [0, ",
               Classes, ")",
               HasIgnore ? " and is not ignore_index " + std::to_string(Ignore)
                         : std::string());
      double Wv = W.empty() ? 1.0 : W[Label];
      PL[Flat] = -P[(B * Classes + Label) * Inner + I] * Wv;
      WeightSum += Wv;
      LossSum += PL[Flat];
    }
  const std::string &R = C.attrString("reduction");
  if (R == "none")
    return Loss;
  if (R == "sum")
    return Tensor::scalar<double>(LossSum);
  if (R == "mean")
    return Tensor::scalar<double>(LossSum / WeightSum);
  C.fail("attribute reduction = '", R, "' must be 'none', 'sum' or 'mean'");
}

} // namespace

void kernelNegativeLogLikelihoodLoss(KernelContext &C) {
  requireFloat(C, C.in(0), "input");
  C.Outputs[0] = nllLoss(C, toF64(C.in(0))).to(C.in(0).dtype());
}

void kernelSoftmaxCrossEntropyLoss(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "scores");
  if (X.rank() < 2)
    C.fail("scores must be [N, C, d1, ...], got ", X.shape().toString());
  // Log-softmax along axis 1.
  Tensor LP = toF64(X);
  double *P = mutPtr<double>(LP);
  int64_t N = X.size(0), Classes = X.size(1), Inner = 1;
  for (size_t D = 2; D < X.rank(); ++D)
    Inner *= X.size(D);
  for (int64_t B = 0; B < N; ++B)
    for (int64_t I = 0; I < Inner; ++I) {
      double *Base = P + B * Classes * Inner + I;
      double Max = -INFINITY;
      for (int64_t K = 0; K < Classes; ++K)
        Max = std::max(Max, Base[K * Inner]);
      double Sum = 0;
      for (int64_t K = 0; K < Classes; ++K)
        Sum += std::exp(Base[K * Inner] - Max);
      double Log = Max + std::log(Sum);
      for (int64_t K = 0; K < Classes; ++K)
        Base[K * Inner] -= Log;
    }
  C.Outputs[0] = nllLoss(C, LP).to(X.dtype());
  if (C.Outputs.size() > 1)
    C.Outputs[1] = LP.to(X.dtype());
}

void kernelMeanVarianceNormalization(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "X");
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<bool> Reduced(R, false);
  for (int64_t A : C.attrInts("axes")) {
    int64_t D = normAxis(C, A, R, "axes entry");
    if (Reduced[D])
      C.fail("axes ", intsToString(C.attrInts("axes")), " repeat axis ", D);
    Reduced[D] = true;
  }
  // Group = the row-major position over the axes that are not reduced.
  const std::vector<int64_t> &Dims = X.shape().dims();
  int64_t Groups = 1;
  for (int64_t D = 0; D < R; ++D)
    if (!Reduced[D])
      Groups *= Dims[D];
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64);
  std::vector<int64_t> GroupOf(X.numel()), Idx(R);
  for (int64_t I = 0; I < X.numel(); ++I) {
    unflatten(I, Dims, Idx.data());
    int64_t G = 0;
    for (int64_t D = 0; D < R; ++D)
      if (!Reduced[D])
        G = G * Dims[D] + Idx[D];
    GroupOf[I] = G;
  }
  std::vector<double> Sum(Groups, 0.0), Sq(Groups, 0.0), Count(Groups, 0.0);
  for (int64_t I = 0; I < X.numel(); ++I) {
    Sum[GroupOf[I]] += PX[I];
    Sq[GroupOf[I]] += PX[I] * PX[I];
    Count[GroupOf[I]] += 1;
  }
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  double *PY = mutPtr<double>(Y);
  for (int64_t I = 0; I < X.numel(); ++I) {
    int64_t G = GroupOf[I];
    double Mean = Sum[G] / Count[G];
    double Var = std::max(0.0, Sq[G] / Count[G] - Mean * Mean);
    PY[I] = (PX[I] - Mean) / (std::sqrt(Var) + 1e-9);
  }
  C.Outputs[0] = Y.to(X.dtype());
}

void kernelLRN(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "X");
  if (X.rank() < 2)
    C.fail("X must be [N, C, ...], got ", X.shape().toString());
  int64_t Size = C.attrInt("size");
  if (Size <= 0)
    C.fail("attribute size = ", Size, " must be positive");
  double Alpha = C.attrFloat("alpha"), Beta = C.attrFloat("beta"),
         Bias = C.attrFloat("bias");
  int64_t N = X.size(0), Ch = X.size(1), Inner = 1;
  for (size_t D = 2; D < X.rank(); ++D)
    Inner *= X.size(D);
  int64_t Before = (Size - 1) / 2, After = Size - 1 - Before;
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64);
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  double *PY = mutPtr<double>(Y);
  for (int64_t B = 0; B < N; ++B)
    for (int64_t K = 0; K < Ch; ++K)
      for (int64_t I = 0; I < Inner; ++I) {
        double Sq = 0;
        for (int64_t J = std::max<int64_t>(0, K - Before);
             J <= std::min(Ch - 1, K + After); ++J) {
          double V = PX[(B * Ch + J) * Inner + I];
          Sq += V * V;
        }
        int64_t At = (B * Ch + K) * Inner + I;
        PY[At] = PX[At] / std::pow(Bias + Alpha / Size * Sq, Beta);
      }
  C.Outputs[0] = Y.to(X.dtype());
}

void kernelDet(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "X");
  size_t R = X.rank();
  if (R < 2 || X.size(R - 1) != X.size(R - 2))
    C.fail("X must be [*, M, M], got ", X.shape().toString());
  int64_t M = X.size(R - 1);
  Shape Out(X.shape().begin(), X.shape().end() - 2);
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64);
  Tensor Y = Tensor::empty(Out, DType::F64);
  double *PY = mutPtr<double>(Y);
  std::vector<double> A(M * M);
  for (int64_t B = 0; B < Y.numel(); ++B) {
    std::copy(PX + B * M * M, PX + (B + 1) * M * M, A.begin());
    double Det = 1;
    for (int64_t K = 0; K < M && Det != 0; ++K) {
      int64_t Pivot = K;
      for (int64_t I = K + 1; I < M; ++I)
        if (std::fabs(A[I * M + K]) > std::fabs(A[Pivot * M + K]))
          Pivot = I;
      if (A[Pivot * M + K] == 0) {
        Det = 0;
        break;
      }
      if (Pivot != K) {
        for (int64_t J = 0; J < M; ++J)
          std::swap(A[K * M + J], A[Pivot * M + J]);
        Det = -Det;
      }
      Det *= A[K * M + K];
      for (int64_t I = K + 1; I < M; ++I) {
        double F = A[I * M + K] / A[K * M + K];
        for (int64_t J = K; J < M; ++J)
          A[I * M + J] -= F * A[K * M + J];
      }
    }
    PY[B] = Det;
  }
  C.Outputs[0] = Y.to(X.dtype());
}

} // namespace nng::backends::reference
