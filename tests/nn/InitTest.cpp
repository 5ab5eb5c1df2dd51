//===- InitTest.cpp - nn::init against PyTorch's formulas -----------------===//
//
// Checks every initializer of nn::init: gains and fans equal to the values
// PyTorch 1.13 computes (hard-coded from torch.nn.init), bounds and
// moments of the random fills on large tensors (seeded, so the checks are
// deterministic), orthogonality and PyTorch's QR sign convention for
// orthogonal_, the exact patterns of eye_/dirac_, and the errors.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

using namespace nng;
namespace init = nng::nn::init;

namespace {

struct Moments {
  double Min, Max, Mean, Std;
};

Moments moments(const Tensor &T) {
  std::vector<double> V = T.to_vector<double>();
  Moments M{INFINITY, -INFINITY, 0, 0};
  for (double X : V) {
    M.Min = std::min(M.Min, X);
    M.Max = std::max(M.Max, X);
    M.Mean += X;
  }
  M.Mean /= V.size();
  for (double X : V)
    M.Std += (X - M.Mean) * (X - M.Mean);
  M.Std = std::sqrt(M.Std / (V.size() - 1));
  return M;
}

} // namespace

TEST(InitTest, CalculateGainMatchesPyTorch) {
  // Values printed by torch.nn.init.calculate_gain (PyTorch 1.13).
  for (const char *Linear :
       {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "sigmoid"})
    EXPECT_EQ(init::calculate_gain(Linear), 1.0) << Linear;
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 1.6666666666666667);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), 1.4142135623730951);
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), 1.4141428569978354);
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.2), 1.3867504905630728);
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)),
                   0.5773502691896257);
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.0), std::sqrt(2.0));
  EXPECT_EQ(init::calculate_gain("selu"), 0.75);
}

TEST(InitTest, CalculateGainRejectsUnknownNonlinearity) {
  EXPECT_THROW(init::calculate_gain("softplus"), Error);
  EXPECT_THROW(init::calculate_gain("ReLU"), Error);
  EXPECT_THROW(init::calculate_gain("leaky_relu", NAN), Error);
}

TEST(InitTest, FansMatchPyTorch) {
  // torch.nn.init._calculate_fan_in_and_fan_out on torch.empty(shape).
  struct Case {
    std::vector<int64_t> Shape;
    int64_t FanIn, FanOut;
  } Cases[] = {{{3, 5}, 5, 3},
               {{16, 3, 3, 3}, 27, 144},
               {{8, 4, 5}, 20, 40},
               {{2, 3, 4, 5, 6}, 360, 240},
               {{7, 1}, 1, 7}};
  for (const Case &C : Cases) {
    auto [In, Out] = init::calculate_fan_in_and_fan_out(empty(C.Shape));
    EXPECT_EQ(In, C.FanIn);
    EXPECT_EQ(Out, C.FanOut);
  }
  Tensor W = empty({16, 3, 3, 3});
  EXPECT_EQ(init::calculate_correct_fan(W, "fan_in"), 27);
  EXPECT_EQ(init::calculate_correct_fan(W, "FAN_OUT"), 144);
  EXPECT_THROW(init::calculate_correct_fan(W, "fan_avg"), Error);
}

TEST(InitTest, FansRejectFewerThanTwoDimensions) {
  for (const std::vector<int64_t> &Shape :
       {std::vector<int64_t>{5}, std::vector<int64_t>{}}) {
    Tensor T = zeros(Shape);
    try {
      init::calculate_fan_in_and_fan_out(T);
      FAIL() << "expected an error";
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("fewer than 2 dimensions"),
                std::string::npos)
          << E.what();
    }
    EXPECT_THROW(init::xavier_uniform_(T), Error);
    EXPECT_THROW(init::kaiming_normal_(T), Error);
    EXPECT_THROW(init::orthogonal_(T), Error);
  }
}

