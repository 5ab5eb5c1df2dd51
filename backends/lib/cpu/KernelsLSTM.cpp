//===- KernelsLSTM.cpp - LSTM as an own f32 loop --------------------------===//
//
// ONNX's LSTM as torch exports it (activations sigmoid, tanh, tanh; no
// clip; input_forget 0) on f32: each step's gates are dot products of the
// weights where they lie (W [4H, I] and R [4H, H] per direction, rows in
// ONNX's i, o, f, c order) with x_t and h, plus the two biases summed once;
// peepholes, initial states, sequence lengths (steps past a sequence's end
// leave zeros in Y, and Y_h / Y_c hold its last step), both layouts and all
// three directions as ONNX specifies them. The reference kernel computes
// in f64 from copies of the weights made on every call, which costs more
// than the step itself for a streaming model's one step (Silero VAD). Other
// forms (other activations, clip, input_forget, f64) go to the reference.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Lower.h"
#include "VectorMath.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace nng::backends::cpu {

using reference::KernelContext;

namespace {

/// True when the node's activations are ONNX's LSTM defaults (absent, or
/// sigmoid, tanh, tanh for each direction, any case) and nothing changes
/// the cell (clip, input_forget).
bool defaultCell(const ir::Node &N) {
  if (N.attrs().has("clip") || N.attrInt("input_forget") != 0)
    return false;
  const ir::Attribute *A = N.attrs().find("activations");
  if (!A)
    return true;
  const std::vector<std::string> &Names = A->strings();
  if (Names.empty() || Names.size() % 3 != 0)
    return false;
  static const char *Want[] = {"sigmoid", "tanh", "tanh"};
  for (size_t I = 0; I < Names.size(); ++I) {
    std::string L = Names[I];
    std::transform(L.begin(), L.end(), L.begin(),
                   [](unsigned char Ch) { return std::tolower(Ch); });
    if (L != Want[I % 3])
      return false;
  }
  return true;
}

/// Input I as a contiguous f32 tensor of shape Want (null when absent);
/// false when present with another dtype or shape.
bool operand(const KernelContext &C, size_t I, const Shape &Want, Tensor &Out) {
  if (!C.hasInput(I))
    return true;
  const Tensor &T = C.in(I);
  if (T.dtype() != DType::F32 || T.shape() != Want)
    return false;
  Out = T.isContiguous() ? T : T.contiguous();
  return true;
}

/// Gates[k] = Bias[k] + W[k] . X + R[k] . Hs for the G rows of W [G, I] and
/// R [G, H]: four rows at a time, so each multiply-add has an accumulator
/// of its own (one dot product at a time waits on its adds).
NNG_VECTOR_CLONES void gateProducts(const float *__restrict W,
                                    const float *__restrict X, int64_t I,
                                    const float *__restrict R,
                                    const float *__restrict Hs, int64_t H,
                                    const float *__restrict Bias,
                                    float *__restrict Gates, int64_t G) {
  int64_t K = 0;
  for (; K + 4 <= G; K += 4) {
    float Acc[4][16] = {};
    int64_t C = 0;
    for (; C + 16 <= I; C += 16)
      for (int Row = 0; Row < 4; ++Row)
        for (int J = 0; J < 16; ++J)
          Acc[Row][J] += W[(K + Row) * I + C + J] * X[C + J];
    for (; C < I; ++C)
      for (int Row = 0; Row < 4; ++Row)
        Acc[Row][0] += W[(K + Row) * I + C] * X[C];
    C = 0;
    for (; C + 16 <= H; C += 16)
      for (int Row = 0; Row < 4; ++Row)
        for (int J = 0; J < 16; ++J)
          Acc[Row][J] += R[(K + Row) * H + C + J] * Hs[C + J];
    for (; C < H; ++C)
      for (int Row = 0; Row < 4; ++Row)
        Acc[Row][0] += R[(K + Row) * H + C] * Hs[C];
    for (int Row = 0; Row < 4; ++Row) {
      float S = Bias[K + Row];
      for (int J = 0; J < 16; ++J)
        S += Acc[Row][J];
      Gates[K + Row] = S;
    }
  }
  for (; K < G; ++K)
    Gates[K] = Bias[K] + dot(W + K * I, X, I) + dot(R + K * H, Hs, H);
}

/// One step's cell update from the gates (i, o, f, c rows of H each) and
/// the peepholes (P: i, o, f; zeros when the node has none), in place on
/// the state Cs and Hs.
NNG_VECTOR_CLONES void cellUpdate(const float *__restrict Gates,
                                  const float *__restrict P,
                                  float *__restrict Cs, float *__restrict Hs,
                                  int64_t H) {
  for (int64_t J = 0; J < H; ++J) {
    float In = sigmoidFloat(Gates[J] + P[J] * Cs[J]);
    float Fg = sigmoidFloat(Gates[2 * H + J] + P[2 * H + J] * Cs[J]);
    float Cand = tanhFloat(Gates[3 * H + J]);
    float Cn = Fg * Cs[J] + In * Cand;
    float O = sigmoidFloat(Gates[H + J] + P[H + J] * Cn);
    Cs[J] = Cn;
    Hs[J] = O * tanhFloat(Cn);
  }
}

} // namespace

