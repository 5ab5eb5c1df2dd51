//===- KernelsConv.cpp - Conv and ConvTranspose --------------------------===//
//
// Reference kernels of N-d convolution and transposed convolution (1-d,
// 2-d, 3-d, ...): groups, strides, dilations, explicit pads or auto_pad, and
// for ConvTranspose output_padding and output_shape, all resolved by ir's
// window geometry (WindowGeometry.h). Straight loops in double over each
// (batch, output channel) pair, in parallel.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

namespace nng::backends::reference {

namespace {

/// The checked operands of Conv / ConvTranspose.
struct ConvOperands {
  Tensor X, W, B; ///< Contiguous f64 copies (B undefined when absent).
  int64_t N, C, Group;
  std::vector<int64_t> Kernel;
};

ConvOperands convOperands(KernelContext &C) {
  const Tensor &X = C.in(0), &W = C.in(1);
  requireFloat(C, X, "X");
  requireSameDType(C, X, W, "X", "W");
  if (X.rank() < 3)
    C.fail("X must have shape (N, C, spatial...), got ", X.shape().toString());
  if (W.rank() != X.rank())
    C.fail("W ", W.shape().toString(), " must have the rank of X ",
           X.shape().toString());
  ConvOperands O;
  O.X = toF64(X);
  O.W = toF64(W);
  O.N = X.size(0);
  O.C = X.size(1);
  O.Group = C.attrInt("group");
  if (O.Group <= 0)
    C.fail("group must be positive, got ", O.Group);
  O.Kernel.assign(W.shape().begin() + 2, W.shape().end());
  std::vector<int64_t> KS = C.attrInts("kernel_shape");
  if (!KS.empty() && KS != O.Kernel)
    C.fail("kernel_shape ", intsToString(KS),
           " differs from the spatial shape of W ", W.shape().toString());
  if (C.hasInput(2)) {
    requireSameDType(C, X, C.in(2), "X", "B");
    O.B = toF64(C.in(2));
  }
  return O;
}

void checkBias(KernelContext &C, const ConvOperands &O, int64_t M) {
  if (O.B.defined() && O.B.shape() != Shape{M})
    C.fail("B ", O.B.shape().toString(), " must have shape [", M,
           "] (one value per output channel)");
}

/// Every kernel position as a multi-index, row-major.
std::vector<std::vector<int64_t>>
kernelPositions(const std::vector<int64_t> &K) {
  int64_t N = 1;
  for (int64_t E : K)
    N *= E;
  std::vector<std::vector<int64_t>> P(N, std::vector<int64_t>(K.size()));
  for (int64_t I = 0; I < N; ++I)
    unflatten(I, K, P[I].data());
  return P;
}

} // namespace

void kernelConv(KernelContext &C) {
  ConvOperands O = convOperands(C);
  int64_t M = O.W.size(0), CPerG = O.W.size(1);
  if (O.C != CPerG * O.Group || M % O.Group != 0)
    C.fail("X has ", O.C, " channels and W ", O.W.shape().toString(),
           " with group ", O.Group,
           ": need C == W[1] * group and W[0] % group == 0");
  checkBias(C, O, M);
  Window Win = forwardWindow(C, O.X.shape(), O.Kernel);
  size_t R = Win.rank();
  Shape OutShape{O.N, M};
  for (int64_t E : Win.Out)
    OutShape.push_back(E);
  Tensor Y = Tensor::empty(OutShape, DType::F64);
  auto KPos = kernelPositions(Win.Kernel);
  int64_t OutSp = Win.outNumel(), InSp = 1, KN = Win.kernelNumel();
  for (int64_t E : Win.In)
    InSp *= E;
  const double *PX = ptr<double>(O.X), *PW = ptr<double>(O.W);
  const double *PB = O.B.defined() ? ptr<double>(O.B) : nullptr;
  double *PY = mutPtr<double>(Y);
  int64_t MPerG = M / O.Group;
  parallelFor(0, O.N * M, 1, [&](int64_t Begin, int64_t End) {
    std::vector<int64_t> OIdx(R), InIdx(R);
    for (int64_t NM = Begin; NM < End; ++NM) {
      int64_t Nb = NM / M, Mc = NM % M, G = Mc / MPerG;
      for (int64_t Op = 0; Op < OutSp; ++Op) {
        unflatten(Op, Win.Out, OIdx.data());
        double Acc = PB ? PB[Mc] : 0.0;
        for (int64_t K = 0; K < KN; ++K) {
          int64_t InFlat = 0;
          bool Inside = true;
          for (size_t D = 0; D < R && Inside; ++D) {
            int64_t P = OIdx[D] * Win.Strides[D] - Win.PadBegin[D] +
                        KPos[K][D] * Win.Dilations[D];
            Inside = P >= 0 && P < Win.In[D];
            InFlat = InFlat * Win.In[D] + P;
          }
          if (!Inside)
            continue;
          for (int64_t Ci = 0; Ci < CPerG; ++Ci) {
            int64_t XC = G * CPerG + Ci;
            Acc += PX[(Nb * O.C + XC) * InSp + InFlat] *
                   PW[(Mc * CPerG + Ci) * KN + K];
          }
        }
        PY[NM * OutSp + Op] = Acc;
      }
    }
  });
  C.Outputs[0] = Y.to(C.in(0).dtype());
}

void kernelConvTranspose(KernelContext &C) {
  ConvOperands O = convOperands(C);
  int64_t MPerG = O.W.size(1), M = MPerG * O.Group;
  if (O.W.size(0) != O.C || O.C % O.Group != 0)
    C.fail("X has ", O.C, " channels and W ", O.W.shape().toString(),
           " with group ", O.Group, ": need W[0] == C and C % group == 0");
  checkBias(C, O, M);
  Window Win = transposedWindow(C, O.X.shape(), O.Kernel);
  size_t R = Win.rank();
  const std::vector<int64_t> &In = Win.In, &Out = Win.Out;
  Shape OutShape{O.N, M};
  for (int64_t E : Out)
    OutShape.push_back(E);
  Tensor Y = Tensor::empty(OutShape, DType::F64);
  auto KPos = kernelPositions(O.Kernel);
  int64_t KN = static_cast<int64_t>(KPos.size()), InSp = 1, OutSp = 1;
  for (size_t D = 0; D < R; ++D) {
    InSp *= In[D];
    OutSp *= Out[D];
  }
  int64_t CPerG = O.C / O.Group;
  const double *PX = ptr<double>(O.X), *PW = ptr<double>(O.W);
  const double *PB = O.B.defined() ? ptr<double>(O.B) : nullptr;
  double *PY = mutPtr<double>(Y);
  parallelFor(0, O.N * M, 1, [&](int64_t Begin, int64_t End) {
    std::vector<int64_t> IIdx(R);
    for (int64_t NM = Begin; NM < End; ++NM) {
      int64_t Nb = NM / M, Mc = NM % M, G = Mc / MPerG, Mg = Mc % MPerG;
      double *YC = PY + NM * OutSp;
      for (int64_t Op = 0; Op < OutSp; ++Op)
        YC[Op] = PB ? PB[Mc] : 0.0;
      // Scatter: input position i with kernel tap k lands on i*s + k*d - pad.
      for (int64_t Ci = 0; Ci < CPerG; ++Ci) {
        int64_t XC = G * CPerG + Ci;
        const double *XPlane = PX + (Nb * O.C + XC) * InSp;
        const double *WTaps = PW + (XC * MPerG + Mg) * KN;
        for (int64_t Ip = 0; Ip < InSp; ++Ip) {
          unflatten(Ip, In, IIdx.data());
          for (int64_t K = 0; K < KN; ++K) {
            int64_t OFlat = 0;
            bool Inside = true;
            for (size_t D = 0; D < R && Inside; ++D) {
              int64_t P = IIdx[D] * Win.Strides[D] +
                          KPos[K][D] * Win.Dilations[D] - Win.PadBegin[D];
              Inside = P >= 0 && P < Out[D];
              OFlat = OFlat * Out[D] + P;
            }
            if (Inside)
              YC[OFlat] += XPlane[Ip] * WTaps[K];
          }
        }
      }
    }
  });
  C.Outputs[0] = Y.to(C.in(0).dtype());
}

} // namespace nng::backends::reference
