//===- RecurrentKernelsTest.cpp - Reference kernels: RNN, GRU, LSTM -------===//
//
// The recurrent layers on tiny sizes (hidden 1 or 2, input 1 or 2) whose
// expected values are written out step by step from the ONNX equations:
// defaults, biases, initial states, reverse and bidirectional directions,
// sequence_lens, layout 1, other activations with alpha/beta, clip, GRU's
// linear_before_reset, LSTM's peepholes and input_forget, and the ONNX
// example with all-equal weights.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

double sigmoid(double X) { return 1 / (1 + std::exp(-X)); }

using Strings = std::vector<std::string>;

TEST(RefRNN, ForwardReverseBidirectional) {
  // X = [1, 2] (seq 2, batch 1, input 1), W = R = 0.5, no bias.
  Tensor X = f32({1, 2}, {2, 1, 1});
  double H1 = std::tanh(0.5), H2 = std::tanh(1.0 + 0.5 * H1);
  auto Out = OpTest(OpKind::RNN)
                 .in(X)
                 .in(f32({0.5}, {1, 1, 1}))
                 .in(f32({0.5}, {1, 1, 1}))
                 .outputs(2)
                 .run();
  EXPECT_TENSOR(Out[0], f32({float(H1), float(H2)}, {2, 1, 1, 1}));
  EXPECT_TENSOR(Out[1], f32({float(H2)}, {1, 1, 1}));
  // Reverse: step 2 first.
  double R2 = std::tanh(1.0), R1 = std::tanh(0.5 + 0.5 * R2);
  Out = OpTest(OpKind::RNN)
            .in(X)
            .in(f32({0.5}, {1, 1, 1}))
            .in(f32({0.5}, {1, 1, 1}))
            .attr("direction", "reverse")
            .outputs(2)
            .run();
  EXPECT_TENSOR(Out[0], f32({float(R1), float(R2)}, {2, 1, 1, 1}));
  EXPECT_TENSOR(Out[1], f32({float(R1)}, {1, 1, 1}));
  // Bidirectional: Y is [seq, 2, batch, hidden].
  Out = OpTest(OpKind::RNN)
            .in(X)
            .in(f32({0.5, 0.5}, {2, 1, 1}))
            .in(f32({0.5, 0.5}, {2, 1, 1}))
            .attr("direction", "bidirectional")
            .outputs(2)
            .run();
  EXPECT_TENSOR(
      Out[0], f32({float(H1), float(R1), float(H2), float(R2)}, {2, 2, 1, 1}));
  EXPECT_TENSOR(Out[1], f32({float(H2), float(R1)}, {2, 1, 1}));
}

TEST(RefRNN, BiasInitialStateSequenceLens) {
  // Batch 2 with lengths 2 and 1; B = [Wb, Rb] = [0.1, 0.2]; initial_h
  // [0.3, -0.3]; W = 1, R = 0.5.
  Tensor X = f32({1, -1, 2, -2}, {2, 2, 1});
  auto Out = OpTest(OpKind::RNN)
                 .in(X)
                 .in(f32({1}, {1, 1, 1}))
                 .in(f32({0.5}, {1, 1, 1}))
                 .in(f32({0.1f, 0.2f}, {1, 2}))
                 .in(i32({2, 1}))
                 .in(f32({0.3f, -0.3f}, {1, 2, 1}))
                 .outputs(2)
                 .run();
  double A1 = std::tanh(1 + 0.5 * 0.3 + 0.3);
  double A2 = std::tanh(2 + 0.5 * A1 + 0.3);
  double B1 = std::tanh(-1 + 0.5 * -0.3 + 0.3);
  // Steps past a sequence's end leave Y zero; Y_h is its last state.
  EXPECT_TENSOR_TOL(
      Out[0], f32({float(A1), float(B1), float(A2), 0}, {2, 1, 2, 1}), 1e-6);
  EXPECT_TENSOR_TOL(Out[1], f32({float(A2), float(B1)}, {1, 2, 1}), 1e-6);
}

