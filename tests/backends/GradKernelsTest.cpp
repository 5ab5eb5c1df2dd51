//===- GradKernelsTest.cpp - Reference kernels: the nng gradient ops -----===//
//
// nng.ConvGradWeight, nng.MaxPoolGrad and nng.AveragePoolGrad: small
// hand-checked cases (ties go to the first maximum, the average divisor with
// and without count_include_pad and with ceil_mode), and central finite
// differences of the forward Conv / MaxPool / AveragePool reference kernels
// in f64 over strides, pads, auto_pad, dilations, groups, ceil_mode and
// count_include_pad. The loss is sum(Y * G) for a random G, so its gradient
// is the gradient op applied to dY = G.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <algorithm>
#include <random>
#include <utility>

using namespace nng;
using namespace nng::reftest;

namespace {

using Ints = std::vector<int64_t>;
using Attrs = std::vector<std::pair<std::string, ir::Attribute>>;

OpTest withAttrs(OpTest T, const Attrs &A) {
  for (const auto &[Name, V] : A)
    T.attr(Name, V);
  return T;
}

/// Uniform [-1, 1) f64 values; Distinct spaces them apart (a shuffled
/// ramp) so that no max-pool window holds a tie within the FD step.
Tensor randomF64(Shape S, unsigned Seed, bool Distinct = false) {
  std::mt19937 Gen(Seed);
  Tensor T = Tensor::empty(S, DType::F64);
  std::uniform_real_distribution<double> U(-1, 1);
  if (!Distinct) {
    for (int64_t I = 0; I < T.numel(); ++I)
      T.setFlat(I, U(Gen));
    return T;
  }
  std::vector<int64_t> Perm(T.numel());
  for (int64_t I = 0; I < T.numel(); ++I)
    Perm[I] = I;
  std::shuffle(Perm.begin(), Perm.end(), Gen);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, -1.0 + 2.0 * static_cast<double>(Perm[I]) /
                            static_cast<double>(T.numel()));
  return T;
}

double dot(const Tensor &A, const Tensor &B) {
  double S = 0;
  for (int64_t I = 0; I < A.numel(); ++I)
    S += A.getFlat(I) * B.getFlat(I);
  return S;
}

/// Central differences of L(P) = sum(Forward(P) * G) with respect to each
/// element of P.
template <typename Fn>
Tensor finiteDiff(Tensor P, const Tensor &G, Fn &&Forward, double Eps) {
  Tensor D = Tensor::empty(P.shape(), DType::F64);
  for (int64_t I = 0; I < P.numel(); ++I) {
    double V = P.getFlat(I);
    P.setFlat(I, V + Eps);
    double Up = dot(Forward(P), G);
    P.setFlat(I, V - Eps);
    double Down = dot(Forward(P), G);
    P.setFlat(I, V);
    D.setFlat(I, (Up - Down) / (2 * Eps));
  }
  return D;
}

// --- hand-checked -----------------------------------------------------------

TEST(RefGrad, ConvGradWeightOneDim) {
  // dW[k] = sum_o dY[o] * X[o + k].
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 4});
  EXPECT_TENSOR(OpTest(OpKind::ConvGradWeight)
                    .in(X)
                    .in(f32({1, 0, 2}, {1, 1, 3}))
                    .attr("kernel_shape", Ints{2})
                    .run1(),
                f32({7, 10}, {1, 1, 2}));
  // Stride 2, pad 1 each side: outputs read X[-1..0] and X[1..2] and
  // X[3..4]; dW[0] = 1*0 + 10*2 + 100*4, dW[1] = 1*1 + 10*3 + 100*0.
  EXPECT_TENSOR(OpTest(OpKind::ConvGradWeight)
                    .in(X)
                    .in(f32({1, 10, 100}, {1, 1, 3}))
                    .attr("kernel_shape", Ints{2})
                    .attr("strides", Ints{2})
                    .attr("pads", Ints{1, 1})
                    .run1(),
                f32({420, 31}, {1, 1, 2}));
}

