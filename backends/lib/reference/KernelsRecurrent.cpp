//===- KernelsRecurrent.cpp - RNN, GRU and LSTM ---------------------------===//
//
// Reference kernels of the recurrent layers (opset 14): forward, reverse
// and bidirectional; the activation functions ONNX lists with their
// activation_alpha / activation_beta (consumed in order, ONNX's defaults
// otherwise); clip; sequence_lens (steps past a sequence's length leave Y
// zero and the final state is the one after its last step); initial states;
// GRU's linear_before_reset; LSTM's peepholes and input_forget; layout 0
// and 1. One loop per (direction, batch entry) over the time steps, in
// double.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "RecurrentActivations.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace nng::backends::reference {

double Activation::operator()(double X) const {
  if (Name == "sigmoid")
    return 1 / (1 + std::exp(-X));
  if (Name == "tanh")
    return std::tanh(X);
  if (Name == "relu")
    return std::max(X, 0.0);
  if (Name == "affine")
    return Alpha * X + Beta;
  if (Name == "leakyrelu")
    return X >= 0 ? X : Alpha * X;
  if (Name == "thresholdedrelu")
    return X > Alpha ? X : 0;
  if (Name == "scaledtanh")
    return Alpha * std::tanh(Beta * X);
  if (Name == "hardsigmoid")
    return std::clamp(Alpha * X + Beta, 0.0, 1.0);
  if (Name == "elu")
    return X >= 0 ? X : Alpha * (std::exp(X) - 1);
  if (Name == "softsign")
    return X / (1 + std::fabs(X));
  return std::log1p(std::exp(X)); // softplus
}

std::vector<int64_t> sequenceLengths(KernelContext &C, size_t In, int64_t B,
                                     int64_t S) {
  std::vector<int64_t> Lens(B, S);
  if (!C.hasInput(In))
    return Lens;
  Lens = intsOf(C, C.in(In), "sequence_lens");
  if (static_cast<int64_t>(Lens.size()) != B)
    C.fail("sequence_lens has ", Lens.size(), " entries for batch ", B);
  for (int64_t L : Lens)
    if (L < 0 || L > S)
      C.fail("sequence length ", L, " is outside [0, ", S, "]");
  return Lens;
}

std::vector<Activation> recurrentActivations(KernelContext &C, CellKind K,
                                             size_t NumDirs) {
  size_t PerDir = K == CellKind::RNN ? 1 : K == CellKind::GRU ? 2 : 3;
  std::vector<std::string> Names;
  if (const ir::Attribute *A = C.N.attrs().find("activations"))
    Names = A->strings();
  else if (K == CellKind::RNN)
    Names = {"Tanh"};
  else if (K == CellKind::GRU)
    Names = {"Sigmoid", "Tanh"};
  else
    Names = {"Sigmoid", "Tanh", "Tanh"};
  if (Names.size() == PerDir && NumDirs == 2) {
    std::vector<std::string> Once = Names;
    Names.insert(Names.end(), Once.begin(), Once.end());
  }
  if (Names.size() != PerDir * NumDirs)
    C.fail("activations has ", Names.size(), " entries; expected ", PerDir,
           " per direction (", PerDir * NumDirs, ")");
  std::vector<float> Alphas, Betas;
  if (const ir::Attribute *A = C.N.attrs().find("activation_alpha"))
    Alphas = A->floats();
  if (const ir::Attribute *A = C.N.attrs().find("activation_beta"))
    Betas = A->floats();
  size_t NextA = 0, NextB = 0;
  std::vector<Activation> Out;
  for (const std::string &N : Names) {
    Activation Act;
    Act.Name = N;
    std::transform(N.begin(), N.end(), Act.Name.begin(),
                   [](unsigned char Ch) { return std::tolower(Ch); });
    const std::string &L = Act.Name;
    // ONNX's defaults for the functions that take parameters.
    double DefA = L == "leakyrelu" ? 0.01 : L == "hardsigmoid" ? 0.2 : 1.0;
    double DefB = L == "hardsigmoid" ? 0.5 : L == "affine" ? 0.0 : 1.0;
    bool UsesA = L == "affine" || L == "leakyrelu" || L == "thresholdedrelu" ||
                 L == "scaledtanh" || L == "hardsigmoid" || L == "elu";
    bool UsesB = L == "affine" || L == "scaledtanh" || L == "hardsigmoid";
    if (UsesA)
      Act.Alpha = NextA < Alphas.size() ? Alphas[NextA++] : DefA;
    if (UsesB)
      Act.Beta = NextB < Betas.size() ? Betas[NextB++] : DefB;
    static const char *Known[] = {
        "sigmoid",         "tanh",       "relu",        "affine", "leakyrelu",
        "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu",    "softsign",
        "softplus"};
    if (std::find(std::begin(Known), std::end(Known), L) == std::end(Known))
      C.fail("activation '", N, "' is not supported");
    Out.push_back(Act);
  }
  return Out;
}

