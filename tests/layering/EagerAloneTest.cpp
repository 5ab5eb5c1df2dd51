//===- EagerAloneTest.cpp - The eager library without the ones above ------===//
//
// Linked with nngraph_eager only (tests/CMakeLists.txt): eager tensors
// compute without autograd, fx or nn, and an operation that needs autograd
// says how to link it instead of failing at link time or crashing.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/GradMode.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;

namespace {
std::string messageOf(const std::function<void()> &F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "(no error)";
}
} // namespace

TEST(EagerAlone, ComputesWithoutAutograd) {
  Tensor A = full({3}, 2.0);
  Tensor B = matmul(A.reshape({1, 3}), A.reshape({3, 1})) + A.sum();
  EXPECT_EQ(B.to_vector<float>(), std::vector<float>{18.0f});
}

TEST(EagerAlone, GradModeNeedsNoAutograd) {
  Tensor A = ones({2}).requires_grad_();
  NoGradGuard G;
  EXPECT_EQ((A * A).to_vector<float>(), (std::vector<float>{1.0f, 1.0f}));
}

TEST(EagerAlone, RecordingSaysHowToLinkAutograd) {
  Tensor A = ones({2}).requires_grad_();
  std::string M = messageOf([&] { (void)(A * A); });
  EXPECT_NE(M.find("needs autograd, which is not linked"), std::string::npos)
      << M;
  EXPECT_NE(M.find("nngraph::autograd"), std::string::npos) << M;
  M = messageOf([&] { (void)exp(A); });
  EXPECT_NE(M.find("needs autograd"), std::string::npos) << M;
}
