//===- Transformer.cpp - TransformerEncoderLayer --------------------------===//
//
// torch.nn.TransformerEncoderLayer: submodules registered under PyTorch's
// names and in its order (self_attn, linear1, dropout, linear2, norm1,
// norm2, dropout1, dropout2), so state_dict keys match; forward is the
// general path of PyTorch's forward (post-norm or norm_first), calling the
// submodules through their hooks.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Transformer.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/Functional.h"

namespace nng::nn {

TransformerEncoderLayer::TransformerEncoderLayer(
    int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout,
    const std::string &activation, double layer_norm_eps, bool batch_first,
    bool norm_first, FactoryKwargs factory)
    : norm_first(norm_first) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (activation == "relu")
    this->activation = [](const Tensor &X) { return F::relu(X); };
  else if (activation == "gelu")
    this->activation = [](const Tensor &X) { return F::gelu(X); };
  else
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoderLayer: activation "
         "should be relu/gelu, not ",
         activation);
  if (d_model <= 0 || nhead <= 0 || dim_feedforward <= 0)
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoderLayer: d_model, nhead "
         "and dim_feedforward must be positive, got d_model=",
         d_model, ", nhead=", nhead, ", dim_feedforward=", dim_feedforward);
  self_attn = register_module(
      "self_attn", std::make_shared<MultiheadAttention>(
                       d_model, nhead, dropout, /*bias=*/true,
                       /*add_bias_kv=*/false, /*add_zero_attn=*/false,
                       std::nullopt, std::nullopt, batch_first));
  linear1 = register_module("linear1",
                            std::make_shared<Linear>(d_model, dim_feedforward));
  this->dropout =
      register_module("dropout", std::make_shared<Dropout>(dropout));
  linear2 = register_module("linear2",
                            std::make_shared<Linear>(dim_feedforward, d_model));
  norm1 = register_module("norm1",
                          std::make_shared<LayerNorm>(d_model, layer_norm_eps));
  norm2 = register_module("norm2",
                          std::make_shared<LayerNorm>(d_model, layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout));
}

TransformerEncoderLayer::TransformerEncoderLayer(
    const TransformerEncoderLayerOptions &O)
    : TransformerEncoderLayer(O.d_model, O.nhead, O.dim_feedforward, O.dropout,
                              O.activation, O.layer_norm_eps, O.batch_first,
                              O.norm_first, {O.device, O.dtype}) {}

Tensor TransformerEncoderLayer::forward(const Tensor &src,
                                        const Tensor &src_mask,
                                        const Tensor &src_key_padding_mask) {
  if (!src.defined())
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoderLayer: the input is undefined");
  if (src_key_padding_mask.defined() &&
      src_key_padding_mask.dtype() != DType::Bool &&
      !src_key_padding_mask.is_floating_point())
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoderLayer: only bool and "
         "floating types of key_padding_mask are supported, got ",
         dtypeName(src_key_padding_mask.dtype()));
  if (!activation)
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoderLayer: activation is empty");
  auto SelfAttention = [&](const Tensor &X) {
    Tensor Y = std::get<0>((*self_attn)(X, X, X, src_key_padding_mask,
                                        /*need_weights=*/false, src_mask));
    return (*dropout1)(Y);
  };
  auto FeedForward = [&](const Tensor &X) {
    Tensor H = (*dropout)(activation((*linear1)(X)));
    return (*dropout2)((*linear2)(H));
  };
  Tensor X = src;
  if (norm_first) {
    X = X + SelfAttention((*norm1)(X));
    X = X + FeedForward((*norm2)(X));
  } else {
    X = (*norm1)(X + SelfAttention(X));
    X = (*norm2)(X + FeedForward(X));
  }
  return X;
}

} // namespace nng::nn