TEST(RefRNN, ActivationsClipLayout) {
  Tensor X = f32({1, 2}, {2, 1, 1});
  // LeakyRelu with alpha 0.1 on W = -1: h1 = -0.1, h2 = 0.1 * (-2 - 0.1).
  auto Y = OpTest(OpKind::RNN)
               .in(X)
               .in(f32({-1}, {1, 1, 1}))
               .in(f32({1}, {1, 1, 1}))
               .attr("activations", Strings{"LeakyRelu"})
               .attr("activation_alpha", std::vector<float>{0.1f})
               .outputs(1)
               .run1();
  EXPECT_TENSOR(Y, f32({-0.1f, -0.21f}, {2, 1, 1, 1}));
  // clip bounds the pre-activation: Relu(clip(1 * x + 1 * h, 1.5)).
  Y = OpTest(OpKind::RNN)
          .in(X)
          .in(f32({1}, {1, 1, 1}))
          .in(f32({1}, {1, 1, 1}))
          .attr("activations", Strings{"Relu"})
          .attr("clip", 1.5f)
          .outputs(1)
          .run1();
  EXPECT_TENSOR(Y, f32({1, 1.5}, {2, 1, 1, 1}));
  // layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden].
  auto Out = OpTest(OpKind::RNN)
                 .in(f32({1, 2, 3, 4}, {2, 2, 1}))
                 .in(f32({1}, {1, 1, 1}))
                 .in(f32({0}, {1, 1, 1}))
                 .attr("activations", Strings{"Relu"})
                 .attr("layout", 1)
                 .outputs(2)
                 .run();
  EXPECT_TENSOR(Out[0], f32({1, 2, 3, 4}, {2, 2, 1, 1}));
  EXPECT_TENSOR(Out[1], f32({2, 4}, {2, 1, 1}));
}

TEST(RefRNN, SpecExampleEqualWeights) {
  // ONNX's test_simple_rnn_defaults: weights 0.1, hidden 4, input 2: every
  // hidden unit sees the same sum.
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {1, 3, 2});
  Tensor W = iota(Shape{1, 4, 2}, DType::F32, 0.1, 0);
  Tensor R = iota(Shape{1, 4, 4}, DType::F32, 0.1, 0);
  Tensor Yh = OpTest(OpKind::RNN).in(X).in(W).in(R).outputs(2).run().at(1);
  std::vector<float> Want;
  for (double S : {3.0, 7.0, 11.0})
    for (int I = 0; I < 4; ++I)
      Want.push_back(static_cast<float>(std::tanh(0.1 * S)));
  EXPECT_TENSOR(Yh, f32(Want, {1, 3, 4}));
}

TEST(RefRNN, Errors) {
  Tensor X = f32({1, 2}, {2, 1, 1});
  EXPECT_FAILS(OpTest(OpKind::RNN)
                   .in(X)
                   .in(f32({1}, {1, 1, 1}))
                   .in(f32({1}, {1, 1, 1}))
                   .attr("activations", Strings{"Swish"})
                   .outputs(1),
               "Swish");
  EXPECT_FAILS(OpTest(OpKind::RNN)
                   .in(X)
                   .in(f32({1, 1}, {1, 2, 1}))
                   .in(f32({1}, {1, 1, 1}))
                   .outputs(1),
               "W");
  EXPECT_FAILS(OpTest(OpKind::RNN)
                   .in(X)
                   .in(f32({1}, {1, 1, 1}))
                   .in(f32({1}, {1, 1, 1}))
                   .none()
                   .in(i32({3}))
                   .outputs(1),
               "sequence length 3");
}

/// One GRU step for hidden 1 with per-gate weights (z, r, h) and biases.
double gruStep(double X, double H, const double *W, const double *R,
               const double *WB, const double *RB, bool Lbr) {
  double Z = sigmoid(W[0] * X + R[0] * H + WB[0] + RB[0]);
  double Rg = sigmoid(W[1] * X + R[1] * H + WB[1] + RB[1]);
  double Hh = Lbr ? std::tanh(W[2] * X + Rg * (R[2] * H + RB[2]) + WB[2])
                  : std::tanh(W[2] * X + R[2] * (Rg * H) + RB[2] + WB[2]);
  return (1 - Z) * Hh + Z * H;
}