TEST(InitTest, UniformBoundsAndMoments) {
  manual_seed(1);
  Tensor T = init::uniform_(empty({200, 500}), -2.0, 3.0);
  Moments M = moments(T);
  EXPECT_GE(M.Min, -2.0);
  EXPECT_LT(M.Max, 3.0);
  EXPECT_LT(M.Min, -1.99);
  EXPECT_GT(M.Max, 2.99);
  EXPECT_NEAR(M.Mean, 0.5, 0.02);
  EXPECT_NEAR(M.Std, 5.0 / std::sqrt(12.0), 0.01);
  // The default interval is [0, 1).
  Moments D = moments(init::uniform_(empty({10000})));
  EXPECT_GE(D.Min, 0.0);
  EXPECT_LT(D.Max, 1.0);
}

TEST(InitTest, NormalMoments) {
  manual_seed(2);
  Moments M = moments(init::normal_(empty({100000}), 1.5, 0.25));
  EXPECT_NEAR(M.Mean, 1.5, 0.005);
  EXPECT_NEAR(M.Std, 0.25, 0.005);
  EXPECT_THROW(init::normal_(empty({3}), 0.0, -1.0), Error);
}

TEST(InitTest, ConstantZerosOnes) {
  Tensor T = empty({2, 3});
  init::constant_(T, 0.3);
  for (double V : T.to_vector<double>())
    EXPECT_FLOAT_EQ(V, 0.3f);
  init::ones_(T);
  for (double V : T.to_vector<double>())
    EXPECT_EQ(V, 1.0);
  init::zeros_(T);
  for (double V : T.to_vector<double>())
    EXPECT_EQ(V, 0.0);
  // Integral tensors can be filled with constants.
  Tensor I = empty({4}, DType::I64);
  init::constant_(I, 7);
  EXPECT_EQ(I.to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 7, 7}));
}

TEST(InitTest, FillsParametersWithoutHistory) {
  // Parameters require grad; init works with grad mode on and leaves them
  // leaves, bumping the version counter.
  Tensor W = empty({4, 3}, TensorOptions().requires_grad());
  ASSERT_TRUE(autograd::isGradEnabled());
  uint64_t V0 = W.version();
  init::kaiming_uniform_(W, std::sqrt(5.0));
  init::zeros_(W);
  init::orthogonal_(W);
  init::trunc_normal_(W, 0, 0.02);
  EXPECT_TRUE(W.is_leaf());
  EXPECT_TRUE(W.requires_grad());
  EXPECT_GT(W.version(), V0);
  EXPECT_TRUE(autograd::isGradEnabled());
}

TEST(InitTest, ReturnsTheSameTensor) {
  Tensor W = empty({3, 4});
  Tensor R = init::xavier_normal_(W);
  EXPECT_TRUE(R.is_same(W));
}

TEST(InitTest, XavierUniformBound) {
  manual_seed(3);
  Tensor W = empty({300, 200, 2}); // fan_in 400, fan_out 600
  double Gain = init::calculate_gain("relu");
  init::xavier_uniform_(W, Gain);
  double A = Gain * std::sqrt(6.0 / 1000.0);
  Moments M = moments(W);
  EXPECT_GE(M.Min, -A);
  EXPECT_LE(M.Max, A);
  EXPECT_GT(M.Max, 0.99 * A);
  EXPECT_NEAR(M.Mean, 0.0, 0.002);
  EXPECT_NEAR(M.Std, A / std::sqrt(3.0), 0.002);
}

TEST(InitTest, XavierNormalStd) {
  manual_seed(4);
  Tensor W = empty({500, 300});
  init::xavier_normal_(W, 2.0);
  Moments M = moments(W);
  EXPECT_NEAR(M.Mean, 0.0, 0.002);
  EXPECT_NEAR(M.Std, 2.0 * std::sqrt(2.0 / 800.0), 0.001);
}

TEST(InitTest, KaimingUniformLinearDefault) {
  // What Linear.reset_parameters uses: a = sqrt(5) gives a bound of
  // exactly 1 / sqrt(fan_in).
  manual_seed(5);
  Tensor W = empty({400, 256});
  init::kaiming_uniform_(W, std::sqrt(5.0));
  double Bound = 1.0 / 16.0;
  Moments M = moments(W);
  EXPECT_GE(M.Min, -Bound);
  EXPECT_LE(M.Max, Bound);
  EXPECT_GT(M.Max, 0.99 * Bound);
  EXPECT_NEAR(M.Std, Bound / std::sqrt(3.0), 0.001);
}

