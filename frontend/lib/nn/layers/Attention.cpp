//===- Attention.cpp - MultiheadAttention ---------------------------------===//
//
// torch.nn.MultiheadAttention: parameter registration in PyTorch's order
// (so state_dict keys and order match), _reset_parameters, and forward as
// F.multi_head_attention_forward computes it outside the fast path: input
// projections (packed or separate), bias_k/bias_v and zero attention
// columns, key-padding and attention masks merged into one additive mask,
// scaled scores, softmax, dropout in training, the output projection, and
// the head-averaged weights. Shape errors name the layer and the shapes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/Transformer.h"

#include <cmath>
#include <limits>

namespace nng::nn {

namespace {

const char *const Name = "MultiheadAttention";

std::string shapeOf(const Tensor &T) {
  return T.defined() ? T.shape().toString() : std::string("None");
}

/// Appends one column along the last axis (zeros / false): F.pad(m, (0, 1)).
Tensor padLast(const Tensor &M) {
  std::vector<int64_t> S = M.sizes();
  S.back() = 1;
  return cat({M, zeros(S, M.dtype())}, -1);
}

bool isMaskType(const Tensor &M) {
  return M.dtype() == DType::Bool || M.is_floating_point();
}

} // namespace

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads,
                                       double dropout, bool bias,
                                       bool add_bias_kv, bool add_zero_attn,
                                       std::optional<int64_t> kdim,
                                       std::optional<int64_t> vdim,
                                       bool batch_first,
                                       FactoryKwargs factory)
    : embed_dim(embed_dim), kdim(kdim.value_or(embed_dim)),
      vdim(vdim.value_or(embed_dim)), num_heads(num_heads), head_dim(0),
      dropout(dropout), batch_first(batch_first), add_zero_attn(add_zero_attn) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (embed_dim <= 0 || num_heads <= 0)
    fail(ErrorKind::InvalidArgument, Name,
         ": embed_dim and num_heads are "
         "required and must be positive, got embed_dim=",
         embed_dim, ", num_heads=", num_heads);
  if (this->kdim <= 0 || this->vdim <= 0)
    fail(ErrorKind::InvalidArgument, Name,
         ": kdim and vdim must be positive, got kdim=", this->kdim,
         ", vdim=", this->vdim);
  if (embed_dim % num_heads != 0)
    fail(ErrorKind::InvalidArgument, Name, ": embed_dim (", embed_dim,
         ") must be divisible by num_heads (", num_heads, ")");
  if (!(dropout >= 0.0 && dropout <= 1.0))
    fail(ErrorKind::InvalidArgument, Name, ": dropout must be in [0, 1], got ",
         dropout);
  head_dim = embed_dim / num_heads;
  qkv_same_embed_dim = this->kdim == embed_dim && this->vdim == embed_dim;
  if (!qkv_same_embed_dim) {
    q_proj_weight =
        register_parameter("q_proj_weight", empty({embed_dim, embed_dim}));
    k_proj_weight =
        register_parameter("k_proj_weight", empty({embed_dim, this->kdim}));
    v_proj_weight =
        register_parameter("v_proj_weight", empty({embed_dim, this->vdim}));
    register_parameter("in_proj_weight", Tensor());
  } else {
    in_proj_weight =
        register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}));
    register_parameter("q_proj_weight", Tensor());
    register_parameter("k_proj_weight", Tensor());
    register_parameter("v_proj_weight", Tensor());
  }
  in_proj_bias = register_parameter("in_proj_bias",
                                    bias ? empty({3 * embed_dim}) : Tensor());
  out_proj = register_module("out_proj",
                             std::make_shared<NonDynamicallyQuantizableLinear>(
                                 embed_dim, embed_dim, bias));
  if (add_bias_kv) {
    bias_k = register_parameter("bias_k", empty({1, 1, embed_dim}));
    bias_v = register_parameter("bias_v", empty({1, 1, embed_dim}));
  }
  reset_parameters();
}

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions &O)
    : MultiheadAttention(O.embed_dim, O.num_heads, O.dropout, O.bias,
                         O.add_bias_kv, O.add_zero_attn, O.kdim, O.vdim,
                         O.batch_first, {O.device, O.dtype}) {}

