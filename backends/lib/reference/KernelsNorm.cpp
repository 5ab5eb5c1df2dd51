//===- KernelsNorm.cpp - Batch, layer and instance normalization ---------===//
//
// Reference kernels of BatchNormalization (inference, and training_mode with
// the batch statistics and updated running mean/var), LayerNormalization
// (with its Mean and InvStdDev outputs) and InstanceNormalization. All
// statistics are computed in double with the biased (population) variance,
// as ONNX specifies.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// Checks that a per-channel operand has shape [C] and returns it in f64.
Tensor channelVector(KernelContext &C, size_t Input, int64_t Channels,
                     const char *What) {
  const Tensor &T = C.in(Input);
  requireFloat(C, T, What);
  if (T.shape() != Shape{Channels})
    C.fail(What, " ", T.shape().toString(), " must have shape [", Channels,
           "] (one value per channel)");
  return toF64(T);
}

/// X viewed as (N, C, Inner): batch, channels, and the spatial extent.
struct NCLayout {
  int64_t N, Ch, Inner;
};

/// Checks that X (named What) is floating with shape (N, C, ...).
NCLayout ncLayout(const KernelContext &C, const Tensor &X, const char *What) {
  requireFloat(C, X, What);
  if (X.rank() < 2)
    C.fail(What, " must have shape (N, C, ...), got ", X.shape().toString());
  int64_t Inner = 1;
  for (size_t D = 2; D < X.rank(); ++D)
    Inner *= X.size(D);
  return {X.size(0), X.size(1), Inner};
}

} // namespace

void kernelBatchNormalization(KernelContext &C) {
  const Tensor &X = C.in(0);
  auto [N, Ch, Inner] = ncLayout(C, X, "X");
  Tensor Scale = channelVector(C, 1, Ch, "scale");
  Tensor Bias = channelVector(C, 2, Ch, "B");
  Tensor Mean = channelVector(C, 3, Ch, "input_mean");
  Tensor Var = channelVector(C, 4, Ch, "input_var");
  double Eps = C.attrFloat("epsilon"), Mom = C.attrFloat("momentum");
  bool Training = C.attrInt("training_mode") != 0;
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64);
  std::vector<double> UseMean(Ch), UseVar(Ch);
  for (int64_t Ci = 0; Ci < Ch; ++Ci) {
    UseMean[Ci] = ptr<double>(Mean)[Ci];
    UseVar[Ci] = ptr<double>(Var)[Ci];
  }
  if (Training) {
    // Batch statistics over every axis but the channel axis.
    int64_t Count = N * Inner;
    for (int64_t Ci = 0; Ci < Ch; ++Ci) {
      double Sum = 0, Sq = 0;
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t I = 0; I < Inner; ++I)
          Sum += PX[(Nb * Ch + Ci) * Inner + I];
      double M = Count ? Sum / Count : std::nan("");
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t I = 0; I < Inner; ++I) {
          double D = PX[(Nb * Ch + Ci) * Inner + I] - M;
          Sq += D * D;
        }
      UseMean[Ci] = M;
      UseVar[Ci] = Count ? Sq / Count : std::nan("");
    }
  }
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  double *PY = mutPtr<double>(Y);
  const double *PS = ptr<double>(Scale), *PB = ptr<double>(Bias);
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t Ci = 0; Ci < Ch; ++Ci) {
      double InvStd = 1.0 / std::sqrt(UseVar[Ci] + Eps);
      for (int64_t I = 0; I < Inner; ++I) {
        int64_t At = (Nb * Ch + Ci) * Inner + I;
        PY[At] = (PX[At] - UseMean[Ci]) * InvStd * PS[Ci] + PB[Ci];
      }
    }
  C.Outputs[0] = Y.to(X.dtype());
  // running_mean / running_var: updated in training mode; in inference mode
  // (where ONNX expects no such outputs) they pass the inputs through.
  for (size_t Out = 1; Out < C.Outputs.size() && Out < 3; ++Out) {
    const Tensor &Running = Out == 1 ? Mean : Var;
    const std::vector<double> &Batch = Out == 1 ? UseMean : UseVar;
    Tensor R = Tensor::empty(Shape{Ch}, DType::F64);
    for (int64_t Ci = 0; Ci < Ch; ++Ci) {
      double Old = ptr<double>(Running)[Ci];
      mutPtr<double>(R)[Ci] =
          Training ? Old * Mom + Batch[Ci] * (1.0 - Mom) : Old;
    }
    C.Outputs[Out] = R.to(C.in(Out + 2).dtype());
  }
}

