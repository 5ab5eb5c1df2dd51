//===- Transformer.h - Attention and the encoder layer -------- -*- C++ -*-===//
//
// torch.nn.MultiheadAttention and torch.nn.TransformerEncoderLayer with
// PyTorch 1.13's arguments, parameter and submodule names (so state_dict
// keys match: in_proj_weight [3E, E], in_proj_bias [3E], out_proj.weight,
// out_proj.bias; or q/k/v_proj_weight when kdim/vdim differ from
// embed_dim; self_attn, linear1, dropout, linear2, norm1, norm2, dropout1,
// dropout2), default initialization and forward semantics (the general,
// non-fast path of F.multi_head_attention_forward: masks, batch_first,
// unbatched inputs, need_weights with average_attn_weights).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace nng::nn {

/// MultiheadAttention arguments by name (PyTorch's order).
struct MultiheadAttentionOptions {
  int64_t embed_dim = -1;
  int64_t num_heads = -1;
  double dropout = 0.0;
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  std::optional<int64_t> kdim = std::nullopt;
  std::optional<int64_t> vdim = std::nullopt;
  bool batch_first = false;
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};

/// Attention with num_heads heads of embed_dim / num_heads each.
class MultiheadAttention : public Module<MultiheadAttention> {
public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0,
                     bool bias = true, bool add_bias_kv = false,
                     bool add_zero_attn = false,
                     std::optional<int64_t> kdim = std::nullopt,
                     std::optional<int64_t> vdim = std::nullopt,
                     bool batch_first = false,
                     FactoryKwargs factory = {});
  explicit MultiheadAttention(const MultiheadAttentionOptions &O);

  /// query [L, N, E] ([N, L, E] with batch_first, [L, E] unbatched), key
  /// and value [S, N, kdim/vdim]. key_padding_mask [N, S]: true (or a
  /// float added to the scores) marks keys to ignore. attn_mask [L, S] or
  /// [N * num_heads, L, S]: true = not allowed, or added when float.
  /// Returns (attn_output, attn_weights); the weights are [N, L, S]
  /// (averaged over heads) or [N, num_heads, L, S], undefined unless
  /// need_weights.
  std::tuple<Tensor, Tensor>
  forward(const Tensor &query, const Tensor &key, const Tensor &value,
          const Tensor &key_padding_mask = Tensor(), bool need_weights = true,
          const Tensor &attn_mask = Tensor(), bool average_attn_weights = true);
  /// xavier_uniform_ on the input projections, zero biases, xavier_normal_
  /// on bias_k / bias_v.
  void reset_parameters();

  int64_t embed_dim;
  int64_t kdim;
  int64_t vdim;
  int64_t num_heads;
  int64_t head_dim;
  double dropout;
  bool batch_first;
  bool add_zero_attn;
  /// True when kdim == vdim == embed_dim (one packed in_proj_weight).
  bool qkv_same_embed_dim;
  /// [3 * embed_dim, embed_dim] (undefined when !qkv_same_embed_dim).
  Tensor in_proj_weight;
  /// [embed_dim, embed_dim], [embed_dim, kdim], [embed_dim, vdim]
  /// (undefined when qkv_same_embed_dim).
  Tensor q_proj_weight;
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  /// [3 * embed_dim] (undefined with bias=false).
  Tensor in_proj_bias;
  std::shared_ptr<NonDynamicallyQuantizableLinear> out_proj;
  /// [1, 1, embed_dim] with add_bias_kv (else undefined and unregistered).
  Tensor bias_k;
  Tensor bias_v;
};

/// TransformerEncoderLayer arguments by name (PyTorch's order).
struct TransformerEncoderLayerOptions {
  int64_t d_model = -1;
  int64_t nhead = -1;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  /// "relu" or "gelu".
  std::string activation = "relu";
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};

/// Self-attention and a feed-forward block, each with a residual
/// connection and LayerNorm (after, or before with norm_first).
class TransformerEncoderLayer : public Module<TransformerEncoderLayer> {
public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                          int64_t dim_feedforward = 2048, double dropout = 0.1,
                          const std::string &activation = "relu",
                          double layer_norm_eps = 1e-5,
                          bool batch_first = false, bool norm_first = false,
                          FactoryKwargs factory = {});
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions &O);

  /// src [S, N, E] ([N, S, E] with batch_first, [S, E] unbatched);
  /// src_mask and src_key_padding_mask as MultiheadAttention's attn_mask
  /// and key_padding_mask.
  Tensor forward(const Tensor &src, const Tensor &src_mask = Tensor(),
                 const Tensor &src_key_padding_mask = Tensor());

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  bool norm_first;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<Dropout> dropout1;
  std::shared_ptr<Dropout> dropout2;
  /// The feed-forward activation (F::relu or F::gelu from the name; may be
  /// replaced by any function, like PyTorch's callable activation).
  std::function<Tensor(const Tensor &)> activation;
};

} // namespace nng::nn
