//===- KernelsTraining.cpp - f32 batch norm training and Relu gradient ----===//
//
// The cpu backend's loops for the fused training ops over f32 [N, C, ...]
// tensors, in parallel over channels (batch norm) or flat chunks (ReluGrad):
//
//   nng.BatchNormTraining: per channel one pass for the sum, one for the
//     squared deviations from the (f32) mean, one writing Y. Each step
//     rounds as the f32 ops of F::batch_norm's traced composition do (sums
//     in double, Y = (X - mean) * rsqrt(var + eps) * scale + B in f32), so
//     eager and traced training-mode graphs agree to the last bits.
//   nng.BatchNormTrainingGrad: one pass for sum dY and sum dY (X - mean), one
//     writing dX = a dY + b (X - mean) + c.
//   nng.ReluGrad: dX = Y > 0 ? dY : 0.
//
// The sums run in independent lanes (the loops vectorize); the gradient's in
// float over blocks of 1024 values with the block totals added in double.
// Other dtypes, bad shapes and absent operands go to the reference kernel
// (which reports errors); results differ from it by float rounding only.
//
//===----------------------------------------------------------------------===//

#include "KernelsTraining.h"
#include "DnnlKernel.h"

#include <atomic>
#include <cmath>

namespace nng::backends::cpu {

namespace {


constexpr int64_t Lanes = 16;
constexpr int64_t Block = 1024;
/// Minimum values per parallel chunk.
constexpr int64_t Grain = 1 << 15;

/// Sum of P[0, N) in double (lanes, so the loop vectorizes).
double sumValues(const float *P, int64_t N) {
  double S[Lanes] = {};
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L)
      S[L] += P[I + L];
  double Sum = 0;
  for (; I < N; ++I)
    Sum += P[I];
  for (int64_t L = 0; L < Lanes; ++L)
    Sum += S[L];
  return Sum;
}

/// Sum of the float squares (P[i] - Shift)^2 in double: the rounding of
/// mean((X - mean)^2) in f32 ops.
double sumSquaredDeviations(const float *P, int64_t N, float Shift) {
  double S[Lanes] = {};
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L) {
      float D = P[I + L] - Shift;
      S[L] += D * D;
    }
  double Sum = 0;
  for (; I < N; ++I) {
    float D = P[I] - Shift;
    Sum += D * D;
  }
  for (int64_t L = 0; L < Lanes; ++L)
    Sum += S[L];
  return Sum;
}

/// Sum of G[0, N) and of G * (X - Shift).
void sumGradients(const float *G, const float *X, int64_t N, float Shift,
                  double &SumG, double &SumGD) {
  for (int64_t B0 = 0; B0 < N; B0 += Block) {
    int64_t BE = std::min(N, B0 + Block);
    float S[Lanes] = {}, T[Lanes] = {};
    int64_t I = B0;
    for (; I + Lanes <= BE; I += Lanes)
      for (int64_t L = 0; L < Lanes; ++L) {
        S[L] += G[I + L];
        T[L] += G[I + L] * (X[I + L] - Shift);
      }
    double BS = 0, BT = 0;
    for (; I < BE; ++I) {
      BS += G[I];
      BT += static_cast<double>(G[I]) * (static_cast<double>(X[I]) - Shift);
    }
    for (int64_t L = 0; L < Lanes; ++L) {
      BS += S[L];
      BT += T[L];
    }
    SumG += BS;
    SumGD += BT;
  }
}

/// X as (N, C, Inner) when it is f32 of rank >= 2 and not empty.
struct NCInner {
  int64_t N = 0, Ch = 0, Inner = 1;
};
bool ncInner(const Tensor &X, NCInner &L) {
  if (!isF32(X) || X.rank() < 2 || X.numel() == 0)
    return false;
  L = {X.size(0), X.size(1), 1};
  for (size_t D = 2; D < X.rank(); ++D)
    L.Inner *= X.size(D);
  return true;
}

