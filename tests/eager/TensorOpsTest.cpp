//===- TensorOpsTest.cpp - Creation, promotion, shapes and errors ---------===//
//
// The tensor API's behaviour that needs no oracle: creation functions and
// the seeded generator, PyTorch's dtype promotion, shape results of the
// shape ops, in-place methods, and errors that name the op and both shapes
// (matmul, broadcasting, cat, conv2d, cross_entropy targets, reshape).
//
//===----------------------------------------------------------------------===//

#include "EagerTestUtils.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using nng::test::expectValues;

namespace {

/// The message of the Error that Fn throws ("" when none).
template <typename Fn> std::string errorOf(Fn F) {
  try {
    F();
  } catch (const Error &E) {
    return E.message();
  }
  return "";
}

using Sizes = std::vector<int64_t>;

TEST(Creation, FactoriesAndLike) {
  EXPECT_EQ(zeros({2, 3}).sizes(), (Sizes{2, 3}));
  EXPECT_EQ(zeros({2, 3}).dtype(), DType::F32);
  expectValues(ones({2}, DType::I32), {1, 1});
  EXPECT_EQ(ones({2}, DType::I32).dtype(), DType::I32);
  expectValues(full({3}, 2.5), {2.5, 2.5, 2.5});
  expectValues(arange(5), {0, 1, 2, 3, 4});
  EXPECT_EQ(arange(5).dtype(), DType::I64);
  expectValues(arange(1, 2, 0.25, DType::F32), {1, 1.25, 1.5, 1.75});
  expectValues(linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1});
  expectValues(linspace(3, 9, 1), {3});
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  expectValues(eye(2), {1, 0, 0, 1});
  Tensor T = tensor({1, 2, 3, 4, 5, 6}, Sizes{2, 3}, DType::F64);
  EXPECT_EQ(zeros_like(T).dtype(), DType::F64);
  expectValues(full_like(T, 7, DType::I64), {7, 7, 7, 7, 7, 7});
  EXPECT_EQ(ones_like(T).sizes(), (Sizes{2, 3}));
  EXPECT_TRUE(zeros({2}, TensorOptions().requires_grad()).requires_grad());
  EXPECT_EQ(scalar_tensor(4).dim(), 0);
  EXPECT_EQ(scalar_tensor(4).item<int>(), 4);
  EXPECT_NE(errorOf([] { tensor({1, 2, 3}, Sizes{2, 2}); })
                .find("3 values do not fill shape [2, 2]"),
            std::string::npos);
  EXPECT_NE(errorOf([] { zeros({2, -1}); }).find("negative extent -1"),
            std::string::npos);
}

TEST(Creation, SeededRandomness) {
  manual_seed(5);
  Tensor A = randn({100});
  Tensor U = rand({1000});
  manual_seed(5);
  EXPECT_TRUE(equal(A, randn({100})));
  EXPECT_TRUE(equal(U, rand({1000})));
  std::vector<double> V = U.to_vector<double>();
  double Mean = 0;
  for (double X : V) {
    EXPECT_GE(X, 0.0);
    EXPECT_LT(X, 1.0);
    Mean += X / V.size();
  }
  EXPECT_NEAR(Mean, 0.5, 0.05);
  Tensor I = randint(3, 7, {200});
  EXPECT_GE(amin(I).item<int64_t>(), 3);
  EXPECT_LE(amax(I).item<int64_t>(), 6);
  std::vector<int64_t> P = randperm(10).to_vector<int64_t>();
  std::sort(P.begin(), P.end());
  for (int64_t K = 0; K < 10; ++K)
    EXPECT_EQ(P[K], K);
}

TEST(Promotion, PyTorchRules) {
  EXPECT_EQ(promote_types(DType::I64, DType::F32), DType::F32);
  EXPECT_EQ(promote_types(DType::F32, DType::F64), DType::F64);
  EXPECT_EQ(promote_types(DType::I32, DType::I64), DType::I64);
  EXPECT_EQ(promote_types(DType::U8, DType::I8), DType::I16);
  EXPECT_EQ(promote_types(DType::Bool, DType::I32), DType::I32);
  EXPECT_EQ(promote_types(DType::F16, DType::BF16), DType::F32);
  try { // str tensors take no arithmetic in eager code.
    promote_types(DType::String, DType::F32);
    ADD_FAILURE() << "str promoted";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(E.what()).find("string tensors take no arithmetic"),
              std::string::npos)
        << E.what();
  }
  Tensor I = tensor({1, 2}, DType::I64);
  EXPECT_EQ((I + tensor({0.5, 0.5})).dtype(), DType::F32);
  EXPECT_EQ((I * 2.0).dtype(), DType::I64);
  EXPECT_EQ((I * 0.5).dtype(), DType::F32);
  EXPECT_EQ((I / 2.0).dtype(), DType::F32);
  expectValues(I / 2.0, {0.5, 1.0});
  EXPECT_EQ(sum(tensor({1, 0, 1}, DType::Bool)).item<int64_t>(), 2);
  EXPECT_EQ(sum(tensor({1, 0, 1}, DType::Bool)).dtype(), DType::I64);
}

