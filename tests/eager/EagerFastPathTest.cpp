//===- EagerFastPathTest.cpp - The inline f32 ops equal the reference -----===//
//
// The dispatcher serves f32 elementwise calls of one shape (or with a
// one-element operand) with inline loops (frontend/lib/eager/
// EagerFastPath.cpp). Their results must equal the reference backend's bit
// for bit, special values (NaN, infinities, signed zeros, subnormals) and
// tensors large enough for the parallel loop included; calls the loops do
// not serve (broadcasts, views, other dtypes) must still be right, and
// autograd must record through them.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/Graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace nng;
using ir::OpKind;

namespace {

/// The reference backend's result of Op on Inputs (a one-node graph).
rt::Tensor reference(OpKind Op, const std::vector<Tensor> &Inputs) {
  ir::Graph G;
  std::vector<ir::Value *> Ins;
  std::vector<rt::Tensor> Feeds;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const rt::Tensor &D = Inputs[I].data();
    Ins.push_back(G.addInput("x" + std::to_string(I),
                             ir::TensorType(D.dtype(), D.shape())));
    Feeds.push_back(D);
  }
  ir::Node *N = G.addNode(Op, Ins, {"y"}, {});
  G.addOutput(N->output());
  return backends::runReference(G, Feeds).at(0);
}

/// True when A and B have one shape and dtype and the same bytes.
::testing::AssertionResult sameBits(const Tensor &Got, const rt::Tensor &Want) {
  rt::Tensor A = Got.data().contiguous(), B = Want.contiguous();
  if (A.dtype() != B.dtype() || A.shape() != B.shape())
    return ::testing::AssertionFailure()
           << "got " << A.toString() << ", want " << B.toString();
  if (std::memcmp(A.rawData(), B.rawData(), A.nbytes()) != 0) {
    for (int64_t I = 0; I < A.numel(); ++I) {
      float X = A.data<float>()[I], Y = B.data<float>()[I];
      if (std::memcmp(&X, &Y, sizeof(float)) != 0)
        return ::testing::AssertionFailure()
               << "element " << I << ": eager " << X << ", reference " << Y;
    }
  }
  return ::testing::AssertionSuccess();
}

Tensor f32(const std::vector<float> &V, const Shape &S) {
  return Tensor(rt::Tensor::fromVector<float>(V, S));
}

/// Ordinary and special f32 values, Count of them.
std::vector<float> values(size_t Count, unsigned Seed) {
  const float Inf = std::numeric_limits<float>::infinity();
  const float Special[] = {0.f, -0.f,   1.f,    -1.f,  Inf,  -Inf,
                           NAN, 1e-40f, -3e38f, 3e38f, 0.1f, 7.f};
  std::vector<float> V;
  uint32_t X = Seed * 2654435761u + 1;
  for (size_t I = 0; I < Count; ++I) {
    X = X * 1664525u + 1013904223u;
    if (I % 5 == 0)
      V.push_back(Special[(X >> 8) % std::size(Special)]);
    else
      V.push_back(static_cast<float>(static_cast<int32_t>(X)) / 1e8f);
  }
  return V;
}

Tensor run(OpKind Op, const Tensor &A, const Tensor &B) {
  switch (Op) {
  case OpKind::Add:
    return A + B;
  case OpKind::Sub:
    return A - B;
  case OpKind::Mul:
    return A * B;
  default:
    return A / B;
  }
}

const OpKind BinaryOps[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div};

TEST(EagerFastPath, BinarySameShapeAndScalars) {
  unsigned Seed = 1;
  for (OpKind Op : BinaryOps) {
    SCOPED_TRACE(ir::getOpSchema(Op).Name);
    Tensor A = f32(values(15, Seed++), {3, 5});
    Tensor B = f32(values(15, Seed++), {3, 5});
    EXPECT_TRUE(sameBits(run(Op, A, B), reference(Op, {A, B})));
    for (float S : {2.5f, -0.f, 0.f, NAN}) {
      Tensor S0 = f32({S}, {}), S2 = f32({S}, {1, 1});
      EXPECT_TRUE(sameBits(run(Op, A, S0), reference(Op, {A, S0})));
      EXPECT_TRUE(sameBits(run(Op, S0, A), reference(Op, {S0, A})));
      EXPECT_TRUE(sameBits(run(Op, A, S2), reference(Op, {A, S2})));
      EXPECT_TRUE(sameBits(run(Op, S2, A), reference(Op, {S2, A})));
    }
    // A one-element operand of higher rank broadcasts the other up.
    Tensor One = f32({3.f}, {1, 1, 1});
    Tensor R = run(Op, A, One);
    EXPECT_EQ(R.sizes(), (std::vector<int64_t>{1, 3, 5}));
    EXPECT_TRUE(sameBits(R, reference(Op, {A, One})));
    // Empty tensors.
    Tensor E = f32({}, {0, 3});
    EXPECT_TRUE(sameBits(run(Op, E, E), reference(Op, {E, E})));
  }
}

