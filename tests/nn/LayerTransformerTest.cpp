//===- LayerTransformerTest.cpp - MHA and TransformerEncoderLayer ---------===//
//
// Parameter and submodule names and order (state_dict keys equal to
// PyTorch 1.13's), printing, default initialization, forward on known
// values (reference numbers from PyTorch: key padding and float attention
// masks, self-attention with per-head weights, batch_first with separate
// kdim/vdim projections, bias_kv, zero attention and a bool causal mask,
// unbatched inputs; post-norm and norm_first encoder layers), dropout only
// in training, gradients, and the errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Transformer.h"

using namespace nng;
using namespace nng::test;

TEST(LayerTransformerTest, MultiheadAttentionStateMatchesPyTorch) {
  nn::MultiheadAttention M(8, 2);
  EXPECT_EQ(stateSignature(M),
            (std::vector<std::string>{
                "in_proj_weight [24, 8] f32", "in_proj_bias [24] f32",
                "out_proj.weight [8, 8] f32", "out_proj.bias [8] f32"}));
  EXPECT_EQ(M.to_string(), "MultiheadAttention(\n"
                           "  (out_proj): NonDynamicallyQuantizableLinear("
                           "in_features=8, out_features=8, bias=True)\n"
                           ")");
  // Biases start at zero; in_proj_weight is xavier_uniform_ over [24, 8].
  EXPECT_EQ(M.in_proj_bias.to_vector<double>(), std::vector<double>(24, 0.0));
  EXPECT_EQ(M.out_proj->bias.to_vector<double>(), std::vector<double>(8, 0.0));
  double A = std::sqrt(6.0 / 32.0);
  for (double V : M.in_proj_weight.to_vector<double>())
    EXPECT_LE(std::abs(V), A);

  nn::MultiheadAttention S({.embed_dim = 8,
                            .num_heads = 2,
                            .bias = false,
                            .add_bias_kv = true,
                            .kdim = 4,
                            .vdim = 6});
  EXPECT_EQ(stateSignature(S),
            (std::vector<std::string>{
                "q_proj_weight [8, 8] f32", "k_proj_weight [8, 4] f32",
                "v_proj_weight [8, 6] f32", "bias_k [1, 1, 8] f32",
                "bias_v [1, 1, 8] f32", "out_proj.weight [8, 8] f32"}));
  EXPECT_FALSE(S.qkv_same_embed_dim);
}

TEST(LayerTransformerTest, MultiheadAttentionWithMasksMatchesPyTorch) {
  auto M = nn::make<nn::MultiheadAttention>(4, 2);
  fillParams(*M);
  Tensor Q = seq({3, 2, 4}, 0.0), K = seq({5, 2, 4}, 1.0),
         V = seq({5, 2, 4}, 2.0);
  Tensor Kpm = tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
                      std::vector<int64_t>{2, 5}, DType::Bool);
  Tensor Am = tensor({0, -1, 0, 0.5, 0, 0, 0, 0, 0, -2, 1, 0, 0, 0, 0},
                     std::vector<int64_t>{3, 5});
  auto [O, W] = (*M)(Q, K, V, Kpm, true, Am);
  expectValues(O, {3, 2, 4},
               {-0.74771595,  -0.20019716,  -0.581957102,  -0.0222957656,
                -0.306728452, -0.77812928,  0.0661365092,  -0.665660203,
                -0.723403335, -0.224433422, -0.560597777,  -0.0383099541,
                -0.300438046, -0.814858079, 0.129059404,   -0.747506201,
                -0.632381201, -0.333925903, -0.445287347,  -0.146113545,
                -0.458193421, -0.642123699, -0.0386935472, -0.604119301});
  expectValues(
      W, {2, 3, 5},
      {0.174518943, 0.138947695,  0.686533391,  0,           0,
       0.222000539, 0.317166686,  0.460832775,  0,           0,
       0.612273753, 0.194297642,  0.19342865,   0,           0,
       0.122991659, 0.0674206987, 0.239141047,  0.393364698, 0.177081913,
       0.220624059, 0.220352784,  0.240982935,  0.274770558, 0.043269664,
       0.470219612, 0.108067751,  0.0885159299, 0.114094675, 0.219102055});
}