TEST(RefGrad, ConvGradWeightGroupsAndBatch) {
  // Two groups, one channel each, batch 2, 1x1 kernel: dW[m] = sum over n
  // and positions of dY[n, m] * X[n, m].
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor DY = f32({1, 1, 2, 2, 1, 0, 0, 1}, {2, 2, 2});
  EXPECT_TENSOR(OpTest(OpKind::ConvGradWeight)
                    .in(X)
                    .in(DY)
                    .attr("kernel_shape", Ints{1})
                    .attr("group", 2)
                    .run1(),
                f32({1 + 2 + 5, 6 + 8 + 8}, {2, 1, 1}));
}

TEST(RefGrad, ConvGradWeightErrors) {
  EXPECT_FAILS(OpTest(OpKind::ConvGradWeight)
                   .in(iota(Shape{1, 1, 4}))
                   .in(iota(Shape{1, 1, 2}))
                   .attr("kernel_shape", Ints{2}),
               "forward output shape");
  EXPECT_FAILS(OpTest(OpKind::ConvGradWeight)
                   .in(iota(Shape{1, 3, 4}))
                   .in(iota(Shape{1, 2, 3}))
                   .attr("kernel_shape", Ints{2})
                   .attr("group", 2),
               "divisible by group");
}

TEST(RefGrad, MaxPoolGradFirstMaximum) {
  // Windows [1,3] [3,2] [2,3] [3,0]: maxima at 1, 1, 3, 3.
  EXPECT_TENSOR(OpTest(OpKind::MaxPoolGrad)
                    .in(f32({1, 3, 2, 3, 0}, {1, 1, 5}))
                    .in(f32({1, 10, 100, 1000}, {1, 1, 4}))
                    .attr("kernel_shape", Ints{2})
                    .run1(),
                f32({0, 11, 0, 1100, 0}, {1, 1, 5}));
  // Ties: the first maximum in scan order takes the gradient.
  EXPECT_TENSOR(OpTest(OpKind::MaxPoolGrad)
                    .in(f32({2, 2, 1}, {1, 1, 3}))
                    .in(f32({1, 10}, {1, 1, 2}))
                    .attr("kernel_shape", Ints{2})
                    .run1(),
                f32({1, 10, 0}, {1, 1, 3}));
  EXPECT_TENSOR(OpTest(OpKind::MaxPoolGrad)
                    .in(f32({5, 5, 5, 5}, {1, 1, 2, 2}))
                    .in(f32({7}, {1, 1, 1, 1}))
                    .attr("kernel_shape", Ints{2, 2})
                    .run1(),
                f32({7, 0, 0, 0}, {1, 1, 2, 2}));
  // Padding never wins: all-negative input with pads 1.
  EXPECT_TENSOR(OpTest(OpKind::MaxPoolGrad)
                    .in(f32({-3, -1}, {1, 1, 2}))
                    .in(f32({1, 2, 4}, {1, 1, 3}))
                    .attr("kernel_shape", Ints{2})
                    .attr("pads", Ints{1, 1})
                    .run1(),
                f32({1, 6}, {1, 1, 2}));
}

TEST(RefGrad, MaxPoolGradCeilDilation) {
  // kernel 2, dilation 2, stride 2, ceil_mode on X of 6: windows {0,2},
  // {2,4}, {4,6->outside}: out 3.
  EXPECT_TENSOR(OpTest(OpKind::MaxPoolGrad)
                    .in(f32({1, 9, 5, 9, 2, 9}, {1, 1, 6}))
                    .in(f32({1, 10, 100}, {1, 1, 3}))
                    .attr("kernel_shape", Ints{2})
                    .attr("dilations", Ints{2})
                    .attr("strides", Ints{2})
                    .attr("ceil_mode", 1)
                    .run1(),
                f32({0, 0, 11, 0, 100, 0}, {1, 1, 6}));
}

TEST(RefGrad, AveragePoolGradDivisors) {
  // kernel 3, pads 1/1: windows hold 2, 3, 3, 2 inputs (3 each with pads).
  Tensor X = iota(Shape{1, 1, 4});
  Tensor DY = f32({6, 3, 3, 6}, {1, 1, 4});
  auto T = [&](int IncludePad) {
    return OpTest(OpKind::AveragePoolGrad)
        .in(X)
        .in(DY)
        .attr("kernel_shape", Ints{3})
        .attr("pads", Ints{1, 1})
        .attr("count_include_pad", IncludePad);
  };
  EXPECT_TENSOR(T(0).run1(), f32({4, 5, 5, 4}, {1, 1, 4}));
  EXPECT_TENSOR(T(1).run1(), f32({3, 4, 4, 3}, {1, 1, 4}));
}