TEST(EagerFastPath, BinaryLargeRunsInParallelChunks) {
  // Over the inline limit (1 << 15 elements): parallelFor splits the loop.
  for (OpKind Op : BinaryOps) {
    SCOPED_TRACE(ir::getOpSchema(Op).Name);
    Tensor A = f32(values(100003, 11), {100003});
    Tensor B = f32(values(100003, 12), {100003});
    EXPECT_TRUE(sameBits(run(Op, A, B), reference(Op, {A, B})));
    Tensor S = f32({0.75f}, {});
    EXPECT_TRUE(sameBits(run(Op, S, B), reference(Op, {S, B})));
  }
}

TEST(EagerFastPath, CallsItDoesNotServeStillMatch) {
  for (OpKind Op : BinaryOps) {
    SCOPED_TRACE(ir::getOpSchema(Op).Name);
    // A broadcast, a transposed view, and f64.
    Tensor A = f32(values(12, 21), {3, 4});
    Tensor Row = f32(values(4, 22), {4});
    Tensor R = run(Op, A, Row);
    rt::Tensor W = reference(Op, {A, Row});
    EXPECT_TRUE(R.data().equals(W)) << R.toString();
    Tensor T(f32(values(12, 23), {4, 3}).data().permute({1, 0}));
    ASSERT_FALSE(T.is_contiguous());
    R = run(Op, A, T);
    EXPECT_TRUE(R.data().equals(reference(Op, {A, T.contiguous()})));
    Tensor D = A.to(DType::F64);
    R = run(Op, D, D);
    EXPECT_EQ(R.dtype(), DType::F64);
    EXPECT_TRUE(R.data().equals(reference(Op, {D, D})));
  }
  // Mixed dtypes promote first, then take the fast path.
  Tensor I = Tensor(rt::Tensor::fromVector<int64_t>({1, 2, 3}, {3}));
  Tensor F = f32({0.5f, 0.25f, 2.f}, {3});
  Tensor R = I * F;
  EXPECT_EQ(R.dtype(), DType::F32);
  EXPECT_TRUE(sameBits(R, reference(OpKind::Mul, {I.to(DType::F32), F})));
}

TEST(EagerFastPath, Unary) {
  Tensor X = f32(values(40, 31), {8, 5});
  EXPECT_TRUE(sameBits(neg(X), reference(OpKind::Neg, {X})));
  EXPECT_TRUE(sameBits(abs(X), reference(OpKind::Abs, {X})));
  EXPECT_TRUE(sameBits(sqrt(X), reference(OpKind::Sqrt, {X})));
  EXPECT_TRUE(sameBits(reciprocal(X), reference(OpKind::Reciprocal, {X})));
  EXPECT_TRUE(sameBits(X.relu(), reference(OpKind::Relu, {X})));
  Tensor Big = f32(values(70001, 32), {70001});
  EXPECT_TRUE(sameBits(neg(Big), reference(OpKind::Neg, {Big})));
  EXPECT_TRUE(sameBits(Big.relu(), reference(OpKind::Relu, {Big})));
}

TEST(EagerFastPath, AutogradRecordsThroughIt) {
  Tensor A = f32({1.f, 2.f, 3.f}, {3});
  Tensor B = f32({4.f, 5.f, 6.f}, {3});
  A.requires_grad_(true);
  B.requires_grad_(true);
  Tensor Y = (A * B + A - B / f32({2.f}, {})).relu();
  ASSERT_TRUE(Y.grad_fn());
  Y.sum().backward();
  // d/dA = B + 1, d/dB = A - 0.5 (every element of Y is positive).
  EXPECT_EQ(A.grad().to_vector<float>(), (std::vector<float>{5, 6, 7}));
  EXPECT_EQ(B.grad().to_vector<float>(),
            (std::vector<float>{0.5f, 1.5f, 2.5f}));
  // No history under NoGradGuard or without requires_grad.
  {
    NoGradGuard NoGrad;
    EXPECT_FALSE((A + B).grad_fn());
  }
  EXPECT_FALSE((A.detach() + B.detach()).requires_grad());
}

} // namespace