TEST(LayerTransformerTest, SelfAttentionPerHeadWeightsMatchPyTorch) {
  auto M = nn::make<nn::MultiheadAttention>(4, 2);
  fillParams(*M);
  Tensor Q = seq({3, 2, 4}, 0.0);
  auto [O, W] = (*M)(Q, Q, Q, Tensor(), true, Tensor(), false);
  expectValues(O, {3, 2, 4},
               {-0.609654248, -0.476254314, -0.199804321, -0.466384321,
                -0.502434909, -0.500640392, -0.261069477, -0.326547444,
                -0.588737726, -0.489784092, -0.195224732, -0.461484522,
                -0.546900511, -0.466414392, -0.281100869, -0.323025405,
                -0.560761809, -0.502894282, -0.198495299, -0.442211211,
                -0.584905326, -0.440730751, -0.291495442, -0.329121053});
  ASSERT_EQ(W.sizes(), (std::vector<int64_t>{2, 2, 3, 3}));
  std::vector<double> WV = W.to_vector<double>();
  EXPECT_NEAR(WV[0], 0.376553953, 1e-5);
  EXPECT_NEAR(WV[9], 0.159011453, 1e-5);
  EXPECT_NEAR(WV[35], 0.308053851, 1e-5);
  // need_weights=false: no weights.
  auto [O2, W2] = (*M)(Q, Q, Q, Tensor(), false);
  EXPECT_FALSE(W2.defined());
  EXPECT_TRUE(allclose(O2, O, 1e-5, 1e-6));
}

TEST(LayerTransformerTest, BatchFirstSeparateProjectionsMatchPyTorch) {
  auto M = nn::make<nn::MultiheadAttention>(
      nn::MultiheadAttentionOptions{.embed_dim = 4,
                                    .num_heads = 2,
                                    .bias = false,
                                    .add_bias_kv = true,
                                    .add_zero_attn = true,
                                    .kdim = 3,
                                    .vdim = 5,
                                    .batch_first = true});
  fillParams(*M);
  Tensor Q = seq({2, 3, 4}, 0.0), K = seq({2, 2, 3}, 1.0),
         V = seq({2, 2, 5}, 2.0);
  // torch.triu(torch.ones(3, 2, dtype=bool), diagonal=1).
  Tensor Causal =
      tensor({0, 1, 0, 0, 0, 0}, std::vector<int64_t>{3, 2}, DType::Bool);
  auto [O, W] = (*M)(Q, K, V, Tensor(), true, Causal);
  expectValues(O, {2, 3, 4},
               {0.0687494874,  -0.0741199404, 0.0709254444, -0.0595351383,
                0.101484932,   -0.147505313,  0.176480696,  -0.185062796,
                0.0799680948,  -0.112967446,  0.1329128,    -0.137499377,
                0.0271617509,  -0.0429726057, 0.0538177527, -0.0584439673,
                0.00457170606, -0.0310869068, 0.0540098436, -0.07069166,
                0.209752351,   -0.239812672,  0.242161334,  -0.216527015});
  expectValues(W, {2, 3, 4},
               {0.45600614,  0,           0.263093621, 0.2809003,   0.178076059,
                0.338046789, 0.243599534, 0.240277648, 0.279409826, 0.208779007,
                0.255740374, 0.256070852, 0.297624707, 0,           0.347475827,
                0.354899466, 0.313648999, 0.179059744, 0.258683205, 0.248608083,
                0.18992877,  0.385634542, 0.206076741, 0.218359947});
}

TEST(LayerTransformerTest, UnbatchedAttentionMatchesPyTorch) {
  auto M = nn::make<nn::MultiheadAttention>(4, 2);
  fillParams(*M);
  auto [O, W] = (*M)(seq({3, 4}, 0.0), seq({5, 4}, 1.0), seq({5, 4}, 2.0));
  expectValues(O, {3, 4},
               {-0.749853611, -0.273458809, -0.441761822, -0.213224307,
                -0.438251078, -0.610265255, -0.118671268, -0.485264122,
                -0.628049195, -0.399870992, -0.325349569, -0.30618462});
  expectValues(W, {3, 5},
               {0.109269522, 0.181110606, 0.232916087, 0.0752159581,
                0.401487768, 0.26575309, 0.180892617, 0.164852351, 0.276164651,
                0.112337247, 0.147276819, 0.218453705, 0.205761731, 0.139586896,
                0.28892082});
}

TEST(LayerTransformerTest, AttentionErrorsNameShapes) {
  auto M = nn::make<nn::MultiheadAttention>(4, 2);
  Tensor Q = zeros({3, 2, 4});
  expectError(
      [&] {
        (*M)(zeros({3, 2, 5}), Q, Q);
      },
      {"MultiheadAttention", "embed_dim", "[3, 2, 5]"});
  expectError(
      [&] {
        (*M)(Q, Q, Q, Tensor(), true, zeros({3, 4}));
      },
      {"2D attn_mask", "[3, 4]", "[3, 3]"});
  expectError(
      [&] {
        (*M)(Q, Q, Q, zeros({2, 4}, DType::Bool));
      },
      {"key_padding_mask", "[2, 3]", "[2, 4]"});
  expectError(
      [&] {
        (*M)(Q, Q, Q, zeros({2, 3}, DType::I64));
      },
      {"only bool and floating types of key_padding_mask"});
  expectError([&] { (*M)(Q, zeros({3, 4}), Q); }, {"[3, 4]"});
  expectError([] { nn::MultiheadAttention(6, 4); },
              {"embed_dim (6) must be divisible by num_heads (4)"});
}

