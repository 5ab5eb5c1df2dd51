//===- LinalgTest.cpp - Linalg.h without an oracle
//-------------------------===//
//
// What TorchFunctionalTest's comparisons with torch do not cover: known
// values (e^0 = I, e^diag, a rotation), the properties of the results
// (Q orthogonal, A X = B), gradients against finite differences through
// the squarings of matrix_exp, and the errors, which name the function,
// the operands and what to do.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace nng;

namespace {

std::string errorOf(const std::function<void()> &Fn) {
  try {
    Fn();
  } catch (const Error &E) {
    return E.what();
  }
  return "no error";
}

} // namespace

TEST(Linalg, MatrixExpKnownValues) {
  EXPECT_TRUE(equal(matrix_exp(zeros({3, 3})), eye(3)));
  Tensor D = tensor({1.0, 0, 0, 0, -2.0, 0, 0, 0, 5.0}, {{3, 3}}, DType::F64);
  Tensor E =
      tensor({std::exp(1.0), 0, 0, 0, std::exp(-2.0), 0, 0, 0, std::exp(5.0)},
             {{3, 3}}, DType::F64);
  EXPECT_TRUE(allclose(matrix_exp(D), E, 1e-13, 0));
  // e^[[0, -t], [t, 0]] is the rotation by t (t large: 4 squarings).
  double T = 10.0;
  Tensor A = tensor({0, -T, T, 0}, {{2, 2}}, DType::F64);
  Tensor R = tensor({std::cos(T), -std::sin(T), std::sin(T), std::cos(T)},
                    {{2, 2}}, DType::F64);
  EXPECT_TRUE(allclose(matrix_exp(A), R, 0, 1e-12));
}

TEST(Linalg, MatrixExpGradientMatchesFiniteDifferences) {
  manual_seed(5);
  Tensor A = (randn({3, 3}, DType::F64) * 2.0).detach().requires_grad_();
  Tensor G = randn({3, 3}, DType::F64);
  sum(matrix_exp(A) * G).backward();
  Tensor Grad = A.grad();
  double H = 1e-6;
  for (int64_t I : {0, 5, 7}) { // Three entries keep the test short.
    std::vector<double> Delta(9, 0.0);
    Delta[I] = H;
    Tensor Dt = tensor(Delta, {{3, 3}}, DType::F64);
    NoGradGuard NoGrad;
    double Plus = sum(matrix_exp(A.detach() + Dt) * G).item<double>();
    double Minus = sum(matrix_exp(A.detach() - Dt) * G).item<double>();
    EXPECT_NEAR(Grad.to_vector<double>()[I], (Plus - Minus) / (2 * H), 1e-6)
        << "entry " << I;
  }
}

TEST(Linalg, QrAndSolveProperties) {
  manual_seed(6);
  Tensor M = randn({6, 4}, DType::F64);
  auto [X, Tau] = geqrf(M);
  EXPECT_FALSE(X.requires_grad());
  Tensor Q = linalg::householder_product(X, Tau);
  EXPECT_TRUE(allclose(matmul(Q.t(), Q), eye(4, DType::F64), 0, 1e-12));
  // Q R = M, R the upper triangle of X's first 4 rows.
  Tensor R = triu(slice(X, 0, 0, 4));
  EXPECT_TRUE(allclose(matmul(Q, R), M, 0, 1e-12));
  // No reflector: the first n columns of the identity (batched too).
  Tensor NoTau = zeros({2, 0}, DType::F64);
  EXPECT_TRUE(
      equal(linalg::householder_product(zeros({2, 3, 2}, DType::F64), NoTau),
            expand(slice(eye(3, DType::F64), 1, 0, 2), {2, 3, 2})));

  Tensor A = randn({2, 5, 5}, DType::F64);
  Tensor B = randn({5, 3}, DType::F64);
  Tensor Sol = linalg::solve(A, B);
  EXPECT_EQ(Sol.shape(), Shape({2, 5, 3}));
  EXPECT_TRUE(allclose(matmul(A, Sol), expand(B, {2, 5, 3}), 0, 1e-10));
  // A pivot is needed: the first entry is zero.
  Tensor P = tensor({0, 1, 1, 1}, {{2, 2}}, DType::F64);
  EXPECT_TRUE(allclose(linalg::solve(P, tensor({2, 3}, DType::F64)),
                       tensor({1, 2}, DType::F64), 0, 1e-14));
}

TEST(Linalg, ErrorsSayWhat) {
  auto Has = [](const std::string &Msg, const std::string &Part) {
    return Msg.find(Part) != std::string::npos;
  };
  std::string E = errorOf([] { matrix_exp(zeros({2, 3})); });
  EXPECT_TRUE(Has(E, "matrix_exp: A f32[2, 3] must be a square matrix")) << E;
  E = errorOf([] { matrix_exp(zeros({2, 2}, DType::I64)); });
  EXPECT_TRUE(Has(E, "must be f32 or f64")) << E;
  E = errorOf([] { matrix_exp(tensor({std::nan(""), 0, 0, 0}, {{2, 2}})); });
  EXPECT_TRUE(Has(E, "infinite or NaN")) << E;
  E = errorOf([] { linalg::householder_product(zeros({2, 3}), zeros({2})); });
  EXPECT_TRUE(Has(E, "at least as many rows as columns")) << E;
  E = errorOf([] { linalg::householder_product(zeros({4, 3}), zeros({4})); });
  EXPECT_TRUE(Has(E, "at most one per column")) << E;
  E = errorOf([] { geqrf(zeros({3})); });
  EXPECT_TRUE(Has(E, "geqrf: A f32[3] must be a matrix")) << E;
  E = errorOf([] {
    linalg::solve(tensor({1, 2, 2, 4}, {{2, 2}}), ones({2, 1}));
  });
  EXPECT_TRUE(Has(E, "is singular: column 1 has no nonzero pivot")) << E;
  E = errorOf([] { linalg::solve(eye(3), ones({2, 1})); });
  EXPECT_TRUE(Has(E, "must be (..., 3, k) or a vector of 3 entries")) << E;
  E = errorOf([] { linalg::solve(zeros({2, 3, 3}), zeros({3, 3, 1})); });
  EXPECT_TRUE(Has(E, "batch dimensions do not broadcast")) << E;
}
