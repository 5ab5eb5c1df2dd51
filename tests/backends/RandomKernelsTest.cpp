//===- RandomKernelsTest.cpp - ONNX's random generators -------------------===//
//
// RandomUniform, RandomNormal, their -Like forms, Bernoulli and
// Multinomial on the reference backend: shapes and dtypes, the moments of
// many draws, the same values for the same seed and new ones without one,
// bad inputs; and the cpu backend does not fold a generator into a
// constant at compile time.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::reftest;
using ir::OpKind;
using Ints = std::vector<int64_t>;

namespace {

/// Mean and standard deviation of T's values.
std::pair<double, double> moments(const Tensor &T) {
  double M = 0, S = 0;
  int64_t N = T.numel();
  for (int64_t I = 0; I < N; ++I)
    M += T.getFlat(I);
  M /= static_cast<double>(N);
  for (int64_t I = 0; I < N; ++I)
    S += (T.getFlat(I) - M) * (T.getFlat(I) - M);
  return {M, std::sqrt(S / static_cast<double>(N))};
}

TEST(RefRandom, UniformAndNormalHaveTheirMoments) {
  Tensor U = OpTest(OpKind::RandomUniform)
                 .attr("shape", Ints{100, 100})
                 .attr("low", -2.0f)
                 .attr("high", 4.0f)
                 .attr("seed", 3.0f)
                 .run1();
  EXPECT_EQ(U.dtype(), DType::F32);
  EXPECT_EQ(U.shape(), Shape({100, 100}));
  for (int64_t I = 0; I < U.numel(); ++I)
    ASSERT_TRUE(U.getFlat(I) >= -2 && U.getFlat(I) < 4) << U.getFlat(I);
  auto [UM, US] = moments(U);
  EXPECT_NEAR(UM, 1.0, 0.06);             // Mean (a + b) / 2.
  EXPECT_NEAR(US, 6 / std::sqrt(12.0), 0.05); // (b - a) / sqrt(12).

  Tensor N = OpTest(OpKind::RandomNormal)
                 .attr("shape", Ints{20000})
                 .attr("mean", 5.0f)
                 .attr("scale", 0.5f)
                 .attr("dtype", int64_t(11))
                 .run1();
  EXPECT_EQ(N.dtype(), DType::F64);
  auto [NM, NS] = moments(N);
  EXPECT_NEAR(NM, 5.0, 0.02);
  EXPECT_NEAR(NS, 0.5, 0.02);

  // The Like forms take the input's shape and dtype.
  Tensor L = OpTest(OpKind::RandomNormalLike)
                 .in(Tensor::empty(Shape{3, 7}, DType::F64))
                 .run1();
  EXPECT_EQ(L.dtype(), DType::F64);
  EXPECT_EQ(L.shape(), Shape({3, 7}));
  Tensor UL = OpTest(OpKind::RandomUniformLike)
                  .in(Tensor::empty(Shape{4}, DType::I64))
                  .attr("dtype", int64_t(1))
                  .run1();
  EXPECT_EQ(UL.dtype(), DType::F32);
}

TEST(RefRandom, ASeedRepeatsItsValuesAndNoSeedDoesNot) {
  auto Draw = [](std::optional<float> Seed) {
    OpTest T(OpKind::RandomUniform);
    T.attr("shape", Ints{64});
    if (Seed)
      T.attr("seed", *Seed);
    return T.run1();
  };
  EXPECT_TRUE(Draw(1.5f).equals(Draw(1.5f)));
  EXPECT_FALSE(Draw(1.5f).equals(Draw(2.5f)));
  EXPECT_FALSE(Draw(std::nullopt).equals(Draw(std::nullopt)));
}

TEST(RefRandom, BernoulliDrawsWithItsProbabilities) {
  std::vector<float> P(30000);
  for (size_t I = 0; I < P.size(); ++I)
    P[I] = I < 10000 ? 0.0f : I < 20000 ? 1.0f : 0.3f;
  Tensor Y = OpTest(OpKind::Bernoulli)
                 .in(f32(P))
                 .attr("seed", 7.0f)
                 .run1();
  EXPECT_EQ(Y.dtype(), DType::F32);
  double Ones = 0;
  for (int64_t I = 0; I < 30000; ++I) {
    double V = Y.getFlat(I);
    ASSERT_TRUE(V == 0 || V == 1);
    if (I < 10000)
      ASSERT_EQ(V, 0) << I;
    else if (I < 20000)
      ASSERT_EQ(V, 1) << I;
    else
      Ones += V;
  }
  EXPECT_NEAR(Ones / 10000, 0.3, 0.02);
  // The dtype attribute: bool.
  EXPECT_EQ(OpTest(OpKind::Bernoulli)
                .in(f32({0.5f, 0.5f}))
                .attr("dtype", int64_t(9))
                .run1()
                .dtype(),
            DType::Bool);
  EXPECT_FAILS(OpTest(OpKind::Bernoulli).in(f32({0.5f, 1.5f})),
               "outside [0, 1]");
}

TEST(RefRandom, MultinomialSamplesTheSoftmax) {
  // Class 1 has three times class 0's probability; class 2 none.
  Tensor X = f32({0.0f, std::log(3.0f), -INFINITY, 0.0f, 0.0f, 0.0f}, {2, 3});
  Tensor Y = OpTest(OpKind::Multinomial)
                 .in(X)
                 .attr("sample_size", int64_t(8000))
                 .attr("dtype", int64_t(7))
                 .attr("seed", 1.0f)
                 .run1();
  EXPECT_EQ(Y.dtype(), DType::I64);
  EXPECT_EQ(Y.shape(), Shape({2, 8000}));
  double Counts[2][3] = {};
  for (int64_t B = 0; B < 2; ++B)
    for (int64_t J = 0; J < 8000; ++J)
      ++Counts[B][Y.getFlatInt(B * 8000 + J)];
  EXPECT_EQ(Counts[0][2], 0);
  EXPECT_NEAR(Counts[0][1] / 8000, 0.75, 0.02);
  for (int K = 0; K < 3; ++K)
    EXPECT_NEAR(Counts[1][K] / 8000, 1.0 / 3, 0.02);
}

TEST(RefRandom, BadAttributesSayWhat) {
  EXPECT_FAILS(
      OpTest(OpKind::RandomUniform).attr("shape", Ints{2}).attr("dtype", int64_t(7)),
      "is not a floating-point ONNX element type");
  EXPECT_FAILS(OpTest(OpKind::RandomNormal).attr("shape", Ints{2, -1}),
               "has a negative extent");
  EXPECT_FAILS(OpTest(OpKind::RandomNormalLike)
                   .in(Tensor::empty(Shape{3}, DType::I64)),
               "needs a floating-point dtype attribute");
  EXPECT_FAILS(OpTest(OpKind::RandomUniform)
                   .attr("shape", Ints{2})
                   .attr("low", 2.0f)
                   .attr("high", 1.0f),
               "must not exceed high");
  EXPECT_FAILS(OpTest(OpKind::Multinomial)
                   .in(f32({0, 0}, {1, 2}))
                   .attr("dtype", int64_t(1)),
               "must be 6 (i32) or 7 (i64)");
  EXPECT_FAILS(OpTest(OpKind::Multinomial).in(f32({0, 0})),
               "[batch, classes]");
  EXPECT_FAILS(OpTest(OpKind::Multinomial)
                   .in(f32({-INFINITY, -INFINITY}, {1, 2})),
               "no finite probabilities");
}

TEST(RefRandom, TheCpuBackendDrawsOnEveryRun) {
  // A generator has no inputs: a compile must not fold it into a constant.
  auto G = std::make_unique<ir::Graph>();
  ir::AttrMap Attrs;
  Attrs.set("shape", Ints{16});
  G->addOutput(
      G->addNode(OpKind::RandomUniform, {}, {"r"}, Attrs)->output(0));
  ir::inferTypes(*G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  Tensor A = Exe->run({}).at(0), B = Exe->run({}).at(0);
  EXPECT_FALSE(A.equals(B)) << "the same draws twice: folded at compile time";
}

} // namespace