TEST(RefGrad, AveragePoolGradCeilMode) {
  // No pads, kernel 2, stride 2, ceil_mode on X of 5: the last window holds
  // X[4] only and divides by 1 either way.
  EXPECT_TENSOR(OpTest(OpKind::AveragePoolGrad)
                    .in(iota(Shape{1, 1, 5}))
                    .in(f32({2, 4, 6}, {1, 1, 3}))
                    .attr("kernel_shape", Ints{2})
                    .attr("strides", Ints{2})
                    .attr("ceil_mode", 1)
                    .attr("count_include_pad", 1)
                    .run1(),
                f32({1, 1, 2, 2, 6}, {1, 1, 5}));
  // kernel 3, stride 2, end pad 1, ceil_mode: the last window covers X[4],
  // the pad and one position past it; with count_include_pad it divides by
  // 2 (input + pad, not the overhang), else by 1.
  auto T = [](int IncludePad) {
    return OpTest(OpKind::AveragePoolGrad)
        .in(iota(Shape{1, 1, 5}))
        .in(f32({3, 3, 4}, {1, 1, 3}))
        .attr("kernel_shape", Ints{3})
        .attr("strides", Ints{2})
        .attr("pads", Ints{0, 1})
        .attr("ceil_mode", 1)
        .attr("count_include_pad", IncludePad);
  };
  EXPECT_TENSOR(T(1).run1(), f32({1, 1, 2, 1, 3}, {1, 1, 5}));
  EXPECT_TENSOR(T(0).run1(), f32({1, 1, 2, 1, 5}, {1, 1, 5}));
}

TEST(RefGrad, PoolGradErrors) {
  EXPECT_FAILS(OpTest(OpKind::AveragePoolGrad)
                   .in(iota(Shape{1, 1, 4}))
                   .in(iota(Shape{1, 1, 2}))
                   .attr("kernel_shape", Ints{2}),
               "pooled shape");
  EXPECT_FAILS(OpTest(OpKind::MaxPoolGrad)
                   .in(i64({1, 2, 3, 4}, {1, 1, 4}))
                   .in(i64({1, 2, 3}, {1, 1, 3}))
                   .attr("kernel_shape", Ints{2}),
               "MaxPoolGrad");
}

// --- finite differences of the forward kernels ------------------------------

struct ConvCase {
  Shape X, W;
  Attrs A;
};

TEST(RefGrad, ConvGradWeightMatchesFiniteDifferences) {
  std::vector<ConvCase> Cases = {
      {{2, 4, 7, 6},
       {6, 2, 3, 2},
       {{"group", 2},
        {"strides", Ints{2, 1}},
        {"pads", Ints{1, 0, 0, 1}},
        {"dilations", Ints{1, 2}}}},
      {{1, 2, 9},
       {3, 2, 3},
       {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2}}}},
      {{1, 3, 6}, {3, 1, 2}, {{"auto_pad", "SAME_LOWER"}, {"group", 3}}},
      {{2, 2, 4, 3, 3},
       {2, 1, 2, 2, 1},
       {{"group", 2},
        {"strides", Ints{1, 2, 1}},
        {"pads", Ints{0, 1, 1, 1, 0, 0}}}},
  };
  unsigned Seed = 1;
  for (const ConvCase &Cs : Cases) {
    Tensor X = randomF64(Cs.X, Seed++), W = randomF64(Cs.W, Seed++);
    Ints K(Cs.W.begin() + 2, Cs.W.end());
    auto Forward = [&](const Tensor &Wt) {
      return withAttrs(OpTest(OpKind::Conv).in(X).in(Wt), Cs.A).run1();
    };
    Tensor G = randomF64(Forward(W).shape(), Seed++);
    Tensor DW = withAttrs(OpTest(OpKind::ConvGradWeight).in(X).in(G), Cs.A)
                    .attr("kernel_shape", K)
                    .run1();
    EXPECT_TENSOR_TOL(DW, finiteDiff(W, G, Forward, 1e-3), 1e-8)
        << "X " << Cs.X.toString() << " W " << Cs.W.toString();
  }
}

