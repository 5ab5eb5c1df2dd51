//===- GPT2.h - A GPT-2 style decoder with a KV cache -----------*- C++ -*-===//
//
// The GPT-2 language model (the architecture of Hugging Face's
// GPT2LMHeadModel, written here in C++) with a key/value cache, so that a
// prompt is run once (prefill) and each generated token costs one step
// over the cached keys and values (decode). Module names and state_dict
// keys are GPT-2's: transformer.wte / wpe (token and position embeddings),
// transformer.h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj}, transformer.ln_f and lm_head (its weight tied to wte's),
// and GPT-2's Conv1D convention: a projection's weight is stored as
// [in, out] and applied as y = x @ W + b. The MLP uses GELU with the tanh
// approximation ("gelu_new"). There are no dropout modules (inference
// only) and no attn.bias / attn.masked_bias buffers (the causal mask is
// computed from the sizes): load an old checkpoint that carries those
// keys with strict=false. forward keeps every size it reads symbolic, so
// fx::symbolic_trace with dynamic batch, cache and sequence dims gives one
// graph for prefill and decode (docs/zoo.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nng::zoo {

/// The sizes of a GPT-2 model (Hugging Face's GPT2Config names). The
/// defaults are a tiny model for tests; gpt2_small() is GPT-2's 124M.
struct GPT2Config {
  int64_t vocab_size = 128;
  /// The longest sequence (past plus new tokens) the position table covers.
  int64_t n_positions = 64;
  /// The model width (d_model); a multiple of n_head.
  int64_t n_embd = 32;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  double layer_norm_epsilon = 1e-5;
  /// The standard deviation of the initial weights.
  double initializer_range = 0.02;

  /// GPT-2 small: vocabulary 50257, 1024 positions, 768 wide, 12 layers
  /// and 12 heads.
  static GPT2Config gpt2_small();
  /// An error naming the bad field unless the sizes are consistent.
  void validate() const;
};

/// GPT-2's Conv1D (a linear layer with a transposed weight): weight
/// [nx, nf], bias [nf], y = x @ weight + bias over the last axis of x.
class Conv1D : public nn::Module<Conv1D> {
public:
  /// nf outputs from nx inputs; weight from N(0, 0.02), bias zero.
  Conv1D(int64_t nf, int64_t nx);
  /// input [..., nx] -> [..., nf].
  Tensor forward(const Tensor &input);
  /// "nf=96, nx=32".
  std::string extra_repr() const override;

  int64_t nf, nx;
  Tensor weight, bias;
};

/// Causal self-attention over the cache: c_attn makes q, k, v in one
/// projection, c_proj mixes the heads.
class GPT2Attention : public nn::Module<GPT2Attention> {
public:
  explicit GPT2Attention(const GPT2Config &C);
  /// x [N, T, E]; past_key / past_value [N, H, P, E / H] (undefined: no
  /// cache); future [T, P + T] bool, true where a query must not see a key.
  /// Returns (output [N, T, E], present key, present value
  /// [N, H, P + T, E / H]).
  std::tuple<Tensor, Tensor, Tensor> forward(const Tensor &x,
                                             const Tensor &past_key,
                                             const Tensor &past_value,
                                             const Tensor &future);

  int64_t n_embd, n_head;
  std::shared_ptr<Conv1D> c_attn, c_proj;
};

/// c_fc, GELU (tanh approximation), c_proj.
class GPT2MLP : public nn::Module<GPT2MLP> {
public:
  explicit GPT2MLP(const GPT2Config &C);
  Tensor forward(const Tensor &x);

  std::shared_ptr<Conv1D> c_fc;
  std::shared_ptr<nn::GELU> act;
  std::shared_ptr<Conv1D> c_proj;
};

/// One pre-norm decoder block: x + attn(ln_1(x)), then + mlp(ln_2(.)).
class GPT2Block : public nn::Module<GPT2Block> {
public:
  explicit GPT2Block(const GPT2Config &C);
  /// As GPT2Attention::forward, for the block's output.
  std::tuple<Tensor, Tensor, Tensor> forward(const Tensor &x,
                                             const Tensor &past_key,
                                             const Tensor &past_value,
                                             const Tensor &future);

  std::shared_ptr<nn::LayerNorm> ln_1;
  std::shared_ptr<GPT2Attention> attn;
  std::shared_ptr<nn::LayerNorm> ln_2;
  std::shared_ptr<GPT2MLP> mlp;
};

/// The decoder stack without the head (GPT2Model, "transformer").
class GPT2Model : public nn::Module<GPT2Model> {
public:
  explicit GPT2Model(const GPT2Config &C);
  /// input_ids i64 [N, T]; past: empty, or per layer its key and value
  /// [N, H, P, E / H] (key 0, value 0, key 1, ...). Positions start at P.
  /// Returns (hidden states [N, T, E] after ln_f, presents in past's
  /// layout with P + T positions).
  std::pair<Tensor, std::vector<Tensor>>
  forward(const Tensor &input_ids, const std::vector<Tensor> &past);

  GPT2Config config;
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::ModuleList> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
};

/// GPT-2 with its language-model head (GPT2LMHeadModel).
class GPT2LMHeadModel : public nn::Module<GPT2LMHeadModel> {
public:
  /// Built and initialized as GPT-2 is: weights N(0, initializer_range)
  /// (c_proj's scaled by 1 / sqrt(2 n_layer)), biases zero, layer norms
  /// 1 and 0; lm_head.weight is transformer.wte.weight.
  explicit GPT2LMHeadModel(const GPT2Config &C = {});
  /// input_ids i64 [N, T] and the cache (see GPT2Model::forward) ->
  /// (logits f32 [N, T, vocab_size], presents: past for the next step).
  std::pair<Tensor, std::vector<Tensor>>
  forward(const Tensor &input_ids, const std::vector<Tensor> &past = {});

  GPT2Config config;
  std::shared_ptr<GPT2Model> transformer;
  std::shared_ptr<nn::Linear> lm_head;
};

/// A tiny GPT-2 (GPT2Config's defaults) for tests and examples.
std::shared_ptr<GPT2LMHeadModel> gpt2_tiny();

} // namespace nng::zoo
