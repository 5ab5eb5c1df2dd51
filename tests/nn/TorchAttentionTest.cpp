//===- TorchAttentionTest.cpp - Attention layers against PyTorch ----------===//
//
// nn::MultiheadAttention (batch_first or not, self- and cross-attention,
// separate kdim/vdim projections, bias off, add_bias_kv / add_zero_attn,
// bool and float attention masks, key padding masks, need_weights with
// averaged or per-head weights) and nn::TransformerEncoderLayer (relu and
// gelu, norm_first or not, batch_first or not, masks; train mode with
// dropout 0 and eval mode with the default dropout) against torch.nn
// through TorchOracle.h: outputs (and attention weights), input gradients,
// parameter gradients, state_dict keys and print(module) must agree.
// Inputs require grad, so PyTorch takes its general (not the fused
// inference) path. SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Transformer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::test;

namespace {

/// Masks of MultiheadAttention cases (undefined: none).
struct Masks {
  Tensor KeyPadding;
  Tensor Attn;
};

/// A MultiheadAttention case: x = [q, k, v, (key_padding_mask),
/// (attn_mask)]; SelfAttn passes q as key and value.
OracleCase mha(const std::string &Torch,
               std::shared_ptr<nn::MultiheadAttention> M,
               std::vector<Tensor> QKV, Masks Mk, bool NeedWeights = true,
               bool Average = true, bool SelfAttn = false) {
  OracleCase C;
  C.Module = M;
  C.TorchModule = Torch;
  C.Inputs = QKV;
  int KP = -1, AM = -1;
  if (Mk.KeyPadding.defined()) {
    KP = static_cast<int>(C.Inputs.size());
    C.Inputs.push_back(Mk.KeyPadding);
  }
  if (Mk.Attn.defined()) {
    AM = static_cast<int>(C.Inputs.size());
    C.Inputs.push_back(Mk.Attn);
  }
  for (size_t I = 0; I < C.Inputs.size(); ++I)
    C.InputRequiresGrad.push_back(I < QKV.size());
  auto Py = [](int I) {
    return I < 0 ? std::string("None") : "x[" + std::to_string(I) + "]";
  };
  std::string Args = SelfAttn ? "x[0], x[0], x[0]" : "x[0], x[1], x[2]";
  C.TorchCall = "m(" + Args + ", key_padding_mask=" + Py(KP) +
                ", need_weights=" + (NeedWeights ? "True" : "False") +
                ", attn_mask=" + Py(AM) + ", average_attn_weights=" +
                (Average ? "True" : "False") + ")";
  C.Name = Torch + " " + C.TorchCall;
  C.Forward = [M, KP, AM, NeedWeights, Average,
               SelfAttn](const std::vector<Tensor> &X) {
    const Tensor &K = SelfAttn ? X[0] : X[1], &V = SelfAttn ? X[0] : X[2];
    auto [Out, W] = (*M)(X[0], K, V, KP < 0 ? Tensor() : X[KP], NeedWeights,
                         AM < 0 ? Tensor() : X[AM], Average);
    return std::vector<Tensor>{Out, W};
  };
  return C;
}

/// A causal mask [L, L]: bool (true = not allowed) or float (-inf).
Tensor causal(int64_t L, bool Bool) {
  Tensor Upper = triu(ones({L, L}), 1) > 0.5;
  if (Bool)
    return Upper;
  return masked_fill(zeros({L, L}), Upper, -INFINITY);
}

/// A key padding mask [N, S]: the last Pad keys of batch entry 1 ignored.
Tensor keyPadding(int64_t N, int64_t S, int64_t Pad) {
  std::vector<double> V(static_cast<size_t>(N * S), 0.0);
  for (int64_t J = S - Pad; J < S; ++J)
    V[static_cast<size_t>(S + J)] = 1.0;
  return tensor(V, std::vector<int64_t>{N, S}) > 0.5;
}

} // namespace

