//===- KernelsSignal.cpp - DFT, STFT, windows, mel matrix -----------------===//
//
// Reference kernels of the signal ops (opset 17): DFT (forward or inverse,
// onesided, dft_length padding or truncation, any signal axis), STFT
// (frames of frame_length every frame_step samples, times the window, then
// a DFT per frame), the Hann, Hamming and Blackman windows (periodic or
// symmetric) and MelWeightMatrix (ONNX's triangular filter bank). The
// transforms are direct O(n^2) sums in double, with each twiddle angle
// reduced modulo n so that long transforms stay accurate.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <numbers>

namespace nng::backends::reference {

namespace {

/// One output bin of a DFT of length N: sum_j x_j e^{Sign 2 pi i j k / N}
/// over the (Re, Im) samples of length Len (zero past Len).
void dftBin(const double *Re, const double *Im, int64_t Len, int64_t N,
            int64_t K, double Sign, double &OutRe, double &OutIm) {
  double SR = 0, SI = 0;
  for (int64_t J = 0; J < std::min(Len, N); ++J) {
    double A = Sign * 2 * std::numbers::pi * static_cast<double>((J * K) % N) /
               static_cast<double>(N);
    double CR = std::cos(A), CI = std::sin(A);
    SR += Re[J] * CR - Im[J] * CI;
    SI += Re[J] * CI + Im[J] * CR;
  }
  OutRe = SR;
  OutIm = SI;
}

/// The value of an integer scalar input (rank 0 or one element).
int64_t scalarOf(KernelContext &C, size_t I, const char *What) {
  const Tensor &T = C.in(I);
  if (!isIntegral(T.dtype()) || T.numel() != 1)
    C.fail(What, " must be one integer, got ", dtypeName(T.dtype()),
           T.shape().toString());
  return T.getFlatInt(0);
}

} // namespace

void kernelDFT(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "input");
  int64_t R = static_cast<int64_t>(X.rank());
  if (R < 3 || (X.size(R - 1) != 1 && X.size(R - 1) != 2))
    C.fail("input ", X.shape().toString(),
           " must be [batch, n1, ..., 1 or 2] (rank >= 3)");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  if (Axis == R - 1)
    C.fail("axis ", C.attrInt("axis"), " is the complex axis");
  bool Inverse = C.attrInt("inverse") != 0,
       OneSided = C.attrInt("onesided") != 0;
  bool Complex = X.size(R - 1) == 2;
  if (OneSided && (Inverse || Complex))
    C.fail("onesided needs a real input and a forward transform");
  int64_t In = X.size(Axis);
  int64_t N = C.hasInput(1) ? scalarOf(C, 1, "dft_length") : In;
  if (N < 1)
    C.fail("dft_length ", N, " must be >= 1");
  int64_t OutLen = OneSided ? N / 2 + 1 : N;
  int64_t Outer = 1, Inner = 1;
  for (int64_t D = 0; D < Axis; ++D)
    Outer *= X.size(D);
  for (int64_t D = Axis + 1; D < R - 1; ++D)
    Inner *= X.size(D);
  Tensor XF = toF64(X);
  const double *PX = ptr<double>(XF);
  Shape OutShape = X.shape();
  OutShape[Axis] = OutLen;
  OutShape[R - 1] = 2;
  Tensor Y = Tensor::empty(OutShape, DType::F64);
  double *PY = mutPtr<double>(Y);
  int64_t CX = X.size(R - 1);
  double Sign = Inverse ? 1 : -1, Norm = Inverse ? 1.0 / N : 1.0;
  parallelFor(0, Outer * Inner, 1, [&](int64_t Begin, int64_t End) {
    std::vector<double> Re(In), Im(In);
    for (int64_t OI = Begin; OI < End; ++OI) {
      int64_t O = OI / Inner, II = OI % Inner;
      for (int64_t J = 0; J < In; ++J) {
        const double *P = PX + ((O * In + J) * Inner + II) * CX;
        Re[J] = P[0];
        Im[J] = Complex ? P[1] : 0.0;
      }
      for (int64_t K = 0; K < OutLen; ++K) {
        double *Q = PY + ((O * OutLen + K) * Inner + II) * 2;
        dftBin(Re.data(), Im.data(), In, N, K, Sign, Q[0], Q[1]);
        Q[0] *= Norm;
        Q[1] *= Norm;
      }
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
}

void kernelSTFT(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "signal");
  if (X.rank() != 3 || (X.size(2) != 1 && X.size(2) != 2))
    C.fail("signal ", X.shape().toString(),
           " must be [batch, signal_length, 1 or 2]");
  int64_t Step = scalarOf(C, 1, "frame_step");
  std::vector<double> Win;
  if (C.hasInput(2)) {
    requireRank(C, C.in(2), 1, "window");
    Win = C.in(2).toDoubleVector();
  }
  int64_t FL = C.hasInput(3) ? scalarOf(C, 3, "frame_length")
                             : static_cast<int64_t>(Win.size());
  if (!C.hasInput(2) && !C.hasInput(3))
    C.fail("needs a window or a frame_length");
  if (Win.empty() && FL > 0)
    Win.assign(FL, 1.0);
  if (static_cast<int64_t>(Win.size()) != FL)
    C.fail("window of length ", Win.size(), " differs from frame_length ", FL);
  bool OneSided = C.attrInt("onesided") != 0, Complex = X.size(2) == 2;
  if (OneSided && Complex)
    C.fail("onesided output needs a real signal; set onesided = 0");
  int64_t B = X.size(0), L = X.size(1);
  if (Step < 1 || FL < 1 || FL > L)
    C.fail("frame_step ", Step, " and frame_length ", FL,
           " must be >= 1, with frame_length <= signal length ", L);
  int64_t Frames = 1 + (L - FL) / Step, Bins = OneSided ? FL / 2 + 1 : FL;
  Tensor XF = toF64(X);
  const double *PX = ptr<double>(XF);
  Tensor Y = Tensor::empty(Shape{B, Frames, Bins, 2}, DType::F64);
  double *PY = mutPtr<double>(Y);
  int64_t CX = X.size(2);
  parallelFor(0, B * Frames, 1, [&](int64_t Begin, int64_t End) {
    std::vector<double> Re(FL), Im(FL);
    for (int64_t BF = Begin; BF < End; ++BF) {
      int64_t Bb = BF / Frames, F = BF % Frames;
      for (int64_t J = 0; J < FL; ++J) {
        const double *P = PX + (Bb * L + F * Step + J) * CX;
        Re[J] = P[0] * Win[J];
        Im[J] = Complex ? P[1] * Win[J] : 0.0;
      }
      for (int64_t K = 0; K < Bins; ++K) {
        double *Q = PY + (BF * Bins + K) * 2;
        dftBin(Re.data(), Im.data(), FL, FL, K, -1, Q[0], Q[1]);
      }
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
}

namespace {

/// Fills output 0 with sum_m A[m] cos(2 pi m n / N') for n in [0, size),
/// N' = size when periodic, size - 1 otherwise (a one-point window is the
/// value at n = 0).
void cosineWindow(KernelContext &C, std::initializer_list<double> A) {
  int64_t Size = scalarOf(C, 0, "size");
  if (Size < 0)
    C.fail("size ", Size, " must be >= 0");
  double Den = static_cast<double>(C.attrInt("periodic") ? Size : Size - 1);
  Tensor Y = Tensor::empty(Shape{Size}, DType::F64);
  for (int64_t I = 0; I < Size; ++I) {
    double Ang = Den > 0 ? 2 * std::numbers::pi * I / Den : 0.0, V = 0;
    int M = 0;
    for (double Coef : A)
      V += Coef * std::cos(M++ * Ang);
    mutPtr<double>(Y)[I] = V;
  }
  C.allocOutput(0).copyFrom(Y);
}

} // namespace

void kernelHannWindow(KernelContext &C) { cosineWindow(C, {0.5, -0.5}); }

void kernelHammingWindow(KernelContext &C) {
  cosineWindow(C, {25.0 / 46.0, -21.0 / 46.0});
}

void kernelBlackmanWindow(KernelContext &C) {
  cosineWindow(C, {0.42, -0.5, 0.08});
}

void kernelMelWeightMatrix(KernelContext &C) {
  int64_t Mels = scalarOf(C, 0, "num_mel_bins");
  int64_t Len = scalarOf(C, 1, "dft_length");
  int64_t Rate = scalarOf(C, 2, "sample_rate");
  double Lo = C.in(3).getFlat(0), Hi = C.in(4).getFlat(0);
  if (Mels < 1 || Len < 1 || Rate < 1)
    C.fail("num_mel_bins ", Mels, ", dft_length ", Len, " and sample_rate ",
           Rate, " must be >= 1");
  if (!(Lo >= 0 && Lo <= Hi && Hi <= 1e12))
    C.fail("lower_edge_hertz ", Lo, " and upper_edge_hertz ", Hi,
           " must satisfy 0 <= lower <= upper (finite)");
  int64_t Rows = Len / 2 + 1;
  auto HzToMel = [](double Hz) { return 2595 * std::log10(1 + Hz / 700); };
  auto MelToHz = [](double Mel) {
    return 700 * (std::pow(10.0, Mel / 2595) - 1);
  };
  // num_mel_bins + 2 points evenly spaced in mel, as FFT bin indices.
  double LoMel = HzToMel(Lo), Step = (HzToMel(Hi) - LoMel) / (Mels + 2);
  std::vector<int64_t> Bin(Mels + 2);
  for (int64_t I = 0; I < Mels + 2; ++I) {
    double B = std::floor((Len + 1) * MelToHz(LoMel + Step * I) /
                          static_cast<double>(Rate));
    if (!(B < 1e15))
      C.fail("upper_edge_hertz ", Hi, " lies far beyond the spectrum (",
             Rate / 2, " Hz)");
    Bin[I] = static_cast<int64_t>(B);
  }
  Tensor Y = Tensor::empty(Shape{Rows, Mels}, DType::F64);
  double *PY = mutPtr<double>(Y);
  std::fill_n(PY, Y.numel(), 0.0);
  // Rows past Nyquist (an upper edge near or above it) fall off the matrix.
  auto RowsIn = [Rows](int64_t From, int64_t To) { // [From, To) within rows
    return std::pair<int64_t, int64_t>{std::max<int64_t>(From, 0),
                                       std::min<int64_t>(To, Rows)};
  };
  for (int64_t I = 0; I < Mels; ++I) {
    int64_t L = Bin[I], Ctr = Bin[I + 1], R = Bin[I + 2];
    if (Ctr == L && Ctr < Rows) {
      PY[Ctr * Mels + I] = 1.0;
    } else {
      auto [B, E] = RowsIn(L, Ctr + 1);
      for (int64_t J = B; J < E; ++J)
        PY[J * Mels + I] =
            static_cast<double>(J - L) / static_cast<double>(Ctr - L);
    }
    auto [B, E] = RowsIn(Ctr, R);
    for (int64_t J = B; J < E; ++J)
      PY[J * Mels + I] =
          static_cast<double>(R - J) / static_cast<double>(R - Ctr);
  }
  C.allocOutput(0).copyFrom(Y);
}

} // namespace nng::backends::reference