namespace {

/// A contiguous f64 copy of input I with the expected shape, or zeros of
/// that shape when the input is absent.
Tensor operand(KernelContext &C, size_t I, const Shape &Want,
               const char *What) {
  if (!C.hasInput(I)) {
    Tensor Z = Tensor::empty(Want, DType::F64);
    std::fill_n(mutPtr<double>(Z), Z.numel(), 0.0);
    return Z;
  }
  if (C.in(I).shape() != Want)
    C.fail(What, " has shape ", C.in(I).shape().toString(), "; expected ",
           Want.toString());
  return toF64(C.in(I));
}

void runRecurrent(KernelContext &C, CellKind K) {
  const Tensor &X0 = C.in(0);
  requireFloat(C, X0, "X");
  requireRank(C, X0, 3, "X");
  int64_t G = K == CellKind::RNN ? 1 : K == CellKind::GRU ? 3 : 4;
  const std::string &Dir = C.attrString("direction");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    C.fail("direction is '", Dir,
           "'; expected forward, reverse or bidirectional");
  int64_t D = Dir == "bidirectional" ? 2 : 1;
  bool Layout = C.attrInt("layout") != 0;
  // Work in layout 0: X [S, B, I], states [D, B, H].
  Tensor X = toF64(Layout ? X0.permute({1, 0, 2}) : X0);
  int64_t S = X.size(0), B = X.size(1), I = X.size(2);
  const Tensor &R0 = C.in(2);
  requireRank(C, R0, 3, "R");
  int64_t H = R0.size(2);
  if (C.N.attrs().has("hidden_size") && C.attrInt("hidden_size") != H)
    C.fail("hidden_size ", C.attrInt("hidden_size"), " disagrees with R ",
           R0.shape().toString());
  Tensor W = operand(C, 1, Shape{D, G * H, I}, "W");
  Tensor R = operand(C, 2, Shape{D, G * H, H}, "R");
  Tensor Bias = operand(C, 3, Shape{D, 2 * G * H}, "B");
  Shape StateShape = Layout ? Shape{B, D, H} : Shape{D, B, H};
  auto State = [&](size_t In, const char *What) {
    Tensor T = operand(C, In, StateShape, What);
    return Layout ? T.permute({1, 0, 2}).contiguous() : T;
  };
  Tensor H0 = State(5, "initial_h");
  Tensor C0 = K == CellKind::LSTM ? State(6, "initial_c") : Tensor();
  Tensor P =
      K == CellKind::LSTM ? operand(C, 7, Shape{D, 3 * H}, "P") : Tensor();
  std::vector<int64_t> Lens = sequenceLengths(C, 4, B, S);
  bool HasClip = C.N.attrs().has("clip");
  double Clip = HasClip ? C.attrFloat("clip") : 0;
  auto Clamp = [&](double V) {
    return HasClip ? std::clamp(V, -Clip, Clip) : V;
  };
  std::vector<Activation> Acts = recurrentActivations(C, K, D);
  size_t PerDir = Acts.size() / D;
  bool LinearBeforeReset =
      K == CellKind::GRU && C.attrInt("linear_before_reset") != 0;
  bool InputForget = K == CellKind::LSTM && C.attrInt("input_forget") != 0;

  Tensor Y = Tensor::empty(Shape{S, D, B, H}, DType::F64);
  std::fill_n(mutPtr<double>(Y), Y.numel(), 0.0);
  Tensor YH = Tensor::empty(Shape{D, B, H}, DType::F64);
  Tensor YC = Tensor::empty(Shape{D, B, H}, DType::F64);
  const double *PX = ptr<double>(X), *PW = ptr<double>(W), *PR = ptr<double>(R);
  const double *PB = ptr<double>(Bias);
  double *PY = mutPtr<double>(Y), *PYH = mutPtr<double>(YH),
         *PYC = mutPtr<double>(YC);
  for (int64_t Dd = 0; Dd < D; ++Dd) {
    bool Reverse = Dir == "reverse" || Dd == 1;
    const Activation *F = &Acts[Dd * PerDir];
    const double *Wd = PW + Dd * G * H * I, *Rd = PR + Dd * G * H * H;
    const double *WB = PB + Dd * 2 * G * H, *RB = WB + G * H;
    for (int64_t Bb = 0; Bb < B; ++Bb) {
      std::vector<double> Hs(ptr<double>(H0) + (Dd * B + Bb) * H,
                             ptr<double>(H0) + (Dd * B + Bb + 1) * H);
      std::vector<double> Cs(H, 0.0);
      if (K == CellKind::LSTM)
        Cs.assign(ptr<double>(C0) + (Dd * B + Bb) * H,
                  ptr<double>(C0) + (Dd * B + Bb + 1) * H);
      std::vector<double> XW(G * H), HR(G * H), Next(H), Reset(H);
      for (int64_t Step = 0; Step < Lens[Bb]; ++Step) {
        int64_t T = Reverse ? Lens[Bb] - 1 - Step : Step;
        const double *Xt = PX + (T * B + Bb) * I;
        // XW = W x + Wb, HR = R h + Rb, gate by gate.
        for (int64_t Row = 0; Row < G * H; ++Row) {
          double A = WB[Row], Bv = RB[Row];
          for (int64_t J = 0; J < I; ++J)
            A += Wd[Row * I + J] * Xt[J];
          for (int64_t J = 0; J < H; ++J)
            Bv += Rd[Row * H + J] * Hs[J];
          XW[Row] = A;
          HR[Row] = Bv;
        }
        // GRU's reset gate of every unit: (r * h) below needs all of them.
        if (K == CellKind::GRU)
          for (int64_t J = 0; J < H; ++J)
            Reset[J] = F[0](Clamp(XW[H + J] + HR[H + J]));
        for (int64_t J = 0; J < H; ++J) {
          if (K == CellKind::RNN) {
            Next[J] = F[0](Clamp(XW[J] + HR[J]));
          } else if (K == CellKind::GRU) {
            double Z = F[0](Clamp(XW[J] + HR[J]));
            double Pre;
            if (LinearBeforeReset) {
              Pre = XW[2 * H + J] + Reset[J] * HR[2 * H + J];
            } else {
              // (r * h) R_h^T + Rb_h: unit L's reset gate scales h[L].
              Pre = XW[2 * H + J] + RB[2 * H + J];
              for (int64_t L = 0; L < H; ++L)
                Pre += Rd[(2 * H + J) * H + L] * Reset[L] * Hs[L];
            }
            double Hh = F[1](Clamp(Pre));
            Next[J] = (1 - Z) * Hh + Z * Hs[J];
          } else {
            const double *Pd = ptr<double>(P) + Dd * 3 * H;
            double In = F[0](Clamp(XW[J] + HR[J] + Pd[J] * Cs[J]));
            double Fg = InputForget ? 1 - In
                                    : F[0](Clamp(XW[2 * H + J] + HR[2 * H + J] +
                                                 Pd[2 * H + J] * Cs[J]));
            double Cand = F[1](Clamp(XW[3 * H + J] + HR[3 * H + J]));
            double Cn = Fg * Cs[J] + In * Cand;
            double O = F[0](Clamp(XW[H + J] + HR[H + J] + Pd[H + J] * Cn));
            Cs[J] = Cn;
            Next[J] = O * F[2](Cn);
          }
        }
        Hs = Next;
        std::copy(Hs.begin(), Hs.end(), PY + ((T * D + Dd) * B + Bb) * H);
      }
      std::copy(Hs.begin(), Hs.end(), PYH + (Dd * B + Bb) * H);
      std::copy(Cs.begin(), Cs.end(), PYC + (Dd * B + Bb) * H);
    }
  }
  DType T = X0.dtype();
  std::vector<Tensor> Outs = {(Layout ? Y.permute({2, 0, 1, 3}) : Y).to(T),
                              (Layout ? YH.permute({1, 0, 2}) : YH).to(T),
                              (Layout ? YC.permute({1, 0, 2}) : YC).to(T)};
  for (size_t O = 0; O < C.N.numOutputs() && O < Outs.size(); ++O)
    C.Outputs[O] = Outs[O];
}

} // namespace

void kernelRNN(KernelContext &C) { runRecurrent(C, CellKind::RNN); }
void kernelGRU(KernelContext &C) { runRecurrent(C, CellKind::GRU); }
void kernelLSTM(KernelContext &C) { runRecurrent(C, CellKind::LSTM); }

} // namespace nng::backends::reference
