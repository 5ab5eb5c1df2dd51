//===- TrainingKernelsTest.cpp - The fused training ops ------------------===//
//
// nng.BatchNormTraining, nng.BatchNormTrainingGrad and nng.ReluGrad: the
// reference kernels on hand-computed values, the gradient kernel against
// central differences of the forward kernel (f64), the errors, and the cpu
// backend's f32 loops against the reference on the Fashion-MNIST training
// shapes, odd shapes, absent scale and bias, a large mean and NaN; other
// dtypes fall back to the reference kernel. Also the cpu backend's other
// training-step paths: 2x2 max pooling over odd extents and the direct
// weight gradient of a single-input-channel convolution.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <cmath>

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

namespace {

using ir::OpKind;

TEST(RefTraining, BatchNormTrainingStatistics) {
  // Channel 0 holds 1, 3, 5, 7 (mean 4, biased var 5); channel 1 holds
  // 2, 2, 0, 4 (mean 2, var 2).
  Tensor X = f64({1, 3, 2, 2, 5, 7, 0, 4}, {2, 2, 2});
  std::vector<Tensor> R = OpTest(OpKind::BatchNormTraining)
                              .in(X)
                              .in(f64({2, 1}))
                              .in(f64({0.5, -1}))
                              .attr("epsilon", 0.0f)
                              .run();
  ASSERT_EQ(R.size(), 3u);
  EXPECT_TENSOR(R[1], f64({4, 2}));
  EXPECT_TENSOR(R[2], f64({5, 2}));
  double S5 = std::sqrt(5.0), S2 = std::sqrt(2.0);
  EXPECT_TENSOR(R[0], f64({2 * -3 / S5 + 0.5, 2 * -1 / S5 + 0.5, 0 / S2 - 1,
                           0 / S2 - 1, 2 * 1 / S5 + 0.5, 2 * 3 / S5 + 0.5,
                           -2 / S2 - 1, 2 / S2 - 1},
                          {2, 2, 2}));
  // Without scale and bias: plain normalization; epsilon is added.
  Tensor Y = OpTest(OpKind::BatchNormTraining)
                 .in(f64({1, 3}, {2, 1}))
                 .attr("epsilon", 1.0f)
                 .run1();
  EXPECT_TENSOR(Y, f64({-1 / std::sqrt(2.0), 1 / std::sqrt(2.0)}, {2, 1}));
}

TEST(RefTraining, BatchNormTrainingGradMatchesFiniteDifferences) {
  Tensor X = rnd({3, 2, 2}, 501, -2, 2, DType::F64);
  Tensor Scale = rnd({2}, 502, 0.5, 2, DType::F64);
  Tensor Bias = rnd({2}, 503, -1, 1, DType::F64);
  Tensor DY = rnd({3, 2, 2}, 504, -1, 1, DType::F64);
  const float Eps = 1e-3f;
  // L = sum(Y * dY) as a function of X, scale and B.
  auto loss = [&](const Tensor &XV, const Tensor &SV, const Tensor &BV) {
    Tensor Y = OpTest(OpKind::BatchNormTraining)
                   .in(XV)
                   .in(SV)
                   .in(BV)
                   .attr("epsilon", Eps)
                   .run1();
    double L = 0;
    for (int64_t I = 0; I < Y.numel(); ++I)
      L += Y.getFlat(I) * DY.getFlat(I);
    return L;
  };
  std::vector<Tensor> Fwd = OpTest(OpKind::BatchNormTraining)
                                .in(X)
                                .in(Scale)
                                .in(Bias)
                                .attr("epsilon", Eps)
                                .run();
  std::vector<Tensor> G = OpTest(OpKind::BatchNormTrainingGrad)
                              .in(DY)
                              .in(X)
                              .in(Fwd[1])
                              .in(Fwd[2])
                              .in(Scale)
                              .attr("epsilon", Eps)
                              .run();
  ASSERT_EQ(G.size(), 3u);
  const double H = 1e-6;
  Tensor Operands[3] = {X, Scale, Bias};
  for (int Which = 0; Which < 3; ++Which) {
    for (int64_t I = 0; I < Operands[Which].numel(); ++I) {
      Tensor Plus[3], Minus[3];
      for (int K = 0; K < 3; ++K) {
        Plus[K] = Operands[K].clone();
        Minus[K] = Operands[K].clone();
      }
      double V = Operands[Which].getFlat(I);
      Plus[Which].setFlat(I, V + H);
      Minus[Which].setFlat(I, V - H);
      double Num = (loss(Plus[0], Plus[1], Plus[2]) -
                    loss(Minus[0], Minus[1], Minus[2])) /
                   (2 * H);
      EXPECT_NEAR(G[Which].getFlat(I), Num, 1e-6)
          << "operand " << Which << " element " << I;
    }
  }
  // Without scale: the gradient of plain normalization (scale 1).
  std::vector<Tensor> G1 = OpTest(OpKind::BatchNormTrainingGrad)
                               .in(DY)
                               .in(X)
                               .in(Fwd[1])
                               .in(Fwd[2])
                               .none()
                               .attr("epsilon", Eps)
                               .run();
  std::vector<Tensor> GOnes = OpTest(OpKind::BatchNormTrainingGrad)
                                  .in(DY)
                                  .in(X)
                                  .in(Fwd[1])
                                  .in(Fwd[2])
                                  .in(f64({1, 1}))
                                  .attr("epsilon", Eps)
                                  .run();
  for (size_t I = 0; I < 3; ++I)
    EXPECT_TENSOR(G1[I], GOnes[I]);
}

TEST(RefTraining, ReluGradPassesWherePositive) {
  Tensor Y = f32({0, 1.5f, -0.0f, 2, NAN, 3}, {2, 3});
  Tensor DY = f32({10, 20, 30, NAN, 50, -60}, {2, 3});
  EXPECT_TENSOR(OpTest(OpKind::ReluGrad).in(Y).in(DY).run1(),
                f32({0, 20, 0, NAN, 0, -60}, {2, 3}));
}

TEST(RefTraining, Errors) {
  EXPECT_FAILS(OpTest(OpKind::BatchNormTraining).in(f32({1, 2})),
               "rank >= 2");
  EXPECT_FAILS(OpTest(OpKind::BatchNormTraining)
                   .in(f32({1, 2, 3, 4}, {2, 2}))
                   .in(f32({1, 2, 3})),
               "scale");
  EXPECT_FAILS(OpTest(OpKind::BatchNormTrainingGrad)
                   .in(f32({1, 2}, {1, 2}))
                   .in(f32({1, 2, 3, 4}, {2, 2}))
                   .in(f32({0, 0}))
                   .in(f32({1, 1})),
               "dY");
  EXPECT_FAILS(OpTest(OpKind::ReluGrad).in(f32({1, 2})).in(f32({1, 2, 3})),
               "dY");
  EXPECT_FAILS(OpTest(OpKind::ReluGrad).in(f32({1, 2})).in(f64({1, 2})),
               "same dtype");
}

/// A BatchNormTraining case with its three outputs.
Case bnCase(Tensor X, Tensor Scale, Tensor Bias, float Eps = 1e-5f) {
  Case C = mk(OpKind::BatchNormTraining, {X, Scale, Bias})
               .attr("epsilon", Eps)
               .expect(Expect::Fast);
  C.NumOutputs = 3;
  return C;
}

/// A BatchNormTrainingGrad case from the reference forward's statistics.
Case bnGradCase(Tensor DY, Tensor X, Tensor Scale, float Eps = 1e-5f) {
  std::vector<Tensor> Fwd = OpTest(OpKind::BatchNormTraining)
                                .in(X)
                                .attr("epsilon", Eps)
                                .run();
  Case C = mk(OpKind::BatchNormTrainingGrad, {DY, X, Fwd[1], Fwd[2], Scale})
               .attr("epsilon", Eps)
               .expect(Expect::Fast);
  C.NumOutputs = 3;
  return C;
}

TEST(CpuTraining, BatchNormTrainingMatchesReference) {
  REQUIRE_ONEDNN();
  // The Fashion-MNIST CNN's shapes (conv1, conv2) and a BatchNorm1d shape.
  for (Shape S : {Shape{64, 32, 28, 28}, Shape{64, 64, 14, 14},
                  Shape{64, 128}, Shape{3, 5, 7}, Shape{2, 3, 1, 1}}) {
    int64_t C = S[1];
    unsigned Seed = static_cast<unsigned>(S.numel());
    Tensor X = rnd(S, Seed, -2, 3);
    Tensor Scale = rnd({C}, Seed + 1, 0.5, 2);
    Tensor Bias = rnd({C}, Seed + 2);
    check(bnCase(X, Scale, Bias));
    check(bnCase(X, Tensor(), Tensor()));
    check(bnGradCase(rnd(S, Seed + 3), X, Scale));
    check(bnGradCase(rnd(S, Seed + 4), X, Tensor()));
  }
  // A mean far from zero does not cancel the variance away; a block tail
  // (Inner not a multiple of the lanes); a NaN poisons its channel only.
  check(bnCase(rnd({4, 3, 37}, 520, 999, 1001), Tensor(), Tensor()));
  Tensor WithNaN = rnd({4, 3, 5}, 521);
  WithNaN.setFlat(7, std::nan(""));
  check(bnCase(WithNaN, Tensor(), Tensor()));
  // Other dtypes: the reference kernel.
  check(bnCase(rnd({2, 3, 4}, 522, -1, 1, DType::F64), Tensor(), Tensor())
            .expect(Expect::Reference));
}

TEST(CpuTraining, ReluGradMatchesReference) {
  REQUIRE_ONEDNN();
  for (Shape S : {Shape{64, 32, 28, 28}, Shape{64, 128}, Shape{7}}) {
    unsigned Seed = static_cast<unsigned>(S.numel());
    Tensor Y = rnd(S, Seed);
    Y.setFlat(0, std::nan(""));
    check(mk(OpKind::ReluGrad, {Y, rnd(S, Seed + 1)}).expect(Expect::Fast));
  }
  check(mk(OpKind::ReluGrad, {rnd({5}, 530, -1, 1, DType::F64),
                              rnd({5}, 531, -1, 1, DType::F64)})
            .expect(Expect::Reference));
}

TEST(CpuTraining, MaxPoolTwoByTwoOddExtents) {
  REQUIRE_ONEDNN();
  // 2x2 windows with stride 2 over odd extents: the last row and column
  // belong to no window and get a zero gradient.
  Tensor X = ties({2, 3, 7, 9}, 540);
  check(mk(OpKind::MaxPool, {X})
            .attr("kernel_shape", Ints{2, 2})
            .attr("strides", Ints{2, 2})
            .expect(Expect::Fast));
  check(mk(OpKind::MaxPoolGrad, {X, rnd({2, 3, 3, 4}, 541)})
            .attr("kernel_shape", Ints{2, 2})
            .attr("strides", Ints{2, 2})
            .expect(Expect::Fast));
}

TEST(CpuTraining, ConvGradWeightSingleInputChannel) {
  REQUIRE_ONEDNN();
  // The Fashion-MNIST first layer (its direct loops), odd extents, no
  // padding, a non-square kernel with uneven pads; strides go to oneDNN.
  auto grad = [](Shape X, Shape DY, Ints Kernel, Ints Pads, Ints Strides,
                 unsigned Seed) {
    return mk(OpKind::ConvGradWeight, {rnd(X, Seed), rnd(DY, Seed + 1)})
        .attr("kernel_shape", Kernel)
        .attr("pads", Pads)
        .attr("strides", Strides);
  };
  check(grad({64, 1, 28, 28}, {64, 32, 28, 28}, {3, 3}, {1, 1, 1, 1}, {1, 1},
             550));
  check(grad({3, 1, 9, 7}, {3, 4, 7, 5}, {3, 3}, {0, 0, 0, 0}, {1, 1}, 552));
  check(grad({2, 1, 6, 5}, {2, 3, 6, 8}, {3, 2}, {2, 1, 0, 3}, {1, 1}, 554));
  check(grad({2, 1, 9, 9}, {2, 3, 4, 4}, {3, 3}, {0, 0, 0, 0}, {2, 2}, 556));
}

} // namespace
