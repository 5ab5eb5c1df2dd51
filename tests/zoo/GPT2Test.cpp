//===- GPT2Test.cpp - The GPT-2 decoder: names, cache, PyTorch ------------===//
//
// The zoo's GPT-2 (zoo/GPT2.h) in eager mode, on the tiny default config
// (vocabulary 128, width 32, 2 layers, 4 heads):
//  - its state_dict keys, in order, and shapes are GPT2LMHeadModel's
//    (Conv1D weights [in, out]); lm_head.weight is wte's tensor;
//  - decoding with the key/value cache equals running the whole sequence
//    at once (the cache and the causal mask agree), and bad caches are
//    errors that say what is wrong;
//  - against PyTorch (Debian's torch 1.13; gpt2_reference.py builds the
//    same architecture in plain torch and loads the C++ state dict from a
//    .pt file strictly): greedy decoding of 5 steps from a prompt gives the
//    same tokens, and every step's logits agree within 1e-4. SKIPPED when
//    no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "ZooReference.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/GPT2.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>

using namespace nng;
using namespace nng::test;
namespace fs = std::filesystem;

namespace {

/// A tiny GPT-2 with weights large enough that the logits are O(1) and
/// greedy choices are clear (not the near-uniform output of GPT-2's 0.02
/// init), and random layer-norm parameters.
std::shared_ptr<zoo::GPT2LMHeadModel> tinyModel() {
  manual_seed(31);
  auto M = zoo::gpt2_tiny();
  NoGradGuard G;
  for (const auto &[Key, P] : M->named_parameters())
    Tensor(P).copy_(randn(P.sizes()) * 0.3);
  M->eval();
  return M;
}

/// Greedy decoding with the cache: step 0 runs Prompt, each later step
/// the previous token. Returns the tokens [N, Steps]; Logits gets every
/// step's logits.
Tensor greedy(zoo::GPT2LMHeadModel &M, const Tensor &Prompt, int Steps,
              std::vector<Tensor> &Logits) {
  NoGradGuard G;
  std::vector<Tensor> Past;
  Tensor Ids = Prompt;
  std::vector<Tensor> Tokens;
  for (int S = 0; S < Steps; ++S) {
    auto [L, Presents] = M(Ids, Past);
    Logits.push_back(L);
    Ids = argmax(select(L, 1, L.size(1) - 1), -1, /*KeepDim=*/true);
    Tokens.push_back(Ids);
    Past = std::move(Presents);
  }
  return cat(Tokens, 1);
}

TEST(GPT2, StateDictKeysAndShapesAreGPT2s) {
  auto M = zoo::gpt2_tiny();
  std::vector<std::string> Want = {"transformer.wte.weight",
                                   "transformer.wpe.weight"};
  for (int L = 0; L < 2; ++L)
    for (const char *K :
         {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
          "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
          "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
          "mlp.c_proj.bias"})
      Want.push_back("transformer.h." + std::to_string(L) + "." + K);
  for (const char *K :
       {"transformer.ln_f.weight", "transformer.ln_f.bias", "lm_head.weight"})
    Want.push_back(K);
  nn::StateDict SD = M->state_dict();
  EXPECT_EQ(SD.keys(), Want);
  auto Dims = [&](const std::string &K) { return SD.at(K).shape().dims(); };
  using V = std::vector<int64_t>;
  EXPECT_EQ(Dims("transformer.wte.weight"), (V{128, 32}));
  EXPECT_EQ(Dims("transformer.wpe.weight"), (V{64, 32}));
  EXPECT_EQ(Dims("transformer.h.1.attn.c_attn.weight"), (V{32, 96}));
  EXPECT_EQ(Dims("transformer.h.1.attn.c_attn.bias"), (V{96}));
  EXPECT_EQ(Dims("transformer.h.1.attn.c_proj.weight"), (V{32, 32}));
  EXPECT_EQ(Dims("transformer.h.1.mlp.c_fc.weight"), (V{32, 128}));
  EXPECT_EQ(Dims("transformer.h.1.mlp.c_proj.weight"), (V{128, 32}));
  EXPECT_EQ(Dims("lm_head.weight"), (V{128, 32}));
  // Tied: one tensor, counted once among the parameters.
  EXPECT_EQ(M->lm_head->weight.impl(), M->transformer->wte->weight.impl());
  EXPECT_EQ(M->named_parameters().size(), Want.size() - 1);
  // V E + n_positions E + L (12 E^2 + 13 E) + 2 E, the head not again.
  EXPECT_EQ(M->num_parameters(),
            128 * 32 + 64 * 32 + 2 * (12 * 32 * 32 + 13 * 32) + 64);
  zoo::GPT2Config Small = zoo::GPT2Config::gpt2_small();
  EXPECT_EQ(Small.vocab_size, 50257);
  EXPECT_EQ(Small.n_embd, 768);
  EXPECT_NE(M->to_string().find("(c_attn): Conv1D(nf=96, nx=32)"),
            std::string::npos)
      << M->to_string();
}

TEST(GPT2, CachedDecodingEqualsTheWholeSequence) {
  auto M = tinyModel();
  manual_seed(5);
  Tensor Prompt = randint(0, 128, {2, 6});
  std::vector<Tensor> Logits;
  Tensor Tokens = greedy(*M, Prompt, 4, Logits);
  ASSERT_EQ(Tokens.shape().dims(), (std::vector<int64_t>{2, 4}));
  // The whole sequence at once (no cache): the logits at each position
  // equal the cached steps'.
  NoGradGuard G;
  Tensor All = cat({Prompt, slice(Tokens, 1, 0, 3)}, 1); // [2, 9]
  auto [Full, Presents] = (*M)(All);
  ASSERT_EQ(Presents.size(), 4u);
  EXPECT_EQ(Presents[0].shape().dims(), (std::vector<int64_t>{2, 4, 9, 8}));
  EXPECT_LE(maxAbsDiff(slice(Full, 1, 0, 6), Logits[0]), 1e-5);
  for (int S = 1; S < 4; ++S)
    EXPECT_LE(maxAbsDiff(slice(Full, 1, 5 + S, 6 + S), Logits[S]), 1e-5)
        << "step " << S;
  // A prefill of the prompt's first half, then the second half as one
  // chunk over the cache (T > 1 with P > 0: the mask's offset).
  auto [L1, P1] = (*M)(slice(Prompt, 1, 0, 3));
  auto [L2, P2] = (*M)(slice(Prompt, 1, 3, 6), P1);
  EXPECT_LE(maxAbsDiff(L2, slice(Logits[0], 1, 3, 6)), 1e-5);
  EXPECT_LE(maxAbsDiff(P2[3], Presents[3].slice(2, 0, 6)), 1e-5);
}

TEST(GPT2, BadInputsAreErrors) {
  auto M = zoo::gpt2_tiny();
  NoGradGuard G;
  Tensor Ids = zeros({1, 3}, DType::I64);
  auto Message = [&](auto &&Fn) -> std::string {
    try {
      Fn();
    } catch (const Error &E) {
      return E.what();
    }
    return "no error";
  };
  std::string A = Message([&] {
    (*M)(Ids, std::vector<Tensor>{zeros({1, 4, 2, 8})});
  });
  EXPECT_NE(A.find("past must be empty or hold 4 tensors"), std::string::npos)
      << A;
  std::vector<Tensor> Bad(4, zeros({1, 4, 2, 8}));
  Bad[3] = zeros({1, 4, 2, 7});
  std::string B = Message([&] { (*M)(Ids, Bad); });
  EXPECT_NE(B.find("past[3] (the value of layer 1)"), std::string::npos) << B;
  std::string C = Message([&] { (*M)(zeros({1, 70}, DType::I64)); });
  EXPECT_NE(C.find("exceed n_positions (64)"), std::string::npos) << C;
  std::string D = Message([&] { (*M)(zeros({1, 3})); });
  EXPECT_NE(D.find("input_ids must be integer token ids"), std::string::npos)
      << D;
  EXPECT_THROW(zoo::GPT2LMHeadModel({.n_embd = 30, .n_head = 4}), Error);
}

TEST(GPT2, GreedyDecodingMatchesTorch) {
  auto M = tinyModel();
  manual_seed(6);
  Tensor Prompt = randint(0, 128, {2, 5});
  constexpr int Steps = 5;
  std::vector<Tensor> Logits;
  Tensor Tokens = greedy(*M, Prompt, Steps, Logits);

  std::string Dir = zooTempDir("gpt2");
  weights::saveWeights(*M, (fs::path(Dir) / "state.pt").string());
  const zoo::GPT2Config &C = M->config;
  nlohmann::json Cfg = {{"vocab_size", C.vocab_size},
                        {"n_positions", C.n_positions},
                        {"n_embd", C.n_embd},
                        {"n_layer", C.n_layer},
                        {"n_head", C.n_head},
                        {"layer_norm_epsilon", C.layer_norm_epsilon},
                        {"steps", Steps},
                        {"prompt", writeRaw(Dir, "prompt.bin", Prompt)}};
  std::ofstream(fs::path(Dir) / "config.json") << Cfg.dump();
  std::string R = runTorchScript("gpt2_reference.py", {Dir}, "torch");
  if (R.rfind("SKIP:", 0) == 0)
    GTEST_SKIP() << "SKIPPED: " << R.substr(6);
  ASSERT_TRUE(R.empty()) << R;

  std::ifstream IS(fs::path(Dir) / "torch.json");
  nlohmann::json Out = nlohmann::json::parse(IS);
  std::vector<std::vector<int64_t>> TorchTokens = Out.at("tokens");
  std::vector<double> Mine = Tokens.data().toDoubleVector();
  for (int64_t N = 0; N < 2; ++N)
    for (int S = 0; S < Steps; ++S)
      EXPECT_EQ(static_cast<int64_t>(Mine[N * Steps + S]), TorchTokens[N][S])
          << "batch item " << N << ", step " << S;
  double Worst = 0;
  for (int S = 0; S < Steps; ++S) {
    Tensor Want = readRaw(Dir, Out.at("logits").at(S));
    double D = maxAbsDiff(Logits[S], Want);
    Worst = std::max(Worst, D);
    EXPECT_LE(D, 1e-4) << "step " << S << ": logits differ from torch's";
  }
  std::cout << "[ GPT2 ] " << Out.at("torch").get<std::string>() << ", "
            << Steps << " greedy steps: same tokens; max |C++ - torch| "
            << "logits " << Worst << "\n";
  if (!::testing::Test::HasFailure())
    fs::remove_all(Dir);
}

} // namespace