TEST(TorchAttention, MultiheadAttention) {
  manual_seed(21);
  TorchOracle O;
  const int64_t E = 8, L = 4, S = 5, N = 2;
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})}, {}));
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2), {randn({L, N, E})}, {},
            true, true, /*SelfAttn=*/true));
  O.add(mha("nn.MultiheadAttention(8, 4, batch_first=True)",
            nn::make<nn::MultiheadAttention>(E, 4, 0.0, true, false, false,
                                             std::nullopt, std::nullopt, true),
            {randn({N, L, E}), randn({N, S, E}), randn({N, S, E})},
            {keyPadding(N, S, 2), Tensor()}));
  O.add(mha("nn.MultiheadAttention(8, 2, batch_first=True)",
            nn::make<nn::MultiheadAttention>(E, 2, 0.0, true, false, false,
                                             std::nullopt, std::nullopt, true),
            {randn({N, L, E})}, {keyPadding(N, L, 1), causal(L, true)}, true,
            false, true));
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2), {randn({L, N, E})},
            {Tensor(), causal(L, false)}, false, true, true));
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})},
            {Tensor(), randn({L, S})}, true, false));
  // A per-batch-and-head 3-d mask [N * heads, L, S].
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})},
            {Tensor(), randn({N * 2, L, S})}));
  O.add(mha("nn.MultiheadAttention(8, 2, kdim=3, vdim=5)",
            nn::make<nn::MultiheadAttention>(E, 2, 0.0, true, false, false, 3,
                                             5),
            {randn({L, N, E}), randn({S, N, 3}), randn({S, N, 5})}, {}));
  O.add(mha("nn.MultiheadAttention(8, 2, bias=False)",
            nn::make<nn::MultiheadAttention>(E, 2, 0.0, false),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})}, {}));
  O.add(mha("nn.MultiheadAttention(8, 2, add_bias_kv=True, "
            "add_zero_attn=True)",
            nn::make<nn::MultiheadAttention>(E, 2, 0.0, true, true, true),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})},
            {keyPadding(N, S, 1), Tensor()}));
  // Unbatched [L, E] inputs.
  O.add(mha("nn.MultiheadAttention(8, 2)",
            nn::make<nn::MultiheadAttention>(E, 2),
            {randn({L, E}), randn({S, E}), randn({S, E})}, {}));
  // Dropout 0.5 in eval mode is the identity.
  O.add(mha("nn.MultiheadAttention(8, 2, dropout=0.5)",
            nn::make<nn::MultiheadAttention>(E, 2, 0.5),
            {randn({L, N, E}), randn({S, N, E}), randn({S, N, E})}, {}));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchAttention, MultiheadAttentionTrainModeWithoutDropout) {
  manual_seed(22);
  TorchOracle O;
  OracleCase C = mha("nn.MultiheadAttention(8, 2, batch_first=True)",
                     nn::make<nn::MultiheadAttention>(
                         8, 2, 0.0, true, false, false, std::nullopt,
                         std::nullopt, true),
                     {randn({2, 3, 8})}, {keyPadding(2, 3, 1), Tensor()}, true,
                     true, true);
  C.Train = true;
  O.add(std::move(C));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchAttention, TransformerEncoderLayer) {
  manual_seed(23);
  TorchOracle O;
  const int64_t D = 8, L = 5, N = 2;
  for (const char *Act : {"relu", "gelu"})
    for (bool NormFirst : {false, true})
      for (bool BatchFirst : {false, true})
        for (bool Train : {false, true}) {
          // Train mode runs with dropout 0; eval mode with the default 0.1.
          double P = Train ? 0.0 : 0.1;
          auto M = nn::make<nn::TransformerEncoderLayer>(
              D, 2, 16, P, Act, 1e-5, BatchFirst, NormFirst);
          std::string Torch =
              "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, "
              "dropout=" +
              std::string(Train ? "0.0" : "0.1") + ", activation='" + Act +
              "', batch_first=" + (BatchFirst ? "True" : "False") +
              ", norm_first=" + (NormFirst ? "True" : "False") + ")";
          // Without masks, with a causal float mask, with a bool mask and
          // a key padding mask.
          for (int Masking = 0; Masking < 3; ++Masking) {
            OracleCase C;
            C.Module = M;
            C.TorchModule = Torch;
            C.Train = Train;
            C.Inputs = {BatchFirst ? randn({N, L, D}) : randn({L, N, D})};
            C.InputRequiresGrad = {true};
            if (Masking == 1) {
              C.Inputs.push_back(causal(L, false));
              C.InputRequiresGrad.push_back(false);
              C.TorchCall = "m(x[0], src_mask=x[1])";
            } else if (Masking == 2) {
              C.Inputs.push_back(causal(L, true));
              C.Inputs.push_back(keyPadding(N, L, 2));
              C.InputRequiresGrad.push_back(false);
              C.InputRequiresGrad.push_back(false);
              C.TorchCall = "m(x[0], src_mask=x[1], src_key_padding_mask=x[2])";
            }
            C.Name = Torch + " " + C.TorchCall;
            C.Forward = [M](const std::vector<Tensor> &X) {
              Tensor Mask = X.size() > 1 ? X[1] : Tensor();
              Tensor Pad = X.size() > 2 ? X[2] : Tensor();
              return std::vector<Tensor>{(*M)(X[0], Mask, Pad)};
            };
            O.add(std::move(C));
          }
        }
  NNG_RUN_TORCH_ORACLE(O);
}