void MultiheadAttention::reset_parameters() {
  if (qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined())
    init::xavier_normal_(bias_k);
  if (bias_v.defined())
    init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor>
MultiheadAttention::forward(const Tensor &query, const Tensor &key,
                            const Tensor &value, const Tensor &key_padding_mask,
                            bool need_weights, const Tensor &attn_mask,
                            bool average_attn_weights) {
  if (!query.defined() || !key.defined() || !value.defined())
    fail(ErrorKind::InvalidArgument, Name,
         ": query, key and value must all be defined");
  Tensor KeyPadding = key_padding_mask;
  if (KeyPadding.defined() && !isMaskType(KeyPadding))
    fail(ErrorKind::InvalidArgument, Name,
         ": only bool and floating types "
         "of key_padding_mask are supported, got ",
         dtypeName(KeyPadding.dtype()));
  // _mha_shape_check.
  bool Batched = query.dim() == 3;
  if (query.dim() != 2 && query.dim() != 3)
    fail(ErrorKind::ShapeMismatch, Name,
         ": query should be unbatched 2D or "
         "batched 3D, got query of shape ",
         shapeOf(query));
  if (key.dim() != query.dim() || value.dim() != query.dim())
    fail(ErrorKind::ShapeMismatch, Name, ": for ", query.dim(),
         "-D query of shape ", shapeOf(query), ", expected key and value of ",
         query.dim(), " dimensions, got ", shapeOf(key), " and ",
         shapeOf(value));
  if (KeyPadding.defined() && KeyPadding.dim() != (Batched ? 2 : 1))
    fail(ErrorKind::ShapeMismatch, Name, ": expected key_padding_mask of ",
         Batched ? 2 : 1, " dimensions for query of shape ", shapeOf(query),
         ", got ", shapeOf(KeyPadding));
  if (attn_mask.defined() && attn_mask.dim() != 2 && attn_mask.dim() != 3)
    fail(ErrorKind::ShapeMismatch, Name,
         ": expected attn_mask of 2 or 3 "
         "dimensions, got ",
         shapeOf(attn_mask));

  // PyTorch tests tensor identity (q is k, k is v) to pick the packed
  // projection; batch_first's transposes keep it, unsqueeze does not.
  bool SameQK = Batched && query.is_same(key);
  bool SameKV = Batched && key.is_same(value);
  Tensor Q = query, K = key, V = value;
  if (batch_first && Batched) {
    Q = Q.transpose(1, 0);
    K = SameQK ? Q : K.transpose(1, 0);
    V = SameKV ? K : V.transpose(1, 0);
  }
  if (!Batched) {
    Q = Q.unsqueeze(1);
    K = K.unsqueeze(1);
    V = V.unsqueeze(1);
    if (KeyPadding.defined())
      KeyPadding = KeyPadding.unsqueeze(0);
  }
  // Sequence and batch sizes may be symbolic during a trace (dynamic dims).
  SymInt TgtLen = Q.size(0), Bsz = Q.size(1);
  int64_t E = Q.size(2);
  SymInt SrcLen = K.size(0);
  if (E != embed_dim)
    fail(ErrorKind::ShapeMismatch, Name,
         ": expected query with embedding "
         "dimension ",
         embed_dim, " (embed_dim), got query of shape ", shapeOf(query));
  if (K.size(2) != kdim || V.size(2) != vdim)
    fail(ErrorKind::ShapeMismatch, Name, ": expected key of last dimension ",
         kdim, " and value of last dimension ", vdim, ", got key ",
         shapeOf(key), " and value ", shapeOf(value));
  if (K.size(0) != V.size(0) || K.size(1) != V.size(1) || K.size(1) != Bsz)
    fail(ErrorKind::ShapeMismatch, Name, ": key ", shapeOf(key), " and value ",
         shapeOf(value),
         " must agree in sequence and batch dimensions with "
         "each other and with query ",
         shapeOf(query));

  // Input projections.
  Tensor Qp, Kp, Vp;
  if (qkv_same_embed_dim) {
    if (SameQK && SameKV) {
      std::vector<Tensor> P =
          chunk(F::linear(Q, in_proj_weight, in_proj_bias), 3, -1);
      Qp = P[0], Kp = P[1], Vp = P[2];
    } else if (SameKV) {
      std::vector<Tensor> W = split(in_proj_weight, {E, 2 * E});
      std::vector<Tensor> B;
      if (in_proj_bias.defined())
        B = split(in_proj_bias, {E, 2 * E});
      Qp = F::linear(Q, W[0], B.empty() ? Tensor() : B[0]);
      std::vector<Tensor> KV =
          chunk(F::linear(K, W[1], B.empty() ? Tensor() : B[1]), 2, -1);
      Kp = KV[0], Vp = KV[1];
    } else {
      std::vector<Tensor> W = chunk(in_proj_weight, 3);
      std::vector<Tensor> B;
      if (in_proj_bias.defined())
        B = chunk(in_proj_bias, 3);
      Qp = F::linear(Q, W[0], B.empty() ? Tensor() : B[0]);
      Kp = F::linear(K, W[1], B.empty() ? Tensor() : B[1]);
      Vp = F::linear(V, W[2], B.empty() ? Tensor() : B[2]);
    }
  } else {
    std::vector<Tensor> B;
    if (in_proj_bias.defined())
      B = chunk(in_proj_bias, 3);
    Qp = F::linear(Q, q_proj_weight, B.empty() ? Tensor() : B[0]);
    Kp = F::linear(K, k_proj_weight, B.empty() ? Tensor() : B[1]);
    Vp = F::linear(V, v_proj_weight, B.empty() ? Tensor() : B[2]);
  }

  // The attention mask, as [1 or N * num_heads, L, S].
  Tensor Mask = attn_mask;
  if (Mask.defined()) {
    if (Mask.dtype() == DType::U8)
      Mask = Mask.to(DType::Bool);
    else if (!isMaskType(Mask))
      fail(ErrorKind::InvalidArgument, Name,
           ": only float, byte and bool "
           "types are supported for attn_mask, not ",
           dtypeName(Mask.dtype()));
    if (Mask.dim() == 2) {
      if (Mask.size(0) != TgtLen || Mask.size(1) != SrcLen)
        fail(ErrorKind::ShapeMismatch, Name,
             ": the shape of the 2D "
             "attn_mask is ",
             shapeOf(attn_mask), ", but should be [", TgtLen, ", ", SrcLen,
             "]");
      Mask = Mask.unsqueeze(0);
    } else if (Mask.size(0) != Bsz * num_heads || Mask.size(1) != TgtLen ||
               Mask.size(2) != SrcLen) {
      fail(ErrorKind::ShapeMismatch, Name,
           ": the shape of the 3D "
           "attn_mask is ",
           shapeOf(attn_mask), ", but should be [", Bsz * num_heads, ", ",
           TgtLen, ", ", SrcLen, "]");
    }
  }
  if (bias_k.defined() && bias_v.defined()) {
    Kp = cat({Kp, bias_k.expand({1, Bsz, embed_dim})});
    Vp = cat({Vp, bias_v.expand({1, Bsz, embed_dim})});
    if (Mask.defined())
      Mask = padLast(Mask);
    if (KeyPadding.defined())
      KeyPadding = padLast(KeyPadding);
  }

  // Heads: [L, N, E] -> [N * H, L, head_dim].
  Tensor Qh = Qp.contiguous()
                  .reshape({TgtLen, Bsz * num_heads, head_dim})
                  .transpose(0, 1);
  Tensor Kh = Kp.contiguous()
                  .reshape({Kp.size(0), Bsz * num_heads, head_dim})
                  .transpose(0, 1);
  Tensor Vh = Vp.contiguous()
                  .reshape({Vp.size(0), Bsz * num_heads, head_dim})
                  .transpose(0, 1);
  if (add_zero_attn) {
    Tensor Z = zeros({Bsz * num_heads, 1, head_dim}, Kh.dtype());
    Kh = cat({Kh, Z}, 1);
    Vh = cat({Vh, Z}, 1);
    if (Mask.defined())
      Mask = padLast(Mask);
    if (KeyPadding.defined())
      KeyPadding = padLast(KeyPadding);
  }
  SrcLen = Kh.size(1);

  if (KeyPadding.defined()) {
    if (KeyPadding.size(0) != Bsz || KeyPadding.size(1) != SrcLen)
      fail(ErrorKind::ShapeMismatch, Name,
           ": expected key_padding_mask of "
           "shape [",
           Bsz, ", ", SrcLen, "], got ", shapeOf(key_padding_mask));
    Tensor Kpm = KeyPadding.reshape({Bsz, 1, 1, SrcLen})
                     .expand({-1, num_heads, -1, -1})
                     .reshape({Bsz * num_heads, 1, SrcLen});
    if (!Mask.defined())
      Mask = Kpm;
    else if (Mask.dtype() == DType::Bool)
      Mask = logical_or(Mask, Kpm);
    else if (Kpm.dtype() == DType::Bool)
      Mask = where(
          Kpm,
          scalar_tensor(-std::numeric_limits<double>::infinity(), Mask.dtype()),
          Mask);
    else
      Mask = Mask + Kpm;
  }
  if (Mask.defined() && Mask.dtype() == DType::Bool)
    Mask = masked_fill(zeros(Mask.sizes(), Qh.dtype()), Mask,
                       -std::numeric_limits<double>::infinity());
  else if (Mask.defined())
    Mask = Mask.to(Qh.dtype());

  double DropoutP = is_training() ? dropout : 0.0;
  Tensor Scaled = Qh / std::sqrt(static_cast<double>(head_dim));
  Tensor Weights = bmm(Scaled, Kh.transpose(-2, -1));
  if (Mask.defined())
    Weights = Mask + Weights;
  Weights = softmax(Weights, -1);
  if (DropoutP > 0.0)
    Weights = F::dropout(Weights, DropoutP, true);
  Tensor Out = bmm(Weights, Vh);
  Out = Out.transpose(0, 1).contiguous().reshape({TgtLen * Bsz, embed_dim});
  Out = F::linear(Out, out_proj->weight, out_proj->bias);
  Out = Out.reshape({TgtLen, Bsz, embed_dim});

  Tensor AttnWeights;
  if (need_weights) {
    AttnWeights = Weights.reshape({Bsz, num_heads, TgtLen, SrcLen});
    if (average_attn_weights)
      AttnWeights = sum(AttnWeights, {1}) / static_cast<double>(num_heads);
    if (!Batched)
      AttnWeights = AttnWeights.squeeze(0);
  }
  if (!Batched)
    Out = Out.squeeze(1);
  else if (batch_first)
    Out = Out.transpose(1, 0);
  return {Out, AttnWeights};
}

} // namespace nng::nn
