//===- TorchInitTest.cpp - Default layer initialization vs PyTorch --------===//
//
// Every layer's default initialization follows PyTorch's scheme: the same
// large layer is built in C++ and in PyTorch (seeded; the random streams
// differ, so the values do not) and the statistics of each state_dict
// entry are compared through TorchOracle.h. Constant entries (norm weights
// and biases, running statistics, zeroed attention biases) must be equal
// exactly; random ones must have the same spread (std within 10%), the
// same centre, and the same distribution family: a uniform init must hit
// the same bound (max |x| within 5%), a normal one must have normal tails.
// Layers are large enough (1e3 to 1e6 values) for these to be tight.
// SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Transformer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::test;

namespace {

/// Compares the statistics of M's state_dict entries with PyTorch's.
void expectSameInit(const std::string &What, const nn::ModuleBase &M,
                    const TorchReport &R) {
  ASSERT_EQ(R.Error, "") << What;
  EXPECT_EQ(compareKeys(M.state_dict().keys(), R.Keys), "") << What;
  for (const auto &[Key, T] : M.state_dict()) {
    if (!R.InitStats.count(Key))
      continue; // Reported by the key comparison.
    const TorchReport::Stats &W = R.InitStats.at(Key);
    TorchReport::Stats G = tensorStats(T);
    std::string Where = What + " " + Key;
    ASSERT_EQ(G.Numel, W.Numel) << Where;
    if (W.Std == 0) {
      EXPECT_EQ(G.Min, W.Min) << Where << ": PyTorch fills it with " << W.Min;
      EXPECT_EQ(G.Max, W.Max) << Where << ": PyTorch fills it with " << W.Max;
      continue;
    }
    EXPECT_NEAR(G.Std, W.Std, 0.1 * W.Std) << Where << ": std";
    EXPECT_NEAR(G.Mean, W.Mean, 6 * W.Std / std::sqrt(double(W.Numel)))
        << Where << ": mean";
    double TorchAbsMax = std::max(std::fabs(W.Min), std::fabs(W.Max));
    double CppAbsMax = std::max(std::fabs(G.Min), std::fabs(G.Max));
    if (TorchAbsMax / W.Std < 2.0) // Uniform: max |x| = sqrt(3) std.
      EXPECT_NEAR(CppAbsMax, TorchAbsMax, 0.05 * TorchAbsMax)
          << Where << ": the uniform bound";
    else
      EXPECT_GT(CppAbsMax / G.Std, 2.5)
          << Where << ": PyTorch's values have normal tails (max |x| = "
          << TorchAbsMax / W.Std << " std), C++'s do not";
  }
}

struct Layer {
  std::string Torch;
  nn::ModulePtr Module;
};

} // namespace

TEST(TorchInit, DefaultInitializationFollowsPyTorch) {
  manual_seed(31);
  std::vector<Layer> Layers = {
      {"nn.Linear(400, 1000)", nn::make<nn::Linear>(400, 1000)},
      {"nn.Linear(3, 2000)", nn::make<nn::Linear>(3, 2000)},
      {"nn.Conv1d(16, 512, 5)", nn::make<nn::Conv1d>(16, 512, 5)},
      {"nn.Conv2d(16, 512, 3)", nn::make<nn::Conv2d>(16, 512, 3)},
      {"nn.Conv2d(64, 1024, 3, groups=8)",
       nn::make<nn::Conv2d>(64, 1024, 3, 1, 0, 1, 8)},
      {"nn.ConvTranspose2d(8, 512, 3)",
       nn::make<nn::ConvTranspose2d>(8, 512, 3)},
      {"nn.ConvTranspose2d(16, 1024, 3, groups=4)",
       nn::make<nn::ConvTranspose2d>(16, 1024, 3, 1, 0, 0, 4)},
      {"nn.BatchNorm1d(64)", nn::make<nn::BatchNorm1d>(64)},
      {"nn.BatchNorm2d(64)", nn::make<nn::BatchNorm2d>(64)},
      {"nn.LayerNorm(64)", nn::make<nn::LayerNorm>(64)},
      {"nn.GroupNorm(4, 64)", nn::make<nn::GroupNorm>(4, 64)},
      {"nn.Embedding(1000, 64)", nn::make<nn::Embedding>(1000, 64)},
      {"nn.Embedding(1000, 64, padding_idx=3)",
       nn::make<nn::Embedding>(1000, 64, 3)},
      {"nn.MultiheadAttention(256, 4)",
       nn::make<nn::MultiheadAttention>(256, 4)},
      {"nn.MultiheadAttention(1024, 8, add_bias_kv=True, kdim=512, vdim=768)",
       nn::make<nn::MultiheadAttention>(1024, 8, 0.0, true, true, false, 512,
                                        768)},
      {"nn.TransformerEncoderLayer(256, 4, 1024)",
       nn::make<nn::TransformerEncoderLayer>(256, 4, 1024)},
  };
  TorchOracle O;
  std::vector<size_t> Idx;
  for (const Layer &L : Layers)
    Idx.push_back(O.initStats(L.Torch, L.Torch));
  NNG_RUN_TORCH_ORACLE(O);
  for (size_t I = 0; I < Layers.size(); ++I)
    expectSameInit(Layers[I].Torch, *Layers[I].Module, O.report(Idx[I]));
}

TEST(TorchInit, EmbeddingPaddingRowIsZero) {
  manual_seed(32);
  auto E = nn::make<nn::Embedding>(20, 8, 5);
  Tensor Row = E->weight.select(0, 5);
  EXPECT_EQ(max(abs(Row)).item<double>(), 0.0);
  EXPECT_GT(max(abs(E->weight.select(0, 4))).item<double>(), 0.0);
}
