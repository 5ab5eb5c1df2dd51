//===- DynamicQuantizeLSTMTest.cpp - Reference kernel: quantized LSTM -----===//
//
// com.microsoft.DynamicQuantizeLSTM: one step written out from ORT's
// arithmetic (X quantized to u8, i32 products, f32 rescale, gates i, o, f,
// c from the transposed weights); several steps, bidirectional with
// sequence_lens and initial states, close to LSTM run with the
// dequantized weights; per-direction and per-column scales agree when
// equal; and the errors of bad operands.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <random>

using namespace nng;
using namespace nng::reftest;

namespace {

double sigmoid(double X) { return 1 / (1 + std::exp(-X)); }

/// Random s8 values in [-127, 127].
Tensor randomI8(Shape S, uint32_t Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_int_distribution<int> U(-127, 127);
  Tensor T = Tensor::empty(S, DType::I8);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, U(Rng));
  return T;
}

Tensor randomF32(Shape S, uint32_t Seed, double Lo = -1, double Hi = 1) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<double> U(Lo, Hi);
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, U(Rng));
  return T;
}

/// ONNX's float weight [D, 4H, K] from s8 Q [D, K, 4H] and per-column
/// scales [D, 4H].
Tensor dequantized(const Tensor &Q, const Tensor &Scales) {
  int64_t D = Q.size(0), K = Q.size(1), N = Q.size(2);
  Tensor W = Tensor::empty(Shape{D, N, K}, DType::F32);
  for (int64_t Dd = 0; Dd < D; ++Dd)
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (int64_t J = 0; J < N; ++J)
        W.setFlat((Dd * N + J) * K + Kk, Q.getFlat((Dd * K + Kk) * N + J) *
                                             Scales.getFlat(Dd * N + J));
  return W;
}

} // namespace

TEST(RefDynamicQuantizeLSTM, OneStepFollowsOrtArithmetic) {
  // X = 2.55 quantizes to 255 at scale 0.01; W_q [1, 1, 4] holds the gates
  // i, o, f, c along its last axis at scale 0.01: W = 0.1, 0.2, -0.3, 0.4.
  // H starts at 0, so R does not matter at the first step.
  auto Out = OpTest(OpKind::DynamicQuantizeLSTM)
                 .in(f32({2.55f}, {1, 1, 1}))
                 .constIn(i8({10, 20, -30, 40}, {1, 1, 4}))
                 .constIn(i8({1, 2, 3, 4}, {1, 1, 4}))
                 .none()
                 .none()
                 .none()
                 .none()
                 .none()
                 .constIn(f32({0.01f}, {1}))
                 .constIn(i8({0}, {1}))
                 .constIn(f32({0.5f}, {1}))
                 .constIn(i8({0}, {1}))
                 .attr("hidden_size", ir::Attribute(int64_t(1)))
                 .outputs(3)
                 .run();
  double I = sigmoid(0.255), O = sigmoid(0.51), F = sigmoid(-0.765),
         G = std::tanh(1.02);
  double C = F * 0 + I * G, H = O * std::tanh(C);
  EXPECT_TENSOR(Out[0], f32({float(H)}, {1, 1, 1, 1}));
  EXPECT_TENSOR(Out[1], f32({float(H)}, {1, 1, 1}));
  EXPECT_TENSOR(Out[2], f32({float(C)}, {1, 1, 1}));
}

TEST(RefDynamicQuantizeLSTM, CloseToLstmWithDequantizedWeights) {
  // Bidirectional, hidden 3, input 4, seq 5, batch 2 with lengths 5 and 3,
  // biases, initial states and peepholes. Only X and H are rounded (to
  // 1/255 of their range): the outputs stay within 0.02.
  Tensor X = randomF32({5, 2, 4}, 1);
  Tensor Wq = randomI8({2, 4, 12}, 2), Rq = randomI8({2, 3, 12}, 3);
  Tensor Ws = randomF32({2, 12}, 4, 0.002, 0.006);
  Tensor Rs = randomF32({2, 12}, 5, 0.002, 0.006);
  Tensor Zeros = Tensor::empty(Shape{2, 12}, DType::I8);
  for (int64_t I = 0; I < 24; ++I)
    Zeros.setFlat(I, 0);
  Tensor B = randomF32({2, 24}, 6, -0.2, 0.2);
  Tensor Lens = i32({5, 3}, {2});
  Tensor H0 = randomF32({2, 2, 3}, 7), C0 = randomF32({2, 2, 3}, 8);
  Tensor P = randomF32({2, 9}, 9, -0.5, 0.5);
  auto Q = OpTest(OpKind::DynamicQuantizeLSTM)
               .in(X)
               .constIn(Wq)
               .constIn(Rq)
               .in(B)
               .in(Lens)
               .in(H0)
               .in(C0)
               .in(P)
               .constIn(Ws)
               .constIn(Zeros)
               .constIn(Rs)
               .constIn(Zeros)
               .attr("direction", ir::Attribute(std::string("bidirectional")))
               .attr("hidden_size", ir::Attribute(int64_t(3)))
               .outputs(3)
               .run();
  auto F = OpTest(OpKind::LSTM)
               .in(X)
               .in(dequantized(Wq, Ws))
               .in(dequantized(Rq, Rs))
               .in(B)
               .in(Lens)
               .in(H0)
               .in(C0)
               .in(P)
               .attr("direction", ir::Attribute(std::string("bidirectional")))
               .outputs(3)
               .run();
  for (size_t O = 0; O < 3; ++O)
    EXPECT_TENSOR_TOL(Q[O], F[O], 0.02) << "output " << O;
  // Steps past batch entry 1's length stay zero in Y.
  for (int64_t T = 3; T < 5; ++T)
    for (int64_t D = 0; D < 2; ++D)
      for (int64_t J = 0; J < 3; ++J)
        EXPECT_EQ(Q[0].getFlat(((T * 2 + D) * 2 + 1) * 3 + J), 0.0);
}