void kernelLayerNormalization(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "X");
  int64_t Rank = static_cast<int64_t>(X.rank());
  if (Rank == 0)
    C.fail("X must have rank >= 1");
  int64_t Axis = normAxis(C, C.attrInt("axis"), Rank);
  int64_t Stash = C.attrInt("stash_type");
  std::optional<DType> StashT = dtypeFromOnnx(static_cast<int>(Stash));
  if (!StashT || !isFloatingPoint(*StashT))
    C.fail("stash_type ", Stash, " is not a floating-point type");
  double Eps = C.attrFloat("epsilon");
  int64_t Outer = 1, Inner = 1;
  for (int64_t D = 0; D < Rank; ++D)
    (D < Axis ? Outer : Inner) *= X.size(D);
  // Scale and B broadcast (numpy) against X.
  auto Operand = [&](size_t I, const char *What) {
    const Tensor &T = C.in(I);
    requireFloat(C, T, What);
    Shape Norm(X.shape().begin() + Axis, X.shape().end());
    if (T.rank() > Norm.rank() || broadcastShapes(T.shape(), Norm) != Norm)
      C.fail(What, " ", T.shape().toString(),
             " must broadcast to the normalized shape ", Norm.toString());
    return toF64(T.broadcastTo(X.shape()));
  };
  Tensor Scale = Operand(1, "Scale");
  Tensor Bias = C.hasInput(2) ? Operand(2, "B") : Tensor();
  Tensor X64 = toF64(X);
  const double *PX = ptr<double>(X64), *PS = ptr<double>(Scale);
  const double *PB = Bias.defined() ? ptr<double>(Bias) : nullptr;
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  Shape StatShape(X.shape().begin(), X.shape().begin() + Axis);
  for (int64_t D = Axis; D < Rank; ++D)
    StatShape.push_back(1);
  Tensor MeanT = Tensor::empty(StatShape, DType::F64);
  Tensor InvT = Tensor::empty(StatShape, DType::F64);
  double *PY = mutPtr<double>(Y), *PMean = mutPtr<double>(MeanT);
  double *PInv = mutPtr<double>(InvT);
  parallelFor(0, Outer, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t O = Begin; O < End; ++O) {
      const double *Row = PX + O * Inner;
      double Sum = 0, Sq = 0;
      for (int64_t I = 0; I < Inner; ++I)
        Sum += Row[I];
      double M = Sum / Inner;
      for (int64_t I = 0; I < Inner; ++I)
        Sq += (Row[I] - M) * (Row[I] - M);
      double Inv = 1.0 / std::sqrt(Sq / Inner + Eps);
      PMean[O] = M;
      PInv[O] = Inv;
      for (int64_t I = 0; I < Inner; ++I) {
        int64_t At = O * Inner + I;
        PY[At] = (Row[I] - M) * Inv * PS[At] + (PB ? PB[At] : 0.0);
      }
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
  if (C.Outputs.size() > 1)
    C.Outputs[1] = MeanT.to(*StashT);
  if (C.Outputs.size() > 2)
    C.Outputs[2] = InvT.to(*StashT);
}

void kernelInstanceNormalization(KernelContext &C) {
  const Tensor &X = C.in(0);
  auto [N, Ch, Inner] = ncLayout(C, X, "input");
  Tensor Scale = channelVector(C, 1, Ch, "scale");
  Tensor Bias = channelVector(C, 2, Ch, "B");
  double Eps = C.attrFloat("epsilon");
  Tensor X64 = toF64(X);
  Tensor Y = Tensor::empty(X.shape(), DType::F64);
  const double *PX = ptr<double>(X64);
  const double *PS = ptr<double>(Scale), *PB = ptr<double>(Bias);
  double *PY = mutPtr<double>(Y);
  parallelFor(0, N * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t NC = Begin; NC < End; ++NC) {
      int64_t Ci = NC % Ch;
      const double *Row = PX + NC * Inner;
      double Sum = 0, Sq = 0;
      for (int64_t I = 0; I < Inner; ++I)
        Sum += Row[I];
      double M = Sum / Inner;
      for (int64_t I = 0; I < Inner; ++I)
        Sq += (Row[I] - M) * (Row[I] - M);
      double Inv = 1.0 / std::sqrt(Sq / Inner + Eps);
      for (int64_t I = 0; I < Inner; ++I)
        PY[NC * Inner + I] = (Row[I] - M) * Inv * PS[Ci] + PB[Ci];
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
}

} // namespace nng::backends::reference
