//===- LayerNormTest.cpp - BatchNorm1d/2d, LayerNorm, GroupNorm -----------===//
//
// Parameters and buffers (names, shapes, dtypes, defaults; absent when not
// affine / not tracked), extra_repr, the train/eval behaviour of batch
// norm (running statistics updated only in training, with momentum or a
// cumulative average, eval using them, batch statistics without
// tracking), forward on known values (reference numbers from PyTorch),
// gradients, and the errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/nn/Norm.h"

using namespace nng;
using namespace nng::test;

TEST(LayerNormTest, BatchNormStateMatchesPyTorch) {
  nn::BatchNorm1d B(16);
  EXPECT_EQ(stateSignature(B),
            (std::vector<std::string>{
                "weight [16] f32", "bias [16] f32", "running_mean [16] f32",
                "running_var [16] f32", "num_batches_tracked [] i64"}));
  EXPECT_EQ(B.weight.to_vector<double>(), std::vector<double>(16, 1.0));
  EXPECT_EQ(B.bias.to_vector<double>(), std::vector<double>(16, 0.0));
  EXPECT_EQ(B.running_mean.to_vector<double>(), std::vector<double>(16, 0.0));
  EXPECT_EQ(B.running_var.to_vector<double>(), std::vector<double>(16, 1.0));
  EXPECT_EQ(B.num_batches_tracked.item<int64_t>(), 0);
  EXPECT_EQ(B.parameters().size(), 2u);
  EXPECT_EQ(B.buffers().size(), 3u);

  nn::BatchNorm2d NoAffine(8, 1e-3, std::nullopt, false);
  EXPECT_EQ(
      stateSignature(NoAffine),
      (std::vector<std::string>{"running_mean [8] f32", "running_var [8] f32",
                                "num_batches_tracked [] i64"}));
  nn::BatchNorm2d NoStats(8, 1e-5, 0.1, true, false);
  EXPECT_EQ(stateSignature(NoStats),
            (std::vector<std::string>{"weight [8] f32", "bias [8] f32"}));
  EXPECT_FALSE(NoStats.running_mean.defined());
  // to(f64) keeps num_batches_tracked integral.
  B.to(DType::F64);
  EXPECT_EQ(B.running_mean.dtype(), DType::F64);
  EXPECT_EQ(B.num_batches_tracked.dtype(), DType::I64);
}

TEST(LayerNormTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::BatchNorm1d(16).to_string(),
            "BatchNorm1d(16, eps=1e-05, momentum=0.1, affine=True, "
            "track_running_stats=True)");
  EXPECT_EQ(nn::BatchNorm2d(8, 1e-3, std::nullopt, false).extra_repr(),
            "8, eps=0.001, momentum=None, affine=False, "
            "track_running_stats=True");
  EXPECT_EQ(nn::BatchNorm2d({.num_features = 8, .track_running_stats = false})
                .extra_repr(),
            "8, eps=1e-05, momentum=0.1, affine=True, "
            "track_running_stats=False");
  EXPECT_EQ(nn::LayerNorm(512).to_string(),
            "LayerNorm((512,), eps=1e-05, elementwise_affine=True)");
  EXPECT_EQ(nn::LayerNorm({16, 16}, 1e-6, false).extra_repr(),
            "(16, 16), eps=1e-06, elementwise_affine=False");
  EXPECT_EQ(nn::GroupNorm(4, 16).to_string(),
            "GroupNorm(4, 16, eps=1e-05, affine=True)");
}

TEST(LayerNormTest, BatchNorm2dTrainThenEvalMatchesPyTorch) {
  auto B = nn::make<nn::BatchNorm2d>(2);
  fillParams(*B);
  Tensor X = seq({3, 2, 2, 2}, 0.0, 2.0);
  expectValues((*B)(X), {3, 2, 2, 2},
               {0.313952565,  0.72759968,    0.946702123,   0.868212521,
                0.46729067,   -0.0290388837, -0.405964404,  -0.486211956,
                -0.091378808, 0.324748635,   0.735798538,   0.948447645,
                0.843360841,  0.455790371,   -0.0403988473, -0.411841303,
                -0.314769775, -0.0829484388, 0.335541666,   0.743878067,
                0.941797495,  0.836954176,   0.444224805,   -0.0516838171});
  expectValues(B->running_mean, {2}, {0.0438242815, -0.003081667});
  expectValues(B->running_var, {2}, {1.08735681, 1.10480213});
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 1);
  B->eval();
  expectValues((*B)(X), {3, 2, 2, 2},
               {0.436966509,   0.956823289,   1.23218334,   1.13354051,
                0.531189501,   -0.115804158,  -0.607147932, -0.711755097,
                -0.0724393651, 0.450534612,   0.967127323,  1.23437715,
                1.02141833,    0.516198218,   -0.130612522, -0.614808738,
                -0.353189081,  -0.0618443824, 0.464098901,  0.977281392,
                1.14973605,    1.01306677,    0.501121819,  -0.145323113});
  // Eval leaves the running statistics and the count alone.
  expectValues(B->running_mean, {2}, {0.0438242815, -0.003081667});
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 1);
}

TEST(LayerNormTest, BatchNormCumulativeAverageMatchesPyTorch) {
  // momentum=None: the running statistics are the plain average of the
  // batch statistics (factor 1 / num_batches_tracked).
  auto B = nn::make<nn::BatchNorm1d>(3, 1e-5, std::nullopt, false);
  (*B)(seq({4, 3}, 0.0));
  (*B)(seq({4, 3}, 1.0));
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 2);
  expectValues(B->running_mean, {3}, {0.107310131, 0.206128538, 0.208001465});
  expectValues(B->running_var, {3}, {0.589656234, 0.674327791, 0.676448226});
}