TEST(RefGRU, LinearBeforeReset) {
  const double W[3] = {0.5, -0.4, 0.3}, R[3] = {0.2, 0.7, -0.6};
  const double WB[3] = {0.1, 0.2, 0.3}, RB[3] = {-0.1, 0.4, 0.5};
  Tensor X = f32({1, 2}, {2, 1, 1});
  Tensor B = f32({0.1f, 0.2f, 0.3f, -0.1f, 0.4f, 0.5f}, {1, 6});
  for (int Lbr : {0, 1}) {
    double H1 = gruStep(1, 0.25, W, R, WB, RB, Lbr);
    double H2 = gruStep(2, H1, W, R, WB, RB, Lbr);
    auto Out = OpTest(OpKind::GRU)
                   .in(X)
                   .in(f32({0.5f, -0.4f, 0.3f}, {1, 3, 1}))
                   .in(f32({0.2f, 0.7f, -0.6f}, {1, 3, 1}))
                   .in(B)
                   .none()
                   .in(f32({0.25f}, {1, 1, 1}))
                   .attr("linear_before_reset", Lbr)
                   .outputs(2)
                   .run();
    EXPECT_TENSOR_TOL(Out[0], f32({float(H1), float(H2)}, {2, 1, 1, 1}), 1e-6);
    EXPECT_TENSOR_TOL(Out[1], f32({float(H2)}, {1, 1, 1}), 1e-6);
  }
}