TEST(LayerTransformerTest, EncoderLayerStateAndReprMatchPyTorch) {
  nn::TransformerEncoderLayer L(8, 2, 16);
  EXPECT_EQ(
      L.state_dict().keys(),
      (std::vector<std::string>{
          "self_attn.in_proj_weight", "self_attn.in_proj_bias",
          "self_attn.out_proj.weight", "self_attn.out_proj.bias",
          "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
          "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
  EXPECT_EQ(L.to_string(),
            "TransformerEncoderLayer(\n"
            "  (self_attn): MultiheadAttention(\n"
            "    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, "
            "out_features=8, bias=True)\n"
            "  )\n"
            "  (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
            "  (dropout): Dropout(p=0.1, inplace=False)\n"
            "  (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
            "  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (dropout1): Dropout(p=0.1, inplace=False)\n"
            "  (dropout2): Dropout(p=0.1, inplace=False)\n"
            ")");
  // Defaults: dim_feedforward 2048.
  nn::TransformerEncoderLayer D({.d_model = 4, .nhead = 1});
  EXPECT_EQ(D.linear1->out_features, 2048);
  EXPECT_THROW(nn::TransformerEncoderLayer(4, 2, 8, 0.1, "tanh"), Error);
}

TEST(LayerTransformerTest, EncoderLayerForwardMatchesPyTorch) {
  auto L = nn::make<nn::TransformerEncoderLayer>(4, 2, 6, 0.0);
  fillParams(*L, 0.3);
  expectValues((*L)(seq({3, 2, 4}, 0.0)), {3, 2, 4},
               {-0.419652194, -0.197771683, 0.290595323, 0.219854459,
                -0.609761536, 0.0703194439, 0.287682593, 0.293169618,
                -0.429448903, -0.210728988, 0.275553107, 0.160018653,
                -0.549715877, 0.0901227295, 0.294558585, 0.358052462,
                -0.437747061, -0.204849228, 0.267419934, 0.134741262,
                -0.489926964, 0.0960581675, 0.29739216,  0.401130706});
  auto N = nn::make<nn::TransformerEncoderLayer>(
      nn::TransformerEncoderLayerOptions{.d_model = 4,
                                         .nhead = 2,
                                         .dim_feedforward = 6,
                                         .dropout = 0.0,
                                         .activation = "gelu",
                                         .batch_first = true,
                                         .norm_first = true});
  fillParams(*N, 0.3);
  Tensor Kpm =
      tensor({0, 0, 1, 0, 0, 0}, std::vector<int64_t>{2, 3}, DType::Bool);
  expectValues((*N)(seq({2, 3, 4}, 0.0), Tensor(), Kpm), {2, 3, 4},
               {0.111481428,  0.556294441,   0.762590885,  0.491496444,
                0.461068749,  -0.464099109,  -1.08448851,  -1.33825719,
                -0.523645282, -0.0677294433, 0.434635192,  0.612603486,
                0.976968646,  0.213020086,   -0.588478446, -1.22767329,
                -0.879065752, -0.695073009,  -0.194388956, 0.298045695,
                1.11246502,   0.741891026,   0.0794718117, -0.730664313});
}

TEST(LayerTransformerTest, DropoutOnlyInTraining) {
  manual_seed(5);
  auto L = nn::make<nn::TransformerEncoderLayer>(4, 2, 8, 0.5);
  Tensor X = seq({3, 2, 4}, 0.0);
  Tensor A = (*L)(X), B = (*L)(X);
  EXPECT_FALSE(allclose(A, B));
  L->eval();
  EXPECT_FALSE(L->self_attn->is_training());
  EXPECT_TRUE(allclose((*L)(X), (*L)(X)));
}

TEST(LayerTransformerTest, Gradients) {
  auto M = nn::make<nn::MultiheadAttention>(4, 2);
  fillParams(*M);
  M->to(DType::F64);
  Tensor Q = seq({2, 1, 4}, 0.0, 1.0, DType::F64);
  Tensor K = seq({3, 1, 4}, 1.0, 1.0, DType::F64);
  Tensor Am =
      tensor({0, -1, 0, 0.5, 0, 0}, std::vector<int64_t>{2, 3}, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) {
        return std::get<0>((*M)(In[0], In[1], In[1], Tensor(), true, Am));
      },
      {Q.clone().requires_grad_(), K.clone().requires_grad_()});
  checkParameterGradients(
      *M, [&] { return std::get<0>((*M)(Q, K, K, Tensor(), true, Am)); }, 8);

  auto L = nn::make<nn::TransformerEncoderLayer>(4, 2, 6, 0.0);
  fillParams(*L, 0.3);
  L->to(DType::F64);
  Tensor X = seq({2, 1, 4}, 0.2, 1.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*L)(In[0]); },
      {X.clone().requires_grad_()});
  checkParameterGradients(
      *L, [&] { return (*L)(X); }, 6);
}