TEST(Comparisons, AllcloseAndEqual) {
  Tensor A = tensor({1.0, 2.0, 3.0});
  EXPECT_TRUE(allclose(A, A + 1e-9));
  EXPECT_FALSE(allclose(A, A + 1e-3));
  EXPECT_TRUE(allclose(A, A + 1e-3, /*Rtol=*/0, /*Atol=*/1e-2));
  EXPECT_TRUE(allclose(A, tensor({2.0}), /*Rtol=*/1.0)); // Broadcasts.
  EXPECT_FALSE(allclose(tensor({NAN}), tensor({NAN})));
  EXPECT_TRUE(equal(A, tensor({1, 2, 3})));
  EXPECT_FALSE(equal(A, tensor({1, 2})));
  expectValues(ne(A, tensor({1, 0, 3})), {0, 1, 0});
}

TEST(ShapeOps, ResultShapes) {
  Tensor A = arange(24, DType::F32).reshape({2, 3, 4});
  EXPECT_EQ(A.view({4, -1}).sizes(), (Sizes{4, 6}));
  EXPECT_EQ(A.flatten(1).sizes(), (Sizes{2, 12}));
  EXPECT_EQ(A.permute({2, 0, 1}).sizes(), (Sizes{4, 2, 3}));
  EXPECT_EQ(A.transpose(0, -1).sizes(), (Sizes{4, 3, 2}));
  EXPECT_EQ(A.unsqueeze(-1).sizes(), (Sizes{2, 3, 4, 1}));
  EXPECT_EQ(A.unsqueeze(1).squeeze(1).sizes(), (Sizes{2, 3, 4}));
  EXPECT_EQ(A.squeeze(0).sizes(), (Sizes{2, 3, 4})); // Not size 1: kept.
  EXPECT_EQ(A[1].sizes(), (Sizes{3, 4}));
  expectValues(A[1][2], {20, 21, 22, 23});
  EXPECT_EQ(A.slice(2, 1, 100, 2).sizes(), (Sizes{2, 3, 2}));
  EXPECT_EQ(A.slice(1, 5, 9).sizes(), (Sizes{2, 0, 4}));
  EXPECT_EQ(cat({A, A}, -1).sizes(), (Sizes{2, 3, 8}));
  EXPECT_EQ(stack({A, A}, 3).sizes(), (Sizes{2, 3, 4, 2}));
  std::vector<Tensor> P = split(A, 3, 2);
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[1].sizes(), (Sizes{2, 3, 1}));
  EXPECT_EQ(chunk(A, 2, 1).size(), 2u);
  EXPECT_EQ(unbind(A, 1).size(), 3u);
  EXPECT_EQ(A.expand({5, 2, 3, 4}).sizes(), (Sizes{5, 2, 3, 4}));
  EXPECT_EQ(A.sum({1}, true).sizes(), (Sizes{2, 1, 4}));
  EXPECT_EQ(A.mean().dim(), 0);
  EXPECT_EQ(A.argmax(1).sizes(), (Sizes{2, 4}));
  EXPECT_EQ(A.max().item<float>(), 23.0f);
  Tensor M = arange(6, DType::F32).reshape({2, 3});
  EXPECT_EQ(M.t().sizes(), (Sizes{3, 2}));
  EXPECT_EQ(one_hot(tensor({0, 2}, DType::I64), 3).sizes(), (Sizes{2, 3}));
}