TEST(InitTest, KaimingUniformModeAndNonlinearity) {
  manual_seed(6);
  Tensor W = empty({64, 32, 3, 3}); // fan_in 288, fan_out 576
  init::kaiming_uniform_(W, 0.0, "fan_out", "relu");
  double Bound = std::sqrt(2.0) * std::sqrt(3.0 / 576.0);
  Moments M = moments(W);
  EXPECT_LE(M.Max, Bound);
  EXPECT_GE(M.Min, -Bound);
  EXPECT_GT(M.Max, 0.99 * Bound);
  EXPECT_THROW(init::kaiming_uniform_(W, 0.0, "fan_sum"), Error);
  EXPECT_THROW(init::kaiming_uniform_(W, 0.0, "fan_in", "swish"), Error);
}

TEST(InitTest, KaimingNormalStd) {
  manual_seed(7);
  Tensor W = empty({128, 64, 3, 3}); // fan_out 1152
  init::kaiming_normal_(W, 0.0, "fan_out", "relu");
  Moments M = moments(W);
  EXPECT_NEAR(M.Mean, 0.0, 0.001);
  EXPECT_NEAR(M.Std, std::sqrt(2.0) / std::sqrt(1152.0), 0.0005);
}

TEST(InitTest, KaimingOnZeroElementsIsNoOp) {
  Tensor W = empty({0, 5});
  EXPECT_NO_THROW(init::kaiming_uniform_(W));
  EXPECT_NO_THROW(init::kaiming_normal_(W));
  EXPECT_EQ(W.numel(), 0);
}

namespace {

/// Max |(A B^T)_{ij} - G^2 delta_ij| for row-major A [R, C].
double gramError(const std::vector<double> &A, int64_t R, int64_t C, bool Rows,
                 double G) {
  double Err = 0;
  int64_t N = Rows ? R : C;
  for (int64_t I = 0; I < N; ++I)
    for (int64_t J = 0; J < N; ++J) {
      double Dot = 0;
      for (int64_t K = 0; K < (Rows ? C : R); ++K)
        Dot += Rows ? A[I * C + K] * A[J * C + K] : A[K * C + I] * A[K * C + J];
      Err = std::max(Err, std::abs(Dot - (I == J ? G * G : 0.0)));
    }
  return Err;
}

} // namespace

TEST(InitTest, OrthogonalRowsOrColumnsAreOrthonormal) {
  manual_seed(8);
  // Square, wide (W W^T = I), tall (W^T W = I), and a 4-D conv weight
  // (trailing dimensions flattened).
  Tensor Square = init::orthogonal_(empty({32, 32}));
  EXPECT_LT(gramError(Square.to_vector<double>(), 32, 32, true, 1.0), 1e-5);
  EXPECT_LT(gramError(Square.to_vector<double>(), 32, 32, false, 1.0), 1e-5);
  Tensor Wide = init::orthogonal_(empty({10, 40}));
  EXPECT_LT(gramError(Wide.to_vector<double>(), 10, 40, true, 1.0), 1e-5);
  Tensor Tall = init::orthogonal_(empty({50, 7}), 2.0);
  EXPECT_LT(gramError(Tall.to_vector<double>(), 50, 7, false, 2.0), 1e-5);
  Tensor Conv = init::orthogonal_(empty({8, 3, 3, 3}, DType::F64));
  EXPECT_LT(gramError(Conv.to_vector<double>(), 8, 27, true, 1.0), 1e-12);
}

TEST(InitTest, OrthogonalFollowsPyTorchSignConvention) {
  // orthogonal_ draws a standard normal A [rows, cols] (row-major, the
  // same stream as Tensor::normal_) and returns Q with A = Q R and
  // diag(R) > 0; so Q^T A must be upper triangular with a positive
  // diagonal. Tall case directly; wide case on the transposes.
  for (auto [Rows, Cols] : {std::pair<int64_t, int64_t>{6, 4}, {4, 6}}) {
    manual_seed(9);
    Tensor A = empty({Rows, Cols}, DType::F64);
    A.normal_();
    manual_seed(9);
    Tensor Q = init::orthogonal_(empty({Rows, Cols}, DType::F64));
    std::vector<double> AV = A.to_vector<double>(), QV = Q.to_vector<double>();
    bool Wide = Rows < Cols;
    int64_t M = Wide ? Cols : Rows, N = Wide ? Rows : Cols;
    auto At = [&](const std::vector<double> &V, int64_t I, int64_t J) {
      return Wide ? V[J * Cols + I] : V[I * Cols + J];
    };
    for (int64_t I = 0; I < N; ++I)
      for (int64_t J = 0; J < N; ++J) {
        double R = 0;
        for (int64_t K = 0; K < M; ++K)
          R += At(QV, K, I) * At(AV, K, J);
        if (I > J)
          EXPECT_NEAR(R, 0.0, 1e-12) << I << "," << J;
        if (I == J)
          EXPECT_GT(R, 0.0) << I;
      }
  }
}

