//===- KernelsDynamicQuantizeLSTM.cpp - com.microsoft.DynamicQuantizeLSTM -===//
//
// Reference kernel of ONNX Runtime's dynamically quantized LSTM, following
// the arithmetic of its CPU kernel (deep_cpu_lstm / uni_directional_lstm
// with 8-bit weights) so that both agree closely on the same file:
//
// - per direction, X over the steps run (the first max(sequence_lens)) is
//   quantized to u8 once: range [min(x, 0), max(x, 0)], scale = range / 255,
//   zero point round-half-even(-min / scale), all in f32 as ORT computes
//   them; X W becomes sum (x_q - x_zp) (w_q - w_zp) in i32, times the f32
//   multiplier x_scale * w_scale[column];
// - at every step, H (the whole batch, as ORT's output buffer holds it: a
//   row that ended keeps its last state for one more step, then zeros) is
//   quantized the same way and H R is added as float(i32) * h_scale *
//   r_scale[column];
// - the gates are f32: (X W + H R) + peephole * c + (Wb + Rb), clip, then
//   the activations, as in our LSTM kernel.
//
// What differs from ORT: its sigmoid and tanh are MLAS approximations
// (ours are exact, in double); when ORT splits the batch over threads it
// quantizes each share of the rows with its own H range (ours is ORT with
// one intra-op thread); and with sequence_lens but no Y output, ORT's H
// buffer is its Y_h output, where rows past their length may not be
// zeroed (not checked: our ONNX export always names Y). Measured against
// ONNX Runtime 1.30 with one thread, sequence_lens included: within 3e-7.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "RecurrentActivations.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::reference {

namespace {

/// u8 quantization of one matrix as ORT's GetQuantizationParameter and
/// MlasQuantizeLinear compute it (f32, ties to even).
struct DynamicU8 {
  float Scale = 1;
  int32_t ZeroPoint = 0;

  explicit DynamicU8(const float *X, int64_t N) {
    float Lo = 0, Hi = 0;
    for (int64_t I = 0; I < N; ++I) {
      Lo = std::min(Lo, X[I]);
      Hi = std::max(Hi, X[I]);
    }
    Scale = Hi == Lo ? 1.0f : (Hi - Lo) / 255.0f;
    float Z = std::clamp(0.0f - Lo / Scale, 0.0f, 255.0f);
    ZeroPoint = static_cast<int32_t>(std::nearbyint(Z));
  }

  int32_t operator()(float X) const {
    float Q = std::nearbyint(X / Scale) + static_cast<float>(ZeroPoint);
    return static_cast<int32_t>(std::clamp(Q, 0.0f, 255.0f));
  }
};

/// W or R of one direction: [K, N] 8-bit values with per-direction or
/// per-column scales (zero point equal across a direction, 0 when signed).
struct QuantWeights {
  std::vector<int32_t> Values; ///< [K, N], zero point subtracted.
  std::vector<float> Scales;   ///< N entries.
};

QuantWeights loadWeights(KernelContext &C, size_t In, size_t ScaleIn,
                         int64_t Dir, int64_t K, int64_t N, const char *What) {
  const Tensor &W = C.in(In);
  bool Signed = W.dtype() == DType::I8;
  if (!Signed && W.dtype() != DType::U8)
    C.fail(What, " is ", dtypeName(W.dtype()), "; expected i8 or u8");
  const Tensor Sc = C.in(ScaleIn).contiguous();
  const Tensor Zp = C.in(ScaleIn + 1).contiguous();
  if (Sc.dtype() != DType::F32)
    C.fail(What, "_scale is ", dtypeName(Sc.dtype()), "; expected f32");
  if (Zp.dtype() != W.dtype())
    C.fail(What, "_zero_point is ", dtypeName(Zp.dtype()), "; expected ",
           dtypeName(W.dtype()), " like ", What);
  bool PerColumn = Sc.rank() == 2;
  int64_t PerDir = PerColumn ? N : 1;
  if (Sc.numel() <= Dir * PerDir || Zp.numel() != Sc.numel())
    C.fail(What, "_scale ", Sc.shape().toString(), " and ", What,
           "_zero_point ", Zp.shape().toString(),
           " must both be [num_directions] or [num_directions, 4 * hidden]");
  QuantWeights Q;
  Q.Scales.resize(N);
  int64_t Zero = static_cast<int64_t>(Zp.getFlat(Dir * PerDir));
  for (int64_t J = 0; J < N; ++J) {
    Q.Scales[J] = Sc.data<float>()[Dir * PerDir + (PerColumn ? J : 0)];
    int64_t Z =
        static_cast<int64_t>(Zp.getFlat(Dir * PerDir + (PerColumn ? J : 0)));
    // ORT's kernel reads one zero point per direction: signed weights must
    // have zero points of 0, unsigned ones equal zero points.
    if (Z != Zero || (Signed && Z != 0))
      C.fail(What, "_zero_point must be ", Signed ? "0" : "the same",
             " for every column of a direction (ONNX Runtime's kernel)");
  }
  const Tensor Wc = W.contiguous();
  Q.Values.resize(static_cast<size_t>(K * N));
  for (int64_t I = 0; I < K * N; ++I)
    Q.Values[I] = static_cast<int32_t>(Wc.getFlat(Dir * K * N + I)) -
                  static_cast<int32_t>(Zero);
  return Q;
}

/// Out[m][n] (+)= float(sum_k (A_q[m][k] - zp) W[k][n]) * (a_scale *
/// w_scale[n]) for the M rows of A [M, K], quantized with P.
void quantizedGemm(const float *A, int64_t M, int64_t K, const DynamicU8 &P,
                   const QuantWeights &W, int64_t N, float *Out,
                   bool Accumulate) {
  std::vector<float> Mult(N);
  for (int64_t J = 0; J < N; ++J)
    Mult[J] = P.Scale * W.Scales[J];
  std::vector<int32_t> Aq(K);
  std::vector<int32_t> Acc(N);
  for (int64_t Row = 0; Row < M; ++Row) {
    for (int64_t Kk = 0; Kk < K; ++Kk)
      Aq[Kk] = P(A[Row * K + Kk]) - P.ZeroPoint;
    std::fill(Acc.begin(), Acc.end(), 0);
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      const int32_t *Wr = W.Values.data() + Kk * N;
      for (int64_t J = 0; J < N; ++J)
        Acc[J] += Aq[Kk] * Wr[J];
    }
    float *O = Out + Row * N;
    for (int64_t J = 0; J < N; ++J) {
      float V = static_cast<float>(Acc[J]) * Mult[J];
      O[J] = Accumulate ? O[J] + V : V;
    }
  }
}

