//===- ModuleMemberAdoptionTest.cpp - Reassigned members stay registered --===//
//
// PyTorch's `self.mean = momentum * self.mean + (1 - momentum) * x.mean(0)`
// written in C++ (`mean = ...` on the member) must not desync the member
// from the registered buffer: state_dict(), named_buffers(), get_buffer(),
// to(), load_state_dict() and the tracer see what forward sees. A
// parameter member takes a leaf that requires grad (weight tying, as
// PyTorch's `head.weight = emb.weight`); a computed tensor is an error,
// as PyTorch's TypeError, and the module stays usable.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;

namespace {

/// The running-mean idiom, exactly as a PyTorch user writes it.
struct RunningMean : Module<RunningMean> {
  Tensor mean = register_buffer("mean", zeros({3}));
  double momentum = 0.5;
  Tensor forward(const Tensor &x) {
    if (is_training()) {
      NoGradGuard G;
      mean = momentum * mean + (1 - momentum) * x.mean({0});
    }
    return x - mean;
  }
};

struct Tied : Module<Tied> {
  Tensor weight = register_parameter("weight", ones({2, 2}));
  Tensor forward(const Tensor &x) { return x.matmul(weight); }
};

bool sameValues(const Tensor &A, const Tensor &B) {
  return A.shape() == B.shape() && allclose(A, B, 0.0, 0.0);
}

} // namespace

TEST(ModuleMemberAdoption, ReassignedBufferIsWhatStateDictHolds) {
  auto M = make<RunningMean>();
  Tensor X = Tensor(rt::Tensor::fromVector<float>({1, 2, 3, 3, 4, 5}, {2, 3}));
  (*M)(X); // mean = 0.5 * 0 + 0.5 * [2, 3, 4]
  Tensor Want = Tensor(rt::Tensor::fromVector<float>({1, 1.5, 2}, {3}));
  ASSERT_TRUE(sameValues(M->mean, Want));
  EXPECT_TRUE(sameValues(M->state_dict().at("mean"), Want));
  EXPECT_TRUE(M->get_buffer("mean").is_same(M->mean));
  auto Bufs = M->named_buffers();
  ASSERT_EQ(Bufs.size(), 1u);
  EXPECT_TRUE(Bufs[0].second.is_same(M->mean));
  // A second step builds on the first.
  (*M)(X);
  EXPECT_TRUE(sameValues(M->state_dict().at("mean"),
                         Tensor(rt::Tensor::fromVector<float>({1.5, 2.25, 3},
                                                              {3}))));
}

TEST(ModuleMemberAdoption, LoadAndConvertReachTheMember) {
  auto M = make<RunningMean>();
  Tensor X = Tensor(rt::Tensor::fromVector<float>({1, 2, 3, 3, 4, 5}, {2, 3}));
  (*M)(X);
  // load_state_dict writes into the tensor forward reads.
  StateDict SD;
  SD.insert("mean", Tensor(rt::Tensor::fromVector<float>({7, 8, 9}, {3})));
  M->load_state_dict(SD);
  EXPECT_TRUE(sameValues(M->mean, SD.at("mean")));
  // to() converts it, and the member sees the conversion.
  M->to(DType::F64);
  EXPECT_EQ(M->mean.dtype(), DType::F64);
  EXPECT_EQ(M->state_dict().at("mean").dtype(), DType::F64);
}

TEST(ModuleMemberAdoption, TracerCapturesTheReassignedBuffer) {
  auto M = make<RunningMean>();
  Tensor X = Tensor(rt::Tensor::fromVector<float>({1, 2, 3, 3, 4, 5}, {2, 3}));
  (*M)(X);
  M->eval();
  fx::GraphModule GM = fx::symbolic_trace(*M, {fx::InputSpec({2, 3})});
  EXPECT_TRUE(sameValues(GM({X}), (*M)(X)));
  EXPECT_TRUE(sameValues(GM.state_dict().at("mean"), M->mean));
}

TEST(ModuleMemberAdoption, ParameterTakesALeafThatRequiresGrad) {
  auto A = make<Tied>();
  auto B = make<Tied>();
  B->weight = A->weight; // PyTorch: b.weight = a.weight (tying).
  EXPECT_TRUE(B->named_parameters()[0].second.is_same(A->weight));
  EXPECT_TRUE(B->state_dict("", /*KeepVars=*/true).at("weight").is_same(A->weight));
}

TEST(ModuleMemberAdoption, ComputedParameterIsAnError) {
  auto M = make<Tied>();
  Tensor Old = M->weight;
  M->weight = M->weight * 2.0; // Has a grad_fn: PyTorch raises TypeError.
  try {
    M->state_dict();
    ADD_FAILURE() << "expected an error";
  } catch (const Error &E) {
    std::string W = E.what();
    EXPECT_NE(W.find("parameter 'weight'"), std::string::npos) << W;
    EXPECT_NE(W.find("grad_fn"), std::string::npos) << W;
    EXPECT_NE(W.find("replace_parameter"), std::string::npos) << W;
  }
  // The member is back to the parameter: the module stays usable.
  EXPECT_TRUE(M->weight.is_same(Old));
  EXPECT_EQ(M->parameters().size(), 1u);
  M->weight = zeros({2, 2}); // A leaf without requires_grad: an error too.
  EXPECT_THROW(M->parameters(), Error);
  EXPECT_TRUE(M->weight.is_same(Old));
}