struct PoolCase {
  Shape X;
  Attrs A;
};

TEST(RefGrad, MaxPoolGradMatchesFiniteDifferences) {
  std::vector<PoolCase> Cases = {
      {{1, 2, 7, 6},
       {{"kernel_shape", Ints{3, 2}},
        {"strides", Ints{2, 1}},
        {"pads", Ints{1, 0, 1, 1}},
        {"ceil_mode", 1}}},
      {{1, 2, 9}, {{"kernel_shape", Ints{2}}, {"dilations", Ints{3}}}},
      {{1, 1, 7, 6},
       {{"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}},
        {"dilations", Ints{2, 1}},
        {"pads", Ints{2, 1, 1, 1}},
        {"ceil_mode", 1}}},
      {{1, 2, 5, 4},
       {{"kernel_shape", Ints{2, 3}}, {"auto_pad", "SAME_LOWER"}}},
      {{1, 1, 3, 4, 3},
       {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{1, 2, 2}}}},
  };
  unsigned Seed = 100;
  for (const PoolCase &Cs : Cases) {
    Tensor X = randomF64(Cs.X, Seed++, /*Distinct=*/true);
    auto Forward = [&](const Tensor &Xt) {
      return withAttrs(OpTest(OpKind::MaxPool).in(Xt), Cs.A).run1();
    };
    Tensor G = randomF64(Forward(X).shape(), Seed++);
    Tensor DX = withAttrs(OpTest(OpKind::MaxPoolGrad).in(X).in(G), Cs.A).run1();
    // Values are at least 2/numel apart: a step far below that keeps every
    // window's argmax.
    EXPECT_TENSOR_TOL(DX, finiteDiff(X, G, Forward, 1e-6), 1e-6)
        << "X " << Cs.X.toString();
  }
}

TEST(RefGrad, AveragePoolGradMatchesFiniteDifferences) {
  std::vector<PoolCase> Cases;
  for (int IncludePad : {0, 1}) {
    Cases.push_back({{1, 2, 7, 6},
                     {{"kernel_shape", Ints{3, 2}},
                      {"strides", Ints{2, 2}},
                      {"pads", Ints{1, 0, 1, 1}},
                      {"ceil_mode", 1},
                      {"count_include_pad", IncludePad}}});
    Cases.push_back({{1, 3, 9},
                     {{"kernel_shape", Ints{4}},
                      {"strides", Ints{3}},
                      {"pads", Ints{2, 2}},
                      {"count_include_pad", IncludePad}}});
    Cases.push_back({{1, 1, 5, 6},
                     {{"kernel_shape", Ints{3, 3}},
                      {"strides", Ints{2, 2}},
                      {"auto_pad", "SAME_UPPER"},
                      {"count_include_pad", IncludePad}}});
    Cases.push_back({{1, 1, 3, 5, 4},
                     {{"kernel_shape", Ints{2, 3, 2}},
                      {"pads", Ints{1, 1, 0, 0, 1, 1}},
                      {"ceil_mode", 1},
                      {"strides", Ints{2, 2, 3}},
                      {"count_include_pad", IncludePad}}});
  }
  unsigned Seed = 200;
  for (const PoolCase &Cs : Cases) {
    Tensor X = randomF64(Cs.X, Seed++);
    auto Forward = [&](const Tensor &Xt) {
      return withAttrs(OpTest(OpKind::AveragePool).in(Xt), Cs.A).run1();
    };
    Tensor G = randomF64(Forward(X).shape(), Seed++);
    Tensor DX =
        withAttrs(OpTest(OpKind::AveragePoolGrad).in(X).in(G), Cs.A).run1();
    EXPECT_TENSOR_TOL(DX, finiteDiff(X, G, Forward, 1e-3), 1e-8)
        << "X " << Cs.X.toString();
  }
}

TEST(RefGrad, GradKeepsFloatDType) {
  // f32 in, f32 out (computed in double inside).
  Tensor DW = OpTest(OpKind::ConvGradWeight)
                  .in(f32({1, 2, 3}, {1, 1, 3}))
                  .in(f32({1, 1}, {1, 1, 2}))
                  .attr("kernel_shape", Ints{2})
                  .run1();
  EXPECT_TENSOR(DW, f32({3, 5}, {1, 1, 2}));
}

} // namespace