bool runLSTM(KernelContext &C) {
  const ir::Node &N = C.N;
  if (!C.hasInput(0) || !C.hasInput(1) || !C.hasInput(2) || !defaultCell(N))
    return false;
  const Tensor &X0 = C.in(0);
  if (X0.dtype() != DType::F32 || X0.rank() != 3 || C.in(2).rank() != 3)
    return false;
  const std::string &Dir = N.attrString("direction");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    return false;
  const int64_t D = Dir == "bidirectional" ? 2 : 1;
  const bool Layout = N.attrInt("layout") != 0;
  const int64_t S = X0.size(Layout ? 1 : 0), B = X0.size(Layout ? 0 : 1),
                I = X0.size(2), H = C.in(2).size(2);
  if (N.attrs().has("hidden_size") && N.attrInt("hidden_size") != H)
    return false;
  const int64_t G = 4 * H;
  const Shape StateShape = Layout ? Shape{B, D, H} : Shape{D, B, H};
  Tensor X = X0.isContiguous() ? X0 : X0.contiguous(), W, R, Bias, H0, C0, P;
  if (!operand(C, 1, Shape{D, G, I}, W) || !operand(C, 2, Shape{D, G, H}, R) ||
      !operand(C, 3, Shape{D, 2 * G}, Bias) || !operand(C, 5, StateShape, H0) ||
      !operand(C, 6, StateShape, C0) || !operand(C, 7, Shape{D, 3 * H}, P))
    return false;
  std::vector<int64_t> Lens(B, S);
  if (C.hasInput(4)) {
    const Tensor &L = C.in(4);
    if (L.rank() != 1 || L.numel() != B)
      return false;
    for (int64_t Bb = 0; Bb < B; ++Bb) {
      Lens[Bb] = static_cast<int64_t>(L.getFlat(Bb));
      if (Lens[Bb] < 0 || Lens[Bb] > S)
        return false; // The reference reports it.
    }
  }

  // Outputs: Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h and Y_c.
  Tensor *Y = nullptr, *YH = nullptr, *YC = nullptr;
  Shape YShape = Layout ? Shape{B, S, D, H} : Shape{S, D, B, H};
  Tensor **Outs[] = {&Y, &YH, &YC};
  const Shape *OutShapes[] = {&YShape, &StateShape, &StateShape};
  for (size_t O = 0; O < 3 && O < N.numOutputs(); ++O)
    if (N.output(O)) {
      *Outs[O] = &C.allocOutput(O, *OutShapes[O], DType::F32);
      std::memset((*Outs[O])->rawData(), 0, (*Outs[O])->nbytes());
    }
  auto YAt = [&](int64_t T, int64_t Dd, int64_t Bb) {
    int64_t E = Layout ? ((Bb * S + T) * D + Dd) : ((T * D + Dd) * B + Bb);
    return static_cast<float *>(Y->rawData()) + E * H;
  };
  auto StateAt = [&](int64_t Dd, int64_t Bb) {
    return (Layout ? Bb * D + Dd : Dd * B + Bb) * H;
  };
  const float *PX = static_cast<const float *>(X.rawData());
  const float *PW = static_cast<const float *>(W.rawData());
  const float *PR = static_cast<const float *>(R.rawData());
  auto F32 = [](const Tensor &T) {
    return T.defined() ? static_cast<const float *>(T.rawData()) : nullptr;
  };
  const float *PB = F32(Bias), *PH0 = F32(H0), *PC0 = F32(C0), *PP = F32(P);

  // One (direction, sequence) pair: its steps in order.
  auto Run = [&](int64_t Dd, int64_t Bb) {
    const bool Reverse = Dir == "reverse" || Dd == 1;
    const float *Wd = PW + Dd * G * I, *Rd = PR + Dd * G * H;
    std::vector<float> NoPeepholes(PP ? 0 : 3 * H, 0.0f);
    const float *Pd = PP ? PP + Dd * 3 * H : NoPeepholes.data();
    std::vector<float> Hs(H, 0.0f), Cs(H, 0.0f), Gates(G), BiasSum(G, 0.0f);
    if (PB)
      for (int64_t K = 0; K < G; ++K)
        BiasSum[K] = PB[Dd * 2 * G + K] + PB[Dd * 2 * G + G + K];
    if (PH0)
      std::copy_n(PH0 + StateAt(Dd, Bb), H, Hs.begin());
    if (PC0)
      std::copy_n(PC0 + StateAt(Dd, Bb), H, Cs.begin());
    for (int64_t Step = 0; Step < Lens[Bb]; ++Step) {
      int64_t T = Reverse ? Lens[Bb] - 1 - Step : Step;
      const float *Xt = PX + (Layout ? Bb * S + T : T * B + Bb) * I;
      gateProducts(Wd, Xt, I, Rd, Hs.data(), H, BiasSum.data(), Gates.data(),
                   G);
      cellUpdate(Gates.data(), Pd, Cs.data(), Hs.data(), H);
      if (Y)
        std::copy_n(Hs.data(), H, YAt(T, Dd, Bb));
    }
    if (YH)
      std::copy_n(Hs.data(), H,
                  static_cast<float *>(YH->rawData()) + StateAt(Dd, Bb));
    if (YC)
      std::copy_n(Cs.data(), H,
                  static_cast<float *>(YC->rawData()) + StateAt(Dd, Bb));
  };
  // The pairs are independent: in parallel when there is work enough
  // for a thread's wake-up (about 2^18 multiply-adds each).
  int64_t PerPair = S * G * (I + H);
  int64_t Grain =
      std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(PerPair, 1));
  parallelFor(0, D * B, Grain, [&](int64_t Begin, int64_t End) {
    for (int64_t K = Begin; K < End; ++K)
      Run(K / B, K % B);
  });
  return true;
}

} // namespace nng::backends::cpu
