//===- ModuleModesTest.cpp - train/eval, to(), apply, zero_grad, freezing ===//
//
// The module-wide operations: train()/eval() reaching every submodule,
// to(dtype) converting only floating-point tensors while keeping tensor
// identity (and gradients), to(device), apply()'s children-first order,
// zero_grad with and without set_to_none, requires_grad_ for freezing, and
// parameter counts.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

struct Block : Module<Block> {
  std::shared_ptr<Lin> Fc = register_module("fc", std::make_shared<Lin>(3, 3));
  std::shared_ptr<Norm> Bn = register_module("bn", std::make_shared<Norm>(3));
  Tensor forward(const Tensor &X) { return (*Bn)((*Fc)(X)); }
};

struct Net : Module<Net> {
  std::shared_ptr<Sequential> Body = register_module(
      "body", std::make_shared<Sequential>(std::make_shared<Block>(),
                                           std::make_shared<Act>()));
  std::shared_ptr<Lin> Head = register_module("head", std::make_shared<Lin>(3, 2));
  Tensor forward(const Tensor &X) { return (*Head)((*Body)(X)); }
};

} // namespace

TEST(ModuleModes, TrainAndEvalReachEverySubmodule) {
  Net N;
  for (const ModulePtr &M : N.modules())
    EXPECT_TRUE(M->is_training()) << M->type_name();
  ModuleBase &R = N.eval();
  EXPECT_EQ(&R, &N);
  for (const ModulePtr &M : N.modules())
    EXPECT_FALSE(M->is_training()) << M->type_name();
  N.Body->train();
  EXPECT_FALSE(N.is_training());
  EXPECT_TRUE(N.Body->at<Block>(0)->Bn->is_training());
  N.train(true);
  for (const ModulePtr &M : N.modules())
    EXPECT_TRUE(M->is_training()) << M->type_name();
}

TEST(ModuleModes, ToDTypeConvertsFloatingTensorsAndKeepsIdentity) {
  Net N;
  auto B = N.Body->at<Block>(0);
  Tensor W = B->Fc->weight;
  Tensor Count = B->Bn->num_batches_tracked;
  Tensor Scratch = B->Bn->scratch;
  N(ones({2, 3})).sum().backward();
  ASSERT_TRUE(W.grad().defined());
  ModuleBase &R = N.to(DType::F64);
  EXPECT_EQ(&R, &N);
  for (const auto &[Name, P] : N.named_parameters())
    EXPECT_EQ(P.dtype(), DType::F64) << Name;
  EXPECT_EQ(B->Bn->running_mean.dtype(), DType::F64);
  EXPECT_EQ(Scratch.dtype(), DType::F64); // Non-persistent buffers too.
  EXPECT_EQ(Count.dtype(), DType::I64);   // Integral buffers keep theirs.
  // The same handles (the module's members, the state dict's sources).
  EXPECT_TRUE(W.is_same(B->Fc->weight));
  EXPECT_EQ(W.dtype(), DType::F64);
  EXPECT_TRUE(W.requires_grad());
  EXPECT_EQ(W.grad().dtype(), DType::F64);
  EXPECT_TRUE(N.named_parameters()[0].second.is_same(W));
  // Values survive the conversion; training still works.
  EXPECT_NEAR(W.to_vector<double>()[0], 0.1, 1e-7);
  N.zero_grad();
  Tensor Y = N(ones({2, 3}, DType::F64));
  EXPECT_EQ(Y.dtype(), DType::F64);
  Y.sum().backward();
  EXPECT_EQ(W.grad().dtype(), DType::F64);
  EXPECT_EQ(W.grad().sizes(), (std::vector<int64_t>{3, 3}));
  N.to(DType::F32);
  EXPECT_EQ(W.dtype(), DType::F32);
  EXPECT_THROW(N.to(DType::I32), Error);
  EXPECT_EQ(W.dtype(), DType::F32);
}

TEST(ModuleModes, ToDevice) {
  Net N;
  EXPECT_EQ(&N.to(Device::cpu()), &N);
  N.to(Device::cpu(), DType::F64);
  EXPECT_EQ(N.Head->weight.dtype(), DType::F64);
  try {
    N.to(Device::cuda(0));
    ADD_FAILURE() << "expected an error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(E.what()).find("Net.to(cuda"), std::string::npos)
        << E.what();
  }
  EXPECT_EQ(N.Head->weight.dtype(), DType::F64);
}

TEST(ModuleModes, ApplyVisitsChildrenFirst) {
  Net N;
  std::vector<std::string> Order;
  ModuleBase &R = N.apply([&](ModuleBase &M) { Order.push_back(M.type_name()); });
  EXPECT_EQ(&R, &N);
  // PyTorch: for each child, child.apply(fn); then fn(self).
  EXPECT_EQ(Order, (std::vector<std::string>{"Lin", "Norm", "Block", "Act",
                                             "Sequential", "Lin", "Net"}));
  // A typical use: re-initialising every Lin.
  N.apply([](ModuleBase &M) {
    if (Lin *L = M.as<Lin>()) {
      NoGradGuard NoGrad;
      L->weight.fill_(0.5);
    }
  });
  EXPECT_EQ(N.Head->weight.to_vector<double>()[0], 0.5);
  EXPECT_EQ(N.Body->at<Block>(0)->Fc->weight.to_vector<double>()[4], 0.5);
}

TEST(ModuleModes, ZeroGradSetsToNoneOrZeros) {
  Net N;
  N(ones({2, 3})).sum().backward();
  for (const auto &[Name, P] : N.named_parameters())
    EXPECT_TRUE(P.grad().defined()) << Name;
  Tensor OldGrad = N.Head->weight.grad();
  N.zero_grad(/*SetToNone=*/false);
  for (const auto &[Name, P] : N.named_parameters()) {
    ASSERT_TRUE(P.grad().defined()) << Name;
    EXPECT_EQ(sum(abs(P.grad())).item<double>(), 0.0) << Name;
  }
  EXPECT_TRUE(N.Head->weight.grad().is_same(OldGrad)); // Zeroed in place.
  N.zero_grad();
  for (const auto &[Name, P] : N.named_parameters())
    EXPECT_FALSE(P.grad().defined()) << Name;
  // Gradients accumulate until cleared.
  N(ones({1, 3})).sum().backward();
  double G1 = N.Head->bias.grad().to_vector<double>()[0];
  N(ones({1, 3})).sum().backward();
  EXPECT_DOUBLE_EQ(N.Head->bias.grad().to_vector<double>()[0], 2 * G1);
}

TEST(ModuleModes, RequiresGradFreezesParameters) {
  Net N;
  EXPECT_EQ(N.num_parameters(), 9 + 3 + 3 + 6 + 2);
  EXPECT_EQ(N.num_parameters(true), N.num_parameters());
  N.Body->requires_grad_(false);
  for (const auto &[Name, P] : N.Body->named_parameters())
    EXPECT_FALSE(P.requires_grad()) << Name;
  EXPECT_TRUE(N.Head->weight.requires_grad());
  EXPECT_EQ(N.num_parameters(true), 6 + 2);
  Tensor X = ones({2, 3}, TensorOptions().requires_grad());
  N(X).sum().backward();
  EXPECT_FALSE(N.Body->at<Block>(0)->Fc->weight.grad().defined());
  EXPECT_TRUE(N.Head->weight.grad().defined());
  EXPECT_TRUE(X.grad().defined()); // Gradients still flow through.
  N.requires_grad_();
  EXPECT_EQ(N.num_parameters(true), N.num_parameters());
}