TEST(LayerNormTest, BatchNormWithoutTrackingUsesBatchStatsInEval) {
  auto B = nn::make<nn::BatchNorm1d>(3, 1e-5, 0.1, false, false);
  Tensor X = seq({5, 3, 2}, 0.3, 2.0);
  Tensor Train = (*B)(X);
  B->eval();
  Tensor Eval = (*B)(X);
  EXPECT_TRUE(allclose(Train, Eval, 1e-5, 1e-6));
  // Per channel: mean 0 and biased variance 1.
  Tensor M = mean(Eval, {0, 2});
  for (double V : M.to_vector<double>())
    EXPECT_NEAR(V, 0.0, 1e-5);
}

TEST(LayerNormTest, BatchNormResetAndErrors) {
  auto B = nn::make<nn::BatchNorm1d>(4);
  (*B)(seq({3, 4}, 0.0));
  B->reset_running_stats();
  EXPECT_EQ(B->running_mean.to_vector<double>(), std::vector<double>(4, 0.0));
  EXPECT_EQ(B->running_var.to_vector<double>(), std::vector<double>(4, 1.0));
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 0);

  expectError(
      [&] {
        (*B)(zeros({2, 4, 3, 3}));
      },
      {"BatchNorm1d", "expected 2D or 3D input", "[2, 4, 3, 3]"});
  expectError(
      [&] {
        (*B)(zeros({2, 5}));
      },
      {"BatchNorm1d", "4 channels", "[2, 5]"});
  // One value per channel in training: refused before any state changes.
  expectError(
      [&] {
        (*B)(zeros({1, 4}));
      },
      {"more than 1 value per channel", "[1, 4]"});
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 0);
  // An input F::batch_norm refuses (integers) changes no state either.
  EXPECT_THROW((*B)(zeros({3, 4}, DType::I64)), Error);
  EXPECT_EQ(B->num_batches_tracked.item<int64_t>(), 0);
  EXPECT_EQ(B->running_mean.to_vector<double>(), std::vector<double>(4, 0.0));
  auto B2 = nn::make<nn::BatchNorm2d>(4);
  expectError(
      [&] {
        (*B2)(zeros({2, 4, 3}));
      },
      {"BatchNorm2d", "expected 4D input", "[2, 4, 3]"});
}

TEST(LayerNormTest, LayerNormAndGroupNormMatchPyTorch) {
  auto L = nn::make<nn::LayerNorm>(nn::IntOrTuple{2, 3});
  EXPECT_EQ(stateSignature(*L),
            (std::vector<std::string>{"weight [2, 3] f32", "bias [2, 3] f32"}));
  fillParams(*L);
  expectValues((*L)(seq({2, 2, 3}, 0.0, 2.0)), {2, 2, 3},
               {0.0876258835, 0.456093073, 0.280849814, -0.389354378,
                -0.447752774, 0.435868591, 0.0453363322, -0.341511399,
                -0.348814487, -0.40489608, -0.81996268, -1.08146012});
  auto G = nn::make<nn::GroupNorm>(2, 4);
  fillParams(*G);
  expectValues((*G)(seq({2, 4, 3}, 0.0, 2.0)), {2, 4, 3},
               {0.087625891,  0.660338342,   0.963695228,  0.685526907,
                0.132118642,  -0.586352229,  -0.456332624, -0.505940735,
                -0.348814487, -0.40489608,   -0.387264222, -0.378142685,
                1.17644143,   0.835262895,   0.398467153,  -0.237863198,
                -0.312558264, -0.0414744094, -0.39338991,  0.0552968793,
                0.281802207,  -0.390217394,  -0.413784951, -0.443544298});
  nn::LayerNorm NoAffine(4, 1e-5, false);
  EXPECT_TRUE(NoAffine.state_dict().empty());
  nn::GroupNorm GNoAffine(2, 4, 1e-5, false);
  EXPECT_TRUE(GNoAffine.state_dict().empty());
}

TEST(LayerNormTest, NormErrors) {
  auto L = nn::make<nn::LayerNorm>(4);
  expectError([&] { (*L)(zeros({2, 5})); }, {"LayerNorm", "[2, 5]", "(4,)"});
  expectError([] { nn::GroupNorm(3, 4); },
              {"GroupNorm", "num_channels (4) must be divisible by num_groups "
                            "(3)"});
  auto G = nn::make<nn::GroupNorm>(2, 4);
  expectError([&] { (*G)(zeros({2, 6, 3})); }, {"GroupNorm", "[2, 6, 3]"});
}

TEST(LayerNormTest, Gradients) {
  auto B = nn::make<nn::BatchNorm2d>(2);
  fillParams(*B);
  B->to(DType::F64);
  Tensor X = seq({3, 2, 2, 2}, 0.1, 2.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*B)(In[0]); },
      {X.clone().requires_grad_()});
  checkParameterGradients(*B, [&] { return (*B)(X); });
  B->eval();
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*B)(In[0]); },
      {X.clone().requires_grad_()});

  auto L = nn::make<nn::LayerNorm>(3);
  fillParams(*L);
  L->to(DType::F64);
  Tensor Y = seq({2, 3}, 0.7, 2.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*L)(In[0]); },
      {Y.clone().requires_grad_()});
  checkParameterGradients(*L, [&] { return (*L)(Y); });

  auto G = nn::make<nn::GroupNorm>(2, 4);
  fillParams(*G);
  G->to(DType::F64);
  Tensor Z = seq({2, 4, 2}, 0.2, 2.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*G)(In[0]); },
      {Z.clone().requires_grad_()});
  checkParameterGradients(*G, [&] { return (*G)(Z); });
}
