//===- LayerEmbeddingTest.cpp - Embedding ---------------------------------===//
//
// weight name/shape, N(0, 1) initialization with the padding row zeroed,
// padding_idx normalization and its missing gradient, max_norm
// renormalization (reference numbers from PyTorch), from_pretrained,
// extra_repr, and the errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Embedding.h"

using namespace nng;
using namespace nng::test;

TEST(LayerEmbeddingTest, StateAndInit) {
  manual_seed(4);
  nn::Embedding E(1000, 20, 3);
  EXPECT_EQ(stateSignature(E),
            (std::vector<std::string>{"weight [1000, 20] f32"}));
  std::vector<double> W = E.weight.to_vector<double>();
  double Sum = 0, Sq = 0;
  for (int64_t J = 0; J < 20; ++J)
    EXPECT_EQ(W[3 * 20 + J], 0.0);
  for (double V : W)
    Sum += V, Sq += V * V;
  EXPECT_NEAR(Sum / W.size(), 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(Sq / W.size()), 1.0, 0.02);
}

TEST(LayerEmbeddingTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::Embedding(10, 3).to_string(), "Embedding(10, 3)");
  nn::Embedding E(10, 3, -1, 1.0);
  EXPECT_EQ(E.padding_idx, 9);
  EXPECT_EQ(E.extra_repr(), "10, 3, padding_idx=9, max_norm=1.0");
  EXPECT_EQ(nn::Embedding(4, 2, std::nullopt, std::nullopt, 1.0).extra_repr(),
            "4, 2, norm_type=1.0");
}

TEST(LayerEmbeddingTest, LookupAndPaddingGradient) {
  auto E = nn::make<nn::Embedding>(5, 2, 0);
  fillParams(*E);
  Tensor Idx = tensor({0, 3, 3, 1}, std::vector<int64_t>{2, 2}, DType::I64);
  Tensor Y = (*E)(Idx);
  ASSERT_EQ(Y.sizes(), (std::vector<int64_t>{2, 2, 2}));
  std::vector<double> W = E->weight.to_vector<double>(),
                      V = Y.to_vector<double>();
  EXPECT_EQ(V[2], W[6]);
  EXPECT_EQ(V[7], W[3]);
  sum(Y * 2.0).backward();
  std::vector<double> G = E->weight.grad().to_vector<double>();
  // Row 0 is padding: no gradient; row 3 is used twice.
  EXPECT_EQ((std::vector<double>{G[0], G[1]}), (std::vector<double>{0, 0}));
  EXPECT_EQ((std::vector<double>{G[6], G[7]}), (std::vector<double>{4, 4}));
  EXPECT_EQ((std::vector<double>{G[2], G[3]}), (std::vector<double>{2, 2}));
  EXPECT_EQ((std::vector<double>{G[4], G[5]}), (std::vector<double>{0, 0}));
}

TEST(LayerEmbeddingTest, MaxNormMatchesPyTorch) {
  auto E = nn::make<nn::Embedding>(5, 3, std::nullopt, 1.0);
  fillParams(*E, 2.0);
  Tensor Idx = tensor({0, 2, 2, 4}, std::vector<int64_t>{2, 2}, DType::I64);
  expectValues((*E)(Idx), {2, 2, 3},
               {0.57418251, 0.676668167, 0.460906178, -0.875895858,
                -0.370677769, 0.308875799, -0.875895858, -0.370677769,
                0.308875799, 0.0212952066, -0.537266612, -0.843143582});
  // Only the rows looked up are renormalized, in place.
  expectValues(E->weight, {5, 3},
               {0.57418251, 0.676668167, 0.460906178, 0.0831613243, -1.22371578,
                -1.95506024, -0.875895858, -0.370677769, 0.308875799,
                1.70087326, 1.97871649, 1.32593846, 0.0212952066, -0.537266612,
                -0.843143582});
}

TEST(LayerEmbeddingTest, FromPretrained) {
  Tensor W = seq({4, 2}, 0.0);
  auto E = nn::Embedding::from_pretrained(W);
  EXPECT_FALSE(E->weight.requires_grad());
  EXPECT_TRUE(equal(E->weight, W));
  EXPECT_FALSE(E->weight.is_same(W));
  Tensor Y = (*E)(tensor({2}, std::vector<int64_t>{1}, DType::I64));
  EXPECT_EQ(Y.to_vector<double>(), W.select(0, 2).to_vector<double>());
  auto T = nn::Embedding::from_pretrained(W, /*freeze=*/false);
  EXPECT_TRUE(T->weight.requires_grad());
  EXPECT_EQ(T->state_dict().keys(), (std::vector<std::string>{"weight"}));
}

TEST(LayerEmbeddingTest, Errors) {
  expectError([] { nn::Embedding(5, 2, 5); },
              {"Embedding", "padding_idx (5) must be within num_embeddings"});
  expectError([] { nn::Embedding(5, 2, -6); }, {"padding_idx (-6)"});
  expectError(
      [] { nn::Embedding(5, 2, std::nullopt, std::nullopt, 2.0, true); },
      {"scale_grad_by_freq"});
  expectError(
      [] { nn::Embedding(5, 2, std::nullopt, std::nullopt, 2.0, false, true); },
      {"sparse"});
  auto E = nn::make<nn::Embedding>(5, 2);
  expectError([&] { (*E)(zeros({2})); }, {"Embedding", "integer indices"});
  expectError([&] { (*E)(tensor({7}, std::vector<int64_t>{1}, DType::I64)); },
              {"7", "out of range"});
  // With max_norm, a bad index is refused before any row is renormalized.
  auto N = nn::make<nn::Embedding>(3, 2, std::nullopt, 0.1);
  Tensor Before = N->weight.clone();
  expectError(
      [&] {
        (*N)(tensor({0, 5}, std::vector<int64_t>{2}, DType::I64));
      },
      {"Embedding", "index 5", "num_embeddings=3"});
  EXPECT_TRUE(equal(N->weight, Before));
}