TEST(InPlace, MethodsWriteStorageAndBumpVersion) {
  Tensor A = tensor({1, 2, 3});
  Tensor Alias = A; // Shares the impl.
  A.add_(tensor({1, 1, 1}), 2.0).mul_(2.0);
  expectValues(Alias, {6, 8, 10});
  A.sub_(tensor({1, 1, 1})).div_(tensor({5, 7, 9}));
  expectValues(A, {1, 1, 1});
  A.clamp_(std::nullopt, 0.5);
  expectValues(A, {0.5, 0.5, 0.5});
  A.fill_(3).add_(1.0);
  expectValues(A, {4, 4, 4});
  A.copy_(tensor({7}));
  expectValues(A, {7, 7, 7});
  EXPECT_GE(A.version(), 7u);
  Tensor B = zeros({3});
  B.uniform_(2, 3);
  EXPECT_GE(amin(B).item<double>(), 2.0);
}

TEST(Errors, NameTheOpAndBothShapes) {
  Tensor A = zeros({2, 3}), B = zeros({4, 5});
  EXPECT_EQ(errorOf([&] { matmul(A, B); }),
            "matmul: A f32[2, 3] and B f32[4, 5]: inner dimensions 3 and 4 "
            "differ");
  EXPECT_EQ(errorOf([&] { A + B; }),
            "add: A f32[2, 3] and B f32[4, 5] do not broadcast: dimension 1 "
            "is 3 and 5");
  EXPECT_NE(errorOf([&] { cat({A, B}, 0); })
                .find("cat: tensor 0 f32[2, 3] and tensor 1 f32[4, 5]"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { A.reshape({4, 2}); })
                .find("reshape: shape [4, 2] is invalid for input f32[2, 3]"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { A.sum({2}); }).find("sum: dimension out of range"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              F::conv2d(zeros({1, 3, 8, 8}), zeros({4, 2, 3, 3}));
            }).find("conv2d: input f32[1, 3, 8, 8] and weight f32[4, 2, 3, 3]"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              F::cross_entropy(zeros({2, 3}), tensor({0, 3}, DType::I64));
            }).find("target 3 (entry 1 of i64[2]) is out of bounds for 3 classes"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { F::linear(zeros({2, 3}), zeros({4, 5})); })
                .find("linear: input f32[2, 3] and weight f32[4, 5]"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { A.select(0, 2); })
                .find("select: index 2 is out of range for dimension 0"),
            std::string::npos);
  // Errors leave no partial state: an in-place op that fails keeps values.
  Tensor C = tensor({1, 2, 3});
  EXPECT_THROW(C.add_(zeros({2})), Error);
  expectValues(C, {1, 2, 3});
}

TEST(Errors, ModuleScopeIsAddedToBackendErrors) {
  dispatch::ModuleScope Scope("layer1.conv", "Conv2d");
  try {
    // Gather with an index the backend rejects (bypassing index_select's
    // own check) fails in the kernel and gets the module as context.
    dispatch::call1(ir::OpKind::Gather, {zeros({2}), tensor({5}, DType::I64)});
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("in module layer1.conv (Conv2d)"),
              std::string::npos)
        << E.what();
  }
}

TEST(Functional, DropoutMaskAndScale) {
  manual_seed(3);
  Tensor X = ones({1000});
  Tensor Y = F::dropout(X, 0.25, true);
  std::vector<double> V = Y.to_vector<double>();
  int64_t Zeros = 0;
  for (double E : V) {
    EXPECT_TRUE(E == 0.0 || std::fabs(E - 1.0 / 0.75) < 1e-6) << E;
    Zeros += E == 0.0;
  }
  EXPECT_NEAR(static_cast<double>(Zeros) / 1000, 0.25, 0.05);
  EXPECT_TRUE(equal(F::dropout(X, 0.25, false), X));
  manual_seed(3);
  EXPECT_TRUE(equal(F::dropout(X, 0.25, true), Y));
}

TEST(Functional, BatchNormUpdatesRunningStatsOnlyInTraining) {
  Tensor X = reshape(arange(8, DType::F32), {4, 2});
  Tensor RM = zeros({2}), RV = ones({2});
  F::batch_norm(X, RM, RV, Tensor(), Tensor(), /*Training=*/true, 0.5);
  // Batch means 3 and 4; unbiased variances 20/3.
  expectValues(RM, {1.5, 2.0}, 1e-5);
  expectValues(RV, {0.5 + 0.5 * 20.0 / 3, 0.5 + 0.5 * 20.0 / 3}, 1e-5);
  Tensor Before = RM.clone();
  F::batch_norm(X, RM, RV, Tensor(), Tensor(), /*Training=*/false);
  EXPECT_TRUE(equal(RM, Before));
}

} // namespace
