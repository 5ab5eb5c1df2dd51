//===- GPT2.cpp - A GPT-2 style decoder with a KV cache -------------------===//
//
// The modules of GPT2.h. Every size forward reads stays a SymInt (the
// batch N, the new tokens T, the cached positions P), so a trace with
// dynamic dims records the shape arithmetic, the positions P .. P+T-1
// (sym_arange, a Range node) and the causal mask, and one graph serves
// prefill (T > 1) and decode (T = 1) at every cache length.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/GPT2.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <limits>

namespace nng::zoo {

GPT2Config GPT2Config::gpt2_small() {
  GPT2Config C;
  C.vocab_size = 50257;
  C.n_positions = 1024;
  C.n_embd = 768;
  C.n_layer = 12;
  C.n_head = 12;
  return C;
}

void GPT2Config::validate() const {
  auto Positive = [](const char *Name, int64_t V) {
    if (V <= 0)
      fail(ErrorKind::InvalidArgument, "GPT2Config: ", Name,
           " must be positive, got ", V);
  };
  Positive("vocab_size", vocab_size);
  Positive("n_positions", n_positions);
  Positive("n_embd", n_embd);
  Positive("n_layer", n_layer);
  Positive("n_head", n_head);
  if (n_embd % n_head != 0)
    fail(ErrorKind::InvalidArgument, "GPT2Config: n_embd (", n_embd,
         ") must be a multiple of n_head (", n_head, ")");
}

// --- Conv1D ------------------------------------------------------------------

Conv1D::Conv1D(int64_t nf, int64_t nx) : nf(nf), nx(nx) {
  if (nf <= 0 || nx <= 0)
    fail(ErrorKind::InvalidArgument,
         "Conv1D: nf and nx must be positive, "
         "got nf=",
         nf, ", nx=", nx);
  weight = register_parameter("weight", empty({nx, nf}));
  bias = register_parameter("bias", zeros({nf}));
  nn::init::normal_(weight, 0.0, 0.02);
}

Tensor Conv1D::forward(const Tensor &input) {
  if (input.dim() < 1 || input.size(-1) != nx)
    fail(ErrorKind::ShapeMismatch, "Conv1D: the input's last axis must have ",
         nx, " features (weight [", nx, ", ", nf, "]), got ",
         input.shape().toString());
  return matmul(input, weight) + bias;
}

std::string Conv1D::extra_repr() const {
  return "nf=" + std::to_string(nf) + ", nx=" + std::to_string(nx);
}

// --- Attention, MLP, block
// -----------------------------------------------------

GPT2Attention::GPT2Attention(const GPT2Config &C)
    : n_embd(C.n_embd), n_head(C.n_head) {
  c_attn = register_module("c_attn", nn::make<Conv1D>(3 * C.n_embd, C.n_embd));
  c_proj = register_module("c_proj", nn::make<Conv1D>(C.n_embd, C.n_embd));
}

std::tuple<Tensor, Tensor, Tensor>
GPT2Attention::forward(const Tensor &x, const Tensor &past_key,
                       const Tensor &past_value, const Tensor &future) {
  SymInt N = x.size(0), T = x.size(1);
  int64_t Dh = n_embd / n_head;
  std::vector<Tensor> QKV = split((*c_attn)(x), n_embd, 2);
  // [N, T, E] -> [N, H, T, Dh].
  auto Heads = [&](const Tensor &Y) {
    return Y.view({N, T, n_head, Dh}).transpose(1, 2);
  };
  Tensor Q = Heads(QKV[0]), K = Heads(QKV[1]), V = Heads(QKV[2]);
  if (past_key.defined() != past_value.defined())
    fail(ErrorKind::InvalidArgument,
         "GPT2Attention: give both the past key and the past value, or "
         "neither");
  if (past_key.defined()) {
    K = cat({past_key, K}, 2);
    V = cat({past_value, V}, 2);
  }
  Tensor Scores = matmul(Q, K.transpose(-2, -1)) *
                  (1.0 / std::sqrt(static_cast<double>(Dh)));
  Scores =
      masked_fill(Scores, future, -std::numeric_limits<double>::infinity());
  Tensor Out = matmul(softmax(Scores, -1), V); // [N, H, T, Dh]
  Out = Out.transpose(1, 2).reshape({N, T, n_embd});
  return {(*c_proj)(Out), K, V};
}

GPT2MLP::GPT2MLP(const GPT2Config &C) {
  c_fc = register_module("c_fc", nn::make<Conv1D>(4 * C.n_embd, C.n_embd));
  act = register_module("act", nn::make<nn::GELU>("tanh"));
  c_proj = register_module("c_proj", nn::make<Conv1D>(C.n_embd, 4 * C.n_embd));
}

Tensor GPT2MLP::forward(const Tensor &x) {
  return (*c_proj)((*act)((*c_fc)(x)));
}

GPT2Block::GPT2Block(const GPT2Config &C) {
  ln_1 = register_module(
      "ln_1", nn::make<nn::LayerNorm>(C.n_embd, C.layer_norm_epsilon));
  attn = register_module("attn", nn::make<GPT2Attention>(C));
  ln_2 = register_module(
      "ln_2", nn::make<nn::LayerNorm>(C.n_embd, C.layer_norm_epsilon));
  mlp = register_module("mlp", nn::make<GPT2MLP>(C));
}

std::tuple<Tensor, Tensor, Tensor> GPT2Block::forward(const Tensor &x,
                                                      const Tensor &past_key,
                                                      const Tensor &past_value,
                                                      const Tensor &future) {
  auto [A, K, V] = (*attn)((*ln_1)(x), past_key, past_value, future);
  Tensor H = x + A;
  return {H + (*mlp)((*ln_2)(H)), K, V};
}

// --- The stack and the head
// ------------------------------------------------------

GPT2Model::GPT2Model(const GPT2Config &C) : config(C) {
  C.validate();
  wte = register_module("wte", nn::make<nn::Embedding>(C.vocab_size, C.n_embd));
  wpe =
      register_module("wpe", nn::make<nn::Embedding>(C.n_positions, C.n_embd));
  h = register_module("h", nn::make<nn::ModuleList>());
  for (int64_t I = 0; I < C.n_layer; ++I)
    h->append(nn::make<GPT2Block>(C));
  ln_f = register_module(
      "ln_f", nn::make<nn::LayerNorm>(C.n_embd, C.layer_norm_epsilon));
}

std::pair<Tensor, std::vector<Tensor>>
GPT2Model::forward(const Tensor &input_ids, const std::vector<Tensor> &past) {
  const GPT2Config &C = config;
  if (input_ids.dim() != 2 || !isIntegral(input_ids.dtype()))
    fail(ErrorKind::InvalidArgument,
         "GPT2Model: input_ids must be integer token ids [N, T], got ",
         dtypeName(input_ids.dtype()), input_ids.shape().toString());
  if (!past.empty() && static_cast<int64_t>(past.size()) != 2 * C.n_layer)
    fail(ErrorKind::InvalidArgument, "GPT2Model: past must be empty or hold ",
         2 * C.n_layer, " tensors (key and value of each of the ", C.n_layer,
         " layers), got ", past.size());
  int64_t Dh = C.n_embd / C.n_head;
  for (size_t I = 0; I < past.size(); ++I) {
    const Tensor &P = past[I];
    if (!P.defined() || P.dim() != 4 || P.size(1) != C.n_head ||
        P.size(3) != Dh || P.size(0) != input_ids.size(0) ||
        P.size(2) != past[0].size(2))
      fail(ErrorKind::ShapeMismatch, "GPT2Model: past[", I, "] (the ",
           I % 2 ? "value" : "key", " of layer ", I / 2,
           ") must be [N, n_head, P, n_embd / n_head] = [", input_ids.size(0),
           ", ", C.n_head, ", P, ", Dh,
           "] with the same P for every tensor, got ",
           P.defined() ? P.shape().toString() : std::string("undefined"));
  }
  SymInt T = input_ids.size(1);
  SymInt P = past.empty() ? SymInt(0) : past[0].size(2);
  if (P.example() + T.example() > C.n_positions)
    fail(ErrorKind::InvalidArgument, "GPT2Model: ", P, " cached plus ", T,
         " new positions exceed n_positions (", C.n_positions, ")");
  // The new tokens' positions P .. P+T-1 and the causal mask: query i (at
  // position P + i) sees the keys at positions <= P + i.
  SymInt Total = P + T;
  Tensor QPos = sym_arange(P, Total);
  Tensor KPos = sym_arange(0, Total);
  Tensor Future = gt(KPos.view({1, Total}), QPos.view({T, 1}));
  Tensor X = (*wte)(input_ids) + (*wpe)(QPos.view({1, T}));
  std::vector<Tensor> Presents;
  for (int64_t L = 0; L < C.n_layer; ++L) {
    Tensor PK = past.empty() ? Tensor() : past[2 * L];
    Tensor PV = past.empty() ? Tensor() : past[2 * L + 1];
    auto [Y, K, V] = (*h->at<GPT2Block>(L))(X, PK, PV, Future);
    X = Y;
    Presents.push_back(K);
    Presents.push_back(V);
  }
  return {(*ln_f)(X), std::move(Presents)};
}

GPT2LMHeadModel::GPT2LMHeadModel(const GPT2Config &C) : config(C) {
  transformer = register_module("transformer", nn::make<GPT2Model>(C));
  lm_head = register_module(
      "lm_head", nn::make<nn::Linear>(C.n_embd, C.vocab_size, false));
  // GPT-2's initialization (its _init_weights), then the tied head.
  NoGradGuard NoGrad;
  double Std = C.initializer_range;
  for (const auto &[Path, M] : named_modules()) {
    (void)Path;
    if (auto *E = M->as<nn::Embedding>())
      nn::init::normal_(E->weight, 0.0, Std);
    else if (auto *Conv = M->as<Conv1D>()) {
      nn::init::normal_(Conv->weight, 0.0, Std);
      nn::init::zeros_(Conv->bias);
    }
  }
  double ProjStd = Std / std::sqrt(2.0 * static_cast<double>(C.n_layer));
  for (int64_t L = 0; L < C.n_layer; ++L) {
    auto Block = transformer->h->at<GPT2Block>(L);
    nn::init::normal_(Block->attn->c_proj->weight, 0.0, ProjStd);
    nn::init::normal_(Block->mlp->c_proj->weight, 0.0, ProjStd);
  }
  lm_head->replace_parameter("weight", transformer->wte->weight);
}

std::pair<Tensor, std::vector<Tensor>>
GPT2LMHeadModel::forward(const Tensor &input_ids,
                         const std::vector<Tensor> &past) {
  auto [Hidden, Presents] = (*transformer)(input_ids, past);
  return {(*lm_head)(Hidden), std::move(Presents)};
}

std::shared_ptr<GPT2LMHeadModel> gpt2_tiny() {
  return nn::make<GPT2LMHeadModel>(GPT2Config{});
}

} // namespace nng::zoo