TEST(RefGRU, ResetGateScalesEachHiddenUnit) {
  // Hidden 2, linear_before_reset = 0: the candidate reads (r * h) R_h^T,
  // so unit J sums R_h[J][L] * r[L] * h[L] with every unit's own reset
  // gate (a kernel that used r[J] for every L agreed only for hidden 1).
  // W: z rows 0 (z = 0.5), r rows 2 and -2, h rows 0.5; R: only R_h.
  double H0[2] = {0.5, -1}, Rh[2][2] = {{1, 2}, {3, 4}};
  double Rg[2] = {sigmoid(2), sigmoid(-2)}, Want[2];
  for (int J = 0; J < 2; ++J) {
    double Pre = 0.5;
    for (int L = 0; L < 2; ++L)
      Pre += Rh[J][L] * Rg[L] * H0[L];
    Want[J] = 0.5 * std::tanh(Pre) + 0.5 * H0[J];
  }
  auto Out = OpTest(OpKind::GRU)
                 .in(f32({1}, {1, 1, 1}))
                 .in(f32({0, 0, 2, -2, 0.5f, 0.5f}, {1, 6, 1}))
                 .in(f32({0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, {1, 6, 2}))
                 .none()
                 .none()
                 .in(f32({0.5f, -1}, {1, 1, 2}))
                 .outputs(2)
                 .run();
  EXPECT_TENSOR_TOL(Out[1], f32({float(Want[0]), float(Want[1])}, {1, 1, 2}),
                    1e-6);
}

TEST(RefGRU, BidirectionalLayoutOne) {
  // Zero weights except the candidate's input weight: z = r = 0.5 and
  // h~ = tanh(x), so h = (h~ + h) / 2. Layout 1, batch 1, seq 2.
  Tensor W = f32({0, 0, 1, 0, 0, 2}, {2, 3, 1});
  Tensor R = f32({0, 0, 0, 0, 0, 0}, {2, 3, 1});
  auto Out = OpTest(OpKind::GRU)
                 .in(f32({1, 2}, {1, 2, 1}))
                 .in(W)
                 .in(R)
                 .attr("direction", "bidirectional")
                 .attr("layout", 1)
                 .outputs(2)
                 .run();
  double F1 = std::tanh(1) / 2, F2 = (std::tanh(2) + F1) / 2;
  double B2 = std::tanh(4) / 2, B1 = (std::tanh(2) + B2) / 2;
  // Y [batch, seq, dirs, hidden]; Y_h [batch, dirs, hidden].
  EXPECT_TENSOR_TOL(
      Out[0], f32({float(F1), float(B1), float(F2), float(B2)}, {1, 2, 2, 1}),
      1e-6);
  EXPECT_TENSOR_TOL(Out[1], f32({float(F2), float(B1)}, {1, 2, 1}), 1e-6);
}

/// One LSTM step for hidden 1: gates (i, o, f, c), peepholes (i, o, f).
void lstmStep(double X, double &H, double &C, const double *W, const double *R,
              const double *P, bool Couple) {
  double I = sigmoid(W[0] * X + R[0] * H + P[0] * C);
  double F = Couple ? 1 - I : sigmoid(W[2] * X + R[2] * H + P[2] * C);
  double G = std::tanh(W[3] * X + R[3] * H);
  C = F * C + I * G;
  double O = sigmoid(W[1] * X + R[1] * H + P[1] * C);
  H = O * std::tanh(C);
}

TEST(RefLSTM, PeepholesInitialStatesInputForget) {
  const double W[4] = {0.5, -0.3, 0.8, 0.2}, R[4] = {0.1, 0.4, -0.2, 0.6};
  const double P[3] = {0.3, -0.5, 0.7};
  for (int Couple : {0, 1}) {
    double H = 0.1, C = -0.2;
    lstmStep(1, H, C, W, R, P, Couple);
    double H1 = H;
    lstmStep(-2, H, C, W, R, P, Couple);
    auto Out = OpTest(OpKind::LSTM)
                   .in(f32({1, -2}, {2, 1, 1}))
                   .in(f32({0.5f, -0.3f, 0.8f, 0.2f}, {1, 4, 1}))
                   .in(f32({0.1f, 0.4f, -0.2f, 0.6f}, {1, 4, 1}))
                   .none()
                   .none()
                   .in(f32({0.1f}, {1, 1, 1}))
                   .in(f32({-0.2f}, {1, 1, 1}))
                   .in(f32({0.3f, -0.5f, 0.7f}, {1, 3}))
                   .attr("input_forget", Couple)
                   .outputs(3)
                   .run();
    EXPECT_TENSOR_TOL(Out[0], f32({float(H1), float(H)}, {2, 1, 1, 1}), 1e-6);
    EXPECT_TENSOR_TOL(Out[1], f32({float(H)}, {1, 1, 1}), 1e-6);
    EXPECT_TENSOR_TOL(Out[2], f32({float(C)}, {1, 1, 1}), 1e-6);
  }
}

TEST(RefLSTM, SpecExampleDefaults) {
  // ONNX's test_lstm_defaults: weights 0.1, hidden 3, input 2, batch 3.
  // All units of a row are equal; gates i = o = f share one sum.
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {1, 3, 2});
  Tensor W = iota(Shape{1, 12, 2}, DType::F32, 0.1, 0);
  Tensor R = iota(Shape{1, 12, 3}, DType::F32, 0.1, 0);
  Tensor Yh = OpTest(OpKind::LSTM).in(X).in(W).in(R).outputs(2).run().at(1);
  std::vector<float> Want;
  for (double S : {3.0, 7.0, 11.0}) {
    double G = sigmoid(0.1 * S), Cn = G * std::tanh(0.1 * S);
    for (int I = 0; I < 3; ++I)
      Want.push_back(static_cast<float>(G * std::tanh(Cn)));
  }
  EXPECT_TENSOR_TOL(Yh, f32(Want, {1, 3, 3}), 1e-6);
}

TEST(RefLSTM, Errors) {
  EXPECT_FAILS(OpTest(OpKind::LSTM)
                   .in(f32({1, 2}, {2, 1, 1}))
                   .in(f32({1, 1, 1, 1}, {1, 4, 1}))
                   .in(f32({1, 1, 1, 1}, {1, 4, 1}))
                   .none()
                   .none()
                   .none()
                   .none()
                   .in(f32({1, 1}, {1, 2}))
                   .outputs(1),
               "P");
  EXPECT_FAILS(OpTest(OpKind::LSTM)
                   .in(f32({1, 2}, {2, 1, 1}))
                   .in(f32({1, 1, 1, 1}, {1, 4, 1}))
                   .in(f32({1, 1, 1, 1}, {1, 4, 1}))
                   .attr("direction", "sideways")
                   .outputs(1),
               "direction");
}

} // namespace