/// An f32 input of the given shape as a contiguous copy, or zeros.
Tensor f32Operand(KernelContext &C, size_t I, const Shape &Want,
                  const char *What) {
  if (!C.hasInput(I)) {
    Tensor Z = Tensor::empty(Want, DType::F32);
    std::fill_n(mutPtr<float>(Z), Z.numel(), 0.0f);
    return Z;
  }
  if (C.in(I).dtype() != DType::F32)
    C.fail(What, " is ", dtypeName(C.in(I).dtype()), "; expected f32");
  if (C.in(I).shape() != Want)
    C.fail(What, " has shape ", C.in(I).shape().toString(), "; expected ",
           Want.toString());
  return C.in(I).contiguous();
}

} // namespace

void kernelDynamicQuantizeLSTM(KernelContext &C) {
  const Tensor X0 = C.in(0).contiguous();
  if (X0.dtype() != DType::F32)
    C.fail("X is ", dtypeName(X0.dtype()), "; expected f32");
  requireRank(C, X0, 3, "X");
  const std::string &Dir = C.attrString("direction");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    C.fail("direction is '", Dir,
           "'; expected forward, reverse or bidirectional");
  int64_t D = Dir == "bidirectional" ? 2 : 1;
  int64_t S = X0.size(0), B = X0.size(1), I = X0.size(2);
  requireRank(C, C.in(1), 3, "W");
  requireRank(C, C.in(2), 3, "R");
  int64_t H = C.in(2).size(1), G4 = 4 * H;
  if (C.in(1).shape() != Shape{D, I, G4} || C.in(2).shape() != Shape{D, H, G4})
    C.fail("W ", C.in(1).shape().toString(), " and R ",
           C.in(2).shape().toString(), " must be ", Shape{D, I, G4}.toString(),
           " and ", Shape{D, H, G4}.toString());
  if (C.N.attrs().has("hidden_size") && C.attrInt("hidden_size") != H)
    C.fail("hidden_size ", C.attrInt("hidden_size"), " disagrees with R ",
           C.in(2).shape().toString());
  Tensor Bias = f32Operand(C, 3, Shape{D, 8 * H}, "B");
  Tensor H0 = f32Operand(C, 5, Shape{D, B, H}, "initial_h");
  Tensor C0 = f32Operand(C, 6, Shape{D, B, H}, "initial_c");
  Tensor P = f32Operand(C, 7, Shape{D, 3 * H}, "P");
  std::vector<int64_t> Lens = sequenceLengths(C, 4, B, S);
  int64_t MaxLen = B ? *std::max_element(Lens.begin(), Lens.end()) : 0;
  bool HasClip = C.N.attrs().has("clip");
  float Clip = HasClip ? C.attrFloat("clip") : 0;
  auto Clamp = [&](float V) {
    return HasClip ? std::clamp(V, -Clip, Clip) : V;
  };
  std::vector<Activation> Acts = recurrentActivations(C, CellKind::LSTM, D);
  bool InputForget = C.attrInt("input_forget") != 0;
  auto Act = [](const Activation &F, float V) {
    return static_cast<float>(F(static_cast<double>(V)));
  };

  Tensor Y = Tensor::empty(Shape{S, D, B, H}, DType::F32);
  std::fill_n(mutPtr<float>(Y), Y.numel(), 0.0f);
  Tensor YH = Tensor::empty(Shape{D, B, H}, DType::F32);
  Tensor YC = Tensor::empty(Shape{D, B, H}, DType::F32);
  const float *PX = ptr<float>(X0);
  float *PY = mutPtr<float>(Y), *PYH = mutPtr<float>(YH),
        *PYC = mutPtr<float>(YC);
  for (int64_t Dd = 0; Dd < D; ++Dd) {
    bool Reverse = Dir == "reverse" || Dd == 1;
    const Activation *F = &Acts[Dd * 3];
    QuantWeights W = loadWeights(C, 1, 8, Dd, I, G4, "W");
    QuantWeights R = loadWeights(C, 2, 10, Dd, H, G4, "R");
    // X W for every step run, X quantized once over those steps.
    std::vector<float> XW(static_cast<size_t>(MaxLen * B * G4));
    DynamicU8 XParams(PX, MaxLen * B * I);
    quantizedGemm(PX, MaxLen * B, I, XParams, W, G4, XW.data(), false);
    // Wb + Rb, summed first as ORT does.
    std::vector<float> Bsum(G4);
    const float *PB = ptr<float>(Bias) + Dd * 8 * H;
    for (int64_t J = 0; J < G4; ++J)
      Bsum[J] = PB[J] + PB[G4 + J];
    const float *Pd = ptr<float>(P) + Dd * 3 * H;
    std::vector<float> Hs(ptr<float>(H0) + Dd * B * H,
                          ptr<float>(H0) + (Dd + 1) * B * H);
    std::vector<float> Cs(ptr<float>(C0) + Dd * B * H,
                          ptr<float>(C0) + (Dd + 1) * B * H);
    std::vector<float> Hq(B * H), Gates(B * G4);
    for (int64_t Step = 0; Step < MaxLen; ++Step) {
      // H of the whole batch as ORT's output buffer holds it: a row's last
      // state is still there one step after its length, zeros after that.
      for (int64_t Bb = 0; Bb < B; ++Bb)
        for (int64_t J = 0; J < H; ++J)
          Hq[Bb * H + J] =
              Step == 0 || Step <= Lens[Bb] ? Hs[Bb * H + J] : 0.0f;
      DynamicU8 HParams(Hq.data(), B * H);
      for (int64_t Bb = 0; Bb < B; ++Bb) {
        if (Step >= Lens[Bb])
          continue;
        int64_t T = Reverse ? Lens[Bb] - 1 - Step : Step;
        std::copy_n(XW.data() + (T * B + Bb) * G4, G4, Gates.data() + Bb * G4);
      }
      quantizedGemm(Hq.data(), B, H, HParams, R, G4, Gates.data(), true);
      for (int64_t Bb = 0; Bb < B; ++Bb) {
        if (Step >= Lens[Bb])
          continue;
        int64_t T = Reverse ? Lens[Bb] - 1 - Step : Step;
        const float *Gt = Gates.data() + Bb * G4;
        float *Hb = Hs.data() + Bb * H, *Cb = Cs.data() + Bb * H;
        // Gate order i, o, f, c (ONNX).
        for (int64_t J = 0; J < H; ++J) {
          float In = Act(F[0], Clamp(Gt[J] + Pd[J] * Cb[J] + Bsum[J]));
          float Fg =
              InputForget
                  ? 1.0f - In
                  : Act(F[0], Clamp(Gt[2 * H + J] + Pd[2 * H + J] * Cb[J] +
                                    Bsum[2 * H + J]));
          float Cand = Act(F[1], Clamp(Gt[3 * H + J] + Bsum[3 * H + J]));
          float Cn = Cb[J] * Fg + In * Cand;
          float O = Act(F[0], Clamp(Gt[H + J] + Pd[H + J] * Cn + Bsum[H + J]));
          Cb[J] = Cn;
          Hb[J] = O * Act(F[2], Cn);
        }
        std::copy_n(Hb, H, PY + ((T * D + Dd) * B + Bb) * H);
      }
    }
    std::copy(Hs.begin(), Hs.end(), PYH + Dd * B * H);
    std::copy(Cs.begin(), Cs.end(), PYC + Dd * B * H);
  }
  std::vector<Tensor> Outs = {Y, YH, YC};
  for (size_t O = 0; O < C.N.numOutputs() && O < Outs.size(); ++O)
    C.Outputs[O] = Outs[O];
}

} // namespace nng::backends::reference