TEST(InitTest, TruncNormalBoundsAndMoments) {
  manual_seed(10);
  Tensor T = init::trunc_normal_(empty({200000}));
  Moments M = moments(T);
  EXPECT_GE(M.Min, -2.0);
  EXPECT_LE(M.Max, 2.0);
  EXPECT_LT(M.Min, -1.99);
  EXPECT_NEAR(M.Mean, 0.0, 0.01);
  // Std of N(0, 1) truncated to [-2, 2].
  double Phi2 = std::exp(-2.0) / std::sqrt(2 * std::numbers::pi);
  double Z = std::erf(2.0 / std::sqrt(2.0));
  EXPECT_NEAR(M.Std, std::sqrt(1 - 4 * Phi2 / Z), 0.005);

  // Small std (ViT-style init): the bounds are far; plain N(0, 0.02^2).
  Moments S = moments(init::trunc_normal_(empty({100000}), 0.0, 0.02));
  EXPECT_NEAR(S.Std, 0.02, 0.0005);

  // One-sided window.
  Moments O = moments(init::trunc_normal_(empty({10000}), 1.0, 2.0, 0.0, 0.5));
  EXPECT_GE(O.Min, 0.0);
  EXPECT_LE(O.Max, 0.5);
  EXPECT_THROW(init::trunc_normal_(empty({3}), 0.0, 1.0, 1.0, -1.0), Error);
}

TEST(InitTest, EyeAndDiracMatchPyTorch) {
  Tensor E = init::eye_(empty({2, 3}));
  EXPECT_EQ(E.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  EXPECT_THROW(init::eye_(empty({2, 2, 2})), Error);

  // torch.nn.init.dirac_(torch.empty(4, 2, 3), groups=2).flatten().
  Tensor D = init::dirac_(empty({4, 2, 3}), 2);
  EXPECT_EQ(D.to_vector<double>(),
            (std::vector<double>{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
                                 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
  Tensor D4 = init::dirac_(empty({2, 3, 3, 3}));
  std::vector<double> V = D4.to_vector<double>();
  EXPECT_EQ(V[0 * 27 + 0 * 9 + 4], 1.0);
  EXPECT_EQ(V[1 * 27 + 1 * 9 + 4], 1.0);
  double Sum = 0;
  for (double X : V)
    Sum += X;
  EXPECT_EQ(Sum, 2.0);
  EXPECT_THROW(init::dirac_(empty({3, 3})), Error);
  EXPECT_THROW(init::dirac_(empty({3, 3, 3}), 2), Error);
}

TEST(InitTest, SparseZeroesAFractionOfEachColumn) {
  manual_seed(11);
  Tensor T = init::sparse_(empty({10, 6}), 0.25);
  std::vector<double> V = T.to_vector<double>();
  for (int64_t C = 0; C < 6; ++C) {
    int Zeros = 0;
    for (int64_t R = 0; R < 10; ++R)
      Zeros += V[R * 6 + C] == 0.0;
    EXPECT_EQ(Zeros, 3) << "column " << C; // ceil(0.25 * 10)
  }
}

TEST(InitTest, RejectsBadTensors) {
  EXPECT_THROW(init::uniform_(Tensor()), Error);
  EXPECT_THROW(init::zeros_(Tensor()), Error);
  EXPECT_THROW(init::uniform_(empty({3}, DType::I64)), Error);
  EXPECT_THROW(init::kaiming_uniform_(empty({3, 3}, DType::I32)), Error);
}