/// Input I when absent or an f32 [Ch] vector (Ok false otherwise).
Tensor channelInput(const KernelContext &C, size_t I, int64_t Ch, bool &Ok) {
  if (!C.hasInput(I))
    return Tensor();
  const Tensor &T = C.in(I);
  if (!isF32(T) || T.shape() != Shape{Ch}) {
    Ok = false;
    return Tensor();
  }
  return dense(T);
}

float at(const Tensor &T, int64_t I, float Default) {
  return T.defined() ? static_cast<const float *>(T.rawData())[I] : Default;
}

int64_t channelGrain(const NCInner &L) {
  return std::max<int64_t>(1, Grain / std::max<int64_t>(1, L.N * L.Inner));
}

bool batchNormTraining(KernelContext &C) {
  NCInner L;
  if (!ncInner(C.in(0), L))
    return false;
  bool Ok = true;
  Tensor Scale = channelInput(C, 1, L.Ch, Ok);
  Tensor Bias = channelInput(C, 2, L.Ch, Ok);
  if (!Ok)
    return false;
  Tensor X = dense(C.in(0));
  float EpsF = C.attrFloat("epsilon");
  double Count = static_cast<double>(L.N * L.Inner);
  Tensor &Y = C.allocOutput(0, X.shape(), DType::F32);
  Tensor &Mean = C.allocOutput(1, Shape{L.Ch}, DType::F32);
  Tensor &Var = C.allocOutput(2, Shape{L.Ch}, DType::F32);
  const float *PX = static_cast<const float *>(X.rawData());
  float *PY = static_cast<float *>(Y.rawData());
  float *PM = static_cast<float *>(Mean.rawData());
  float *PV = static_cast<float *>(Var.rawData());
  parallelFor(0, L.Ch, channelGrain(L), [&](int64_t B, int64_t E) {
    for (int64_t Ci = B; Ci < E; ++Ci) {
      double Sum = 0, Sq = 0;
      for (int64_t Nb = 0; Nb < L.N; ++Nb)
        Sum += sumValues(PX + (Nb * L.Ch + Ci) * L.Inner, L.Inner);
      float MF = static_cast<float>(Sum / Count);
      for (int64_t Nb = 0; Nb < L.N; ++Nb)
        Sq += sumSquaredDeviations(PX + (Nb * L.Ch + Ci) * L.Inner, L.Inner,
                                   MF);
      float VF = static_cast<float>(Sq / Count);
      PM[Ci] = MF;
      PV[Ci] = VF;
      // The f32 steps of (X - mean) * rsqrt(var + eps) * scale + B, so that
      // eager and a traced (composed) graph round alike.
      float R = 1.f / std::sqrt(VF + EpsF);
      bool HasScale = Scale.defined(), HasBias = Bias.defined();
      float S = at(Scale, Ci, 1.f), Sh = at(Bias, Ci, 0.f);
      for (int64_t Nb = 0; Nb < L.N; ++Nb) {
        const float *In = PX + (Nb * L.Ch + Ci) * L.Inner;
        float *Out = PY + (Nb * L.Ch + Ci) * L.Inner;
        if (HasScale && HasBias)
          for (int64_t I = 0; I < L.Inner; ++I)
            Out[I] = (In[I] - MF) * R * S + Sh;
        else if (HasScale)
          for (int64_t I = 0; I < L.Inner; ++I)
            Out[I] = (In[I] - MF) * R * S;
        else if (HasBias)
          for (int64_t I = 0; I < L.Inner; ++I)
            Out[I] = (In[I] - MF) * R + Sh;
        else
          for (int64_t I = 0; I < L.Inner; ++I)
            Out[I] = (In[I] - MF) * R;
      }
    }
  });
  return true;
}

