//===- AutogradTest.cpp - backward, grad, accumulation, hooks, guards ------===//
//
// The reverse-mode engine through the tensor API: gradients of small
// expressions against hand-derived values, accumulation over two backward
// calls, retain_grad on non-leaves, detach, NoGradGuard, grad() with
// allow_unused, tensor hooks, broadcasting gradients reduced to the
// operand's shape, and the error of a second backward without retain_graph.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;

namespace {

std::vector<double> vals(const Tensor &T) { return T.to_vector<double>(); }

void expectNear(const std::vector<double> &A, const std::vector<double> &B,
                double Tol = 1e-6) {
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_NEAR(A[I], B[I], Tol) << "at " << I;
}

TEST(Autograd, BackwardOfSmallExpression) {
  // y = sum(x * w + x / 2 - w), dy/dx = w + 1/2, dy/dw = x - 1.
  Tensor X = tensor({1, 2, 3}, TensorOptions().requires_grad());
  Tensor W = tensor({4, 5, 6}, TensorOptions().requires_grad());
  Tensor Y = sum(X * W + X / 2.0 - W);
  EXPECT_EQ(Y.dim(), 0);
  EXPECT_NEAR(Y.item<double>(), (4 + 10 + 18) + 3.0 - 15, 1e-6);
  Y.backward();
  expectNear(vals(X.grad()), {4.5, 5.5, 6.5});
  expectNear(vals(W.grad()), {0, 1, 2});
}

TEST(Autograd, BroadcastGradientIsSummedToOperandShape) {
  Tensor A = ones({2, 3}, TensorOptions().requires_grad());
  Tensor B = tensor({1, 2, 3}, TensorOptions().requires_grad());
  Tensor C = tensor({2}, std::vector<int64_t>{1, 1},
                    TensorOptions().requires_grad());
  sum((A + B) * C).backward();
  EXPECT_EQ(B.grad().sizes(), (std::vector<int64_t>{3}));
  expectNear(vals(B.grad()), {4, 4, 4});
  EXPECT_EQ(C.grad().sizes(), (std::vector<int64_t>{1, 1}));
  expectNear(vals(C.grad()), {2 * (2 + 3 + 4)});
  expectNear(vals(A.grad()), {2, 2, 2, 2, 2, 2});
}

TEST(Autograd, GradientsAccumulateOverTwoBackwardCalls) {
  Tensor X = tensor({1, -2}, TensorOptions().requires_grad());
  sum(X * X).backward();
  expectNear(vals(X.grad()), {2, -4});
  sum(X * 3.0).backward();
  expectNear(vals(X.grad()), {5, -1});
  X.set_grad(Tensor());
  EXPECT_FALSE(X.grad().defined());
}

TEST(Autograd, RetainGradKeepsNonLeafGradient) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor H = X * 2.0;
  H.retain_grad();
  Tensor Z = X * 5.0; // Not retained.
  sum(H * H + Z).backward();
  ASSERT_TRUE(H.grad().defined());
  expectNear(vals(H.grad()), {4, 8});
  EXPECT_FALSE(Z.grad().defined());
  expectNear(vals(X.grad()), {8 + 5, 16 + 5});
}

TEST(Autograd, DetachCutsTheGraph) {
  Tensor X = tensor({3}, TensorOptions().requires_grad());
  Tensor D = (X * 2.0).detach();
  EXPECT_FALSE(D.requires_grad());
  EXPECT_TRUE(D.is_leaf());
  Tensor Y = sum(X * D);
  Y.backward();
  expectNear(vals(X.grad()), {6});
}

TEST(Autograd, NoGradGuardRecordsNothing) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor Y;
  {
    NoGradGuard G;
    EXPECT_FALSE(autograd::isGradEnabled());
    Y = X * 2.0;
  }
  EXPECT_TRUE(autograd::isGradEnabled());
  EXPECT_FALSE(Y.requires_grad());
  EXPECT_EQ(Y.grad_fn(), nullptr);
  EXPECT_THROW(sum(Y).backward(), Error);
}

TEST(Autograd, GradWithAllowUnused) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor U = tensor({7}, TensorOptions().requires_grad());
  Tensor Y = sum(X * X * X);
  std::vector<Tensor> G =
      autograd::grad({Y}, {X, U}, {}, /*RetainGraph=*/true,
                     /*AllowUnused=*/true);
  ASSERT_EQ(G.size(), 2u);
  expectNear(vals(G[0]), {3, 12});
  EXPECT_FALSE(G[1].defined());
  // grad() leaves .grad() alone.
  EXPECT_FALSE(X.grad().defined());
  // Without allow_unused the unused input is an error.
  EXPECT_THROW(autograd::grad({Y}, {X, U}, {}, true, false), Error);
}

TEST(Autograd, HooksSeeAndReplaceGradients) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor H = X * 3.0;
  std::vector<double> Seen;
  H.register_hook([&](const Tensor &G) {
    Seen = vals(G);
    return G * 10.0;
  });
  int Id = X.register_hook([](const Tensor &G) { return G + 1.0; });
  sum(H).backward();
  expectNear(Seen, {1, 1});
  expectNear(vals(X.grad()), {31, 31});
  X.remove_hook(Id);
  X.set_grad(Tensor());
  sum(X * 2.0).backward();
  expectNear(vals(X.grad()), {2, 2});
}

TEST(Autograd, SecondBackwardWithoutRetainGraphFails) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor Y = sum(X * X);
  Y.backward(Tensor(), /*RetainGraph=*/true);
  Y.backward(); // Allowed: the graph was retained.
  expectNear(vals(X.grad()), {4, 8});
  try {
    Y.backward();
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("second time"), std::string::npos)
        << E.what();
  }
}

TEST(Autograd, BackwardNeedsGradientForNonScalar) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor Y = X * 2.0;
  EXPECT_THROW(Y.backward(), Error);
  Y.backward(tensor({1, 10}));
  expectNear(vals(X.grad()), {2, 20});
}

TEST(Autograd, InPlaceOnLeafRequiringGradIsRefused) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  EXPECT_THROW(X.add_(1.0), Error);
  {
    NoGradGuard G;
    X.add_(1.0);
  }
  expectNear(vals(X), {2, 3});
  EXPECT_EQ(X.version(), 1u);
}

TEST(Autograd, IntegerResultsDoNotRequireGrad) {
  Tensor X = tensor({1, 5, 2}, TensorOptions().requires_grad());
  Tensor I = argmax(X);
  EXPECT_FALSE(I.requires_grad());
  EXPECT_EQ(I.item<int64_t>(), 1);
  Tensor B = X > 1.5;
  EXPECT_EQ(B.dtype(), DType::Bool);
  EXPECT_FALSE(B.requires_grad());
}

TEST(Autograd, GradFnNamesTheOp) {
  Tensor X = tensor({1}, TensorOptions().requires_grad());
  Tensor Y = X + X;
  ASSERT_TRUE(Y.grad_fn());
  EXPECT_EQ(Y.grad_fn()->name(), "AddBackward");
  EXPECT_FALSE(Y.is_leaf());
  EXPECT_TRUE(X.is_leaf());
}

} // namespace
