//===- LossKernelsTest.cpp - Reference kernels: losses, norms, Det --------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reductions,
// weights, ignore_index, N-d labels, bad labels), MeanVarianceNormalization,
// LRN and Det, on hand-checked values.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cmath>

using namespace nng;
using namespace nng::reftest;

namespace {

/// Log-probabilities [2, 3] and targets [2, 0]: picked -3 and -0.5.
Tensor logProbs() { return f32({-1, -2, -3, -0.5f, -1.5f, -2.5f}, {2, 3}); }

TEST(RefLoss, NllReductions) {
  auto Nll = [](const char *Red) {
    return OpTest(OpKind::NegativeLogLikelihoodLoss)
        .in(logProbs())
        .in(i64({2, 0}))
        .attr("reduction", Red);
  };
  EXPECT_TENSOR(Nll("none").run1(), f32({3, 0.5f}));
  EXPECT_TENSOR(Nll("sum").run1(), f32({3.5f}, {}));
  EXPECT_TENSOR(Nll("mean").run1(), f32({1.75f}, {}));
  // The default reduction is mean; i32 labels work too.
  EXPECT_TENSOR(OpTest(OpKind::NegativeLogLikelihoodLoss)
                    .in(logProbs())
                    .in(i32({2, 0}))
                    .run1(),
                f32({1.75f}, {}));
  EXPECT_FAILS(Nll("max"), "reduction");
}

TEST(RefLoss, NllWeightsAndIgnoreIndex) {
  Tensor W = f32({1, 2, 3});
  auto Nll = [&](const char *Red) {
    return OpTest(OpKind::NegativeLogLikelihoodLoss)
        .in(logProbs())
        .in(i64({2, 0}))
        .in(W)
        .attr("reduction", Red);
  };
  EXPECT_TENSOR(Nll("none").run1(), f32({9, 0.5f}));
  EXPECT_TENSOR(Nll("sum").run1(), f32({9.5f}, {}));
  // Mean divides by the weights of the counted elements: 9.5 / (3 + 1).
  EXPECT_TENSOR(Nll("mean").run1(), f32({2.375f}, {}));
  // Ignored labels count neither loss nor weight; they may be out of range.
  EXPECT_TENSOR(Nll("mean").attr("ignore_index", 2).run1(), f32({0.5f}, {}));
  EXPECT_TENSOR(OpTest(OpKind::NegativeLogLikelihoodLoss)
                    .in(logProbs())
                    .in(i64({-1, 0}))
                    .attr("ignore_index", -1)
                    .attr("reduction", "none")
                    .run1(),
                f32({0, 0.5f}));
  // Everything ignored: the mean is 0 / 0.
  Tensor Nan = OpTest(OpKind::NegativeLogLikelihoodLoss)
                   .in(logProbs())
                   .in(i64({7, 7}))
                   .attr("ignore_index", 7)
                   .run1();
  EXPECT_TRUE(std::isnan(Nan.getFlat(0)));
}

TEST(RefLoss, NllMultiDimensional) {
  // N = 1, C = 2, d1 = 2: loss[0][d] = -x[0][t[d]][d].
  Tensor X = f32({-1, -2, -3, -4}, {1, 2, 2});
  EXPECT_TENSOR(OpTest(OpKind::NegativeLogLikelihoodLoss)
                    .in(X)
                    .in(i64({1, 0}, {1, 2}))
                    .attr("reduction", "none")
                    .run1(),
                f32({3, 2}, {1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::NegativeLogLikelihoodLoss)
                    .in(f64({-1, -2, -3, -4}, {1, 2, 2}))
                    .in(i64({1, 0}, {1, 2}))
                    .run1(),
                f64({2.5}, {}));
}

TEST(RefLoss, NllErrors) {
  EXPECT_FAILS(
      OpTest(OpKind::NegativeLogLikelihoodLoss).in(logProbs()).in(i64({3, 0})),
      "label 3");
  EXPECT_FAILS(
      OpTest(OpKind::NegativeLogLikelihoodLoss).in(logProbs()).in(i64({0})),
      "labels");
  EXPECT_FAILS(OpTest(OpKind::NegativeLogLikelihoodLoss)
                   .in(logProbs())
                   .in(i64({0, 1}))
                   .in(f32({1, 2})),
               "weights");
}

TEST(RefLoss, SoftmaxCrossEntropy) {
  // Row 0: softmax [1/2, 1/2]; row 1: softmax [1/4, 3/4].
  Tensor S = f32({0, 0, 0, std::log(3.0f)}, {2, 2});
  double L2 = std::log(2.0);
  auto Sce = [&](const char *Red) {
    return OpTest(OpKind::SoftmaxCrossEntropyLoss)
        .in(S)
        .in(i64({1, 0}))
        .attr("reduction", Red);
  };
  EXPECT_TENSOR(Sce("none").run1(), f32({float(L2), float(2 * L2)}));
  EXPECT_TENSOR(Sce("sum").run1(), f32({float(3 * L2)}, {}));
  EXPECT_TENSOR(Sce("mean").run1(), f32({float(1.5 * L2)}, {}));
  std::vector<Tensor> Both = Sce("mean").outputs(2).run();
  ASSERT_EQ(Both.size(), 2u);
  EXPECT_TENSOR(Both[1], f32({float(-L2), float(-L2), float(-2 * L2),
                              float(std::log(0.75))},
                             {2, 2}));
  // Weights and ignore_index as in NegativeLogLikelihoodLoss.
  EXPECT_TENSOR(OpTest(OpKind::SoftmaxCrossEntropyLoss)
                    .in(S)
                    .in(i64({1, 0}))
                    .in(f32({3, 1}))
                    .run1(),
                f32({float((L2 * 1 + 2 * L2 * 3) / 4)}, {}));
  EXPECT_TENSOR(OpTest(OpKind::SoftmaxCrossEntropyLoss)
                    .in(S)
                    .in(i64({1, -5}))
                    .attr("ignore_index", -5)
                    .attr("reduction", "sum")
                    .run1(),
                f32({float(L2)}, {}));
  EXPECT_FAILS(OpTest(OpKind::SoftmaxCrossEntropyLoss).in(S).in(i64({2, 0})),
               "label 2");
}

TEST(RefLoss, SoftmaxCrossEntropyMultiDimensional) {
  // N = 1, C = 2, d1 = 2: position 0 has scores (0, 0), position 1 has
  // scores (0, ln 3).
  Tensor S = f32({0, 0, 0, std::log(3.0f)}, {1, 2, 2});
  EXPECT_TENSOR(OpTest(OpKind::SoftmaxCrossEntropyLoss)
                    .in(S)
                    .in(i64({0, 1}, {1, 2}))
                    .attr("reduction", "none")
                    .run1(),
                f32({float(std::log(2.0)), float(-std::log(0.75))}, {1, 2}));
}

TEST(RefNorm, MeanVarianceNormalization) {
  // Default axes [0, 2, 3]: per channel. Channel 1 is constant: 0 / 1e-9.
  EXPECT_TENSOR(OpTest(OpKind::MeanVarianceNormalization)
                    .in(f32({1, 3, 2, 2}, {1, 2, 1, 2}))
                    .run1(),
                f32({-1, 1, 0, 0}, {1, 2, 1, 2}));
  EXPECT_TENSOR(OpTest(OpKind::MeanVarianceNormalization)
                    .in(f64({1, 3, 0, 4}, {2, 2}))
                    .attr("axes", std::vector<int64_t>{-1})
                    .run1(),
                f64({-1, 1, -1, 1}, {2, 2}));
  EXPECT_FAILS(OpTest(OpKind::MeanVarianceNormalization)
                   .in(f32({1, 2}, {2}))
                   .attr("axes", std::vector<int64_t>{1}),
               "out of range");
}

TEST(RefNorm, LRN) {
  // alpha / size = 1, beta = 1, bias = 1: y = x / (1 + sum of squares of
  // the neighbouring channels).
  EXPECT_TENSOR(OpTest(OpKind::LRN)
                    .in(f32({1, 2, 3}, {1, 3, 1, 1}))
                    .attr("size", 3)
                    .attr("alpha", 3.0f)
                    .attr("beta", 1.0f)
                    .run1(),
                f32({1.0f / 6, 2.0f / 15, 3.0f / 14}, {1, 3, 1, 1}));
  // Even size: one channel before, ... floor((size-1)/2) = 0 before and
  // ceil((size-1)/2) = 1 after.
  EXPECT_TENSOR(OpTest(OpKind::LRN)
                    .in(f32({1, 2, 3}, {1, 3}))
                    .attr("size", 2)
                    .attr("alpha", 2.0f)
                    .attr("beta", 1.0f)
                    .attr("bias", 0.0f)
                    .run1(),
                f32({1.0f / 5, 2.0f / 13, 3.0f / 9}, {1, 3}));
  // Defaults alpha 1e-4, beta 0.75, bias 1.
  float Want = 2.0f / std::pow(1.0f + 1e-4f * 4.0f, 0.75f);
  EXPECT_TENSOR(
      OpTest(OpKind::LRN).in(f32({2}, {1, 1, 1})).attr("size", 1).run1(),
      f32({Want}, {1, 1, 1}));
}

TEST(RefLinalg, Det) {
  EXPECT_TENSOR(OpTest(OpKind::Det).in(f32({1, 2, 3, 4}, {2, 2})).run1(),
                f32({-2}, {}));
  EXPECT_TENSOR(
      OpTest(OpKind::Det).in(f32({1, 2, 3, 4, 2, 0, 0, 3}, {2, 2, 2})).run1(),
      f32({-2, 6}));
  // Needs a row swap (a zero first pivot).
  EXPECT_TENSOR(
      OpTest(OpKind::Det).in(f64({0, 1, 2, 1, 0, 3, 4, -3, 8}, {3, 3})).run1(),
      f64({-2}, {}));
  EXPECT_TENSOR(OpTest(OpKind::Det).in(f32({1, 2, 2, 4}, {2, 2})).run1(),
                f32({0}, {}));
  EXPECT_FAILS(OpTest(OpKind::Det).in(f32({1, 2, 3, 4, 5, 6}, {2, 3})),
               "square");
}

} // namespace