bool batchNormTrainingGrad(KernelContext &C) {
  NCInner L;
  if (!ncInner(C.in(1), L) || !isF32(C.in(0)) ||
      C.in(0).shape() != C.in(1).shape())
    return false;
  bool Ok = true;
  Tensor Mean = channelInput(C, 2, L.Ch, Ok);
  Tensor Var = channelInput(C, 3, L.Ch, Ok);
  Tensor Scale = channelInput(C, 4, L.Ch, Ok);
  if (!Ok || !Mean.defined() || !Var.defined())
    return false;
  Tensor DY = dense(C.in(0)), X = dense(C.in(1));
  double Eps = C.attrFloat("epsilon");
  double Count = static_cast<double>(L.N * L.Inner);
  Tensor &DX = C.allocOutput(0, X.shape(), DType::F32);
  Tensor &DScale = C.allocOutput(1, Shape{L.Ch}, DType::F32);
  Tensor &DBias = C.allocOutput(2, Shape{L.Ch}, DType::F32);
  const float *PX = static_cast<const float *>(X.rawData());
  const float *PG = static_cast<const float *>(DY.rawData());
  float *PD = static_cast<float *>(DX.rawData());
  float *PS = static_cast<float *>(DScale.rawData());
  float *PB = static_cast<float *>(DBias.rawData());
  parallelFor(0, L.Ch, channelGrain(L), [&](int64_t B, int64_t E) {
    for (int64_t Ci = B; Ci < E; ++Ci) {
      float MF = at(Mean, Ci, 0.f);
      double InvStd = 1.0 / std::sqrt(static_cast<double>(at(Var, Ci, 1.f)) +
                                      Eps);
      double SumG = 0, SumGD = 0;
      for (int64_t Nb = 0; Nb < L.N; ++Nb) {
        int64_t Off = (Nb * L.Ch + Ci) * L.Inner;
        sumGradients(PG + Off, PX + Off, L.Inner, MF, SumG, SumGD);
      }
      PB[Ci] = static_cast<float>(SumG);
      PS[Ci] = static_cast<float>(SumGD * InvStd);
      // dX = s invstd (dY - SumG / M - (x - m) invstd^2 SumGD / M).
      double S = at(Scale, Ci, 1.f);
      float A = static_cast<float>(S * InvStd);
      float Bc = static_cast<float>(-S * InvStd * InvStd * InvStd * SumGD /
                                    Count);
      float Cc = static_cast<float>(-S * InvStd * SumG / Count);
      for (int64_t Nb = 0; Nb < L.N; ++Nb) {
        int64_t Off = (Nb * L.Ch + Ci) * L.Inner;
        const float *G = PG + Off, *In = PX + Off;
        float *Out = PD + Off;
        for (int64_t I = 0; I < L.Inner; ++I)
          Out[I] = A * G[I] + Bc * (In[I] - MF) + Cc;
      }
    }
  });
  return true;
}

bool reluGrad(KernelContext &C) {
  const Tensor &YIn = C.in(0), &GIn = C.in(1);
  if (!isF32(YIn) || !isF32(GIn) || YIn.shape() != GIn.shape())
    return false;
  Tensor Y = dense(YIn), G = dense(GIn);
  Tensor &DX = C.allocOutput(0, G.shape(), DType::F32);
  const float *PY = static_cast<const float *>(Y.rawData());
  const float *PG = static_cast<const float *>(G.rawData());
  float *PD = static_cast<float *>(DX.rawData());
  parallelFor(0, G.numel(), Grain, [&](int64_t B, int64_t E) {
    // Both loads unconditional, so the select vectorizes.
    for (int64_t I = B; I < E; ++I) {
      float G = PG[I];
      PD[I] = PY[I] > 0.f ? G : 0.f;
    }
  });
  return true;
}

} // namespace

bool runBatchNormTraining(KernelContext &C) { return batchNormTraining(C); }
bool runBatchNormTrainingGrad(KernelContext &C) {
  return batchNormTrainingGrad(C);
}
bool runReluGrad(KernelContext &C) { return reluGrad(C); }

} // namespace nng::backends::cpu