TEST(RefDynamicQuantizeLSTM, PerDirectionScalesEqualPerColumnScales) {
  Tensor X = randomF32({3, 2, 2}, 11);
  Tensor Wq = randomI8({1, 2, 8}, 12), Rq = randomI8({1, 2, 8}, 13);
  auto Run = [&](Tensor Ws, Tensor Wz, Tensor Rs, Tensor Rz) {
    return OpTest(OpKind::DynamicQuantizeLSTM)
        .in(X)
        .constIn(Wq)
        .constIn(Rq)
        .none()
        .none()
        .none()
        .none()
        .none()
        .constIn(Ws)
        .constIn(Wz)
        .constIn(Rs)
        .constIn(Rz)
        .outputs(1)
        .run1();
  };
  Tensor PerColumn = Run(f32(std::vector<float>(8, 0.01f), {1, 8}),
                         i8(std::vector<int8_t>(8, 0), {1, 8}),
                         f32(std::vector<float>(8, 0.02f), {1, 8}),
                         i8(std::vector<int8_t>(8, 0), {1, 8}));
  Tensor PerDirection =
      Run(f32({0.01f}, {1}), i8({0}, {1}), f32({0.02f}, {1}), i8({0}, {1}));
  EXPECT_TENSOR_TOL(PerColumn, PerDirection, 0);
  // u8 weights with a common zero point of 128 compute the same as s8.
  Tensor WqU = Tensor::empty(Wq.shape(), DType::U8),
         RqU = Tensor::empty(Rq.shape(), DType::U8);
  for (int64_t I = 0; I < 16; ++I) {
    WqU.setFlat(I, Wq.getFlat(I) + 128);
    RqU.setFlat(I, Rq.getFlat(I) + 128);
  }
  Tensor Unsigned = OpTest(OpKind::DynamicQuantizeLSTM)
                        .in(X)
                        .constIn(WqU)
                        .constIn(RqU)
                        .none()
                        .none()
                        .none()
                        .none()
                        .none()
                        .constIn(f32({0.01f}, {1}))
                        .constIn(u8({128}, {1}))
                        .constIn(f32({0.02f}, {1}))
                        .constIn(u8({128}, {1}))
                        .outputs(1)
                        .run1();
  EXPECT_TENSOR_TOL(Unsigned, PerDirection, 0);
}

TEST(RefDynamicQuantizeLSTM, BadOperands) {
  auto Base = [](Tensor Wz) {
    return OpTest(OpKind::DynamicQuantizeLSTM)
        .in(f32({1, 2}, {2, 1, 1}))
        .constIn(i8({1, 2, 3, 4}, {1, 1, 4}))
        .constIn(i8({1, 2, 3, 4}, {1, 1, 4}))
        .none()
        .none()
        .none()
        .none()
        .none()
        .constIn(f32({0.01f, 0.01f, 0.01f, 0.01f}, {1, 4}))
        .constIn(Wz)
        .constIn(f32({0.01f}, {1}))
        .constIn(i8({0}, {1}))
        .outputs(1);
  };
  // ORT's kernel takes one zero point per direction, 0 for s8 weights.
  EXPECT_FAILS(Base(i8({0, 0, 1, 0}, {1, 4})), "W_zero_point must be 0");
  // Scales and zero points of different granularity.
  EXPECT_FAILS(Base(i8({0}, {1})), "both be per direction or both per column");
  // W stored as ONNX's LSTM keeps it ([dirs, 4*hidden, input]).
  EXPECT_FAILS(OpTest(OpKind::DynamicQuantizeLSTM)
                   .in(f32({1, 2, 3, 4}, {2, 1, 2}))
                   .constIn(i8(std::vector<int8_t>(8, 1), {1, 4, 2}))
                   .constIn(i8({1, 2, 3, 4}, {1, 1, 4}))
                   .none()
                   .none()
                   .none()
                   .none()
                   .none()
                   .constIn(f32({0.01f}, {1}))
                   .constIn(i8({0}, {1}))
                   .constIn(f32({0.01f}, {1}))
                   .constIn(i8({0}, {1})),
               "input_size");
  // Float weights are not quantized weights.
  EXPECT_FAILS(OpTest(OpKind::DynamicQuantizeLSTM)
                   .in(f32({1, 2}, {2, 1, 1}))
                   .constIn(f32({1, 2, 3, 4}, {1, 1, 4}))
                   .constIn(f32({1, 2, 3, 4}, {1, 1, 4}))
                   .none()
                   .none()
                   .none()
                   .none()
                   .none()
                   .constIn(f32({0.01f}, {1}))
                   .constIn(i8({0}, {1}))
                   .constIn(f32({0.01f}, {1}))
                   .constIn(i8({0}, {1})),
               "expected i8 or u8");
}
