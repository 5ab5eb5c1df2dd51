//===- Embedding.cpp - The Embedding layer --------------------------------===//
//
// Construction with PyTorch's padding_idx normalization and checks,
// reset_parameters (N(0, 1), padding row zeroed), from_pretrained, the
// in-place max_norm renormalization of the rows an input looks up
// (PyTorch's embedding_renorm_: scale max_norm / (norm + 1e-7) where the
// norm exceeds max_norm), and forward through nng::F::embedding, which
// gives the padding row no gradient.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/LayerArgs.h"

#include <cmath>
#include <set>

namespace nng::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim,
                     std::optional<int64_t> padding_idx,
                     std::optional<double> max_norm, double norm_type,
                     bool scale_grad_by_freq, bool sparse,
                     FactoryKwargs factory)
    : num_embeddings(num_embeddings), embedding_dim(embedding_dim),
      max_norm(max_norm), norm_type(norm_type),
      scale_grad_by_freq(scale_grad_by_freq), sparse(sparse) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (num_embeddings < 0 || embedding_dim < 0)
    fail(ErrorKind::InvalidArgument,
         "Embedding: num_embeddings and "
         "embedding_dim must be non-negative, got ",
         num_embeddings, ", ", embedding_dim);
  if (padding_idx) {
    if (*padding_idx >= num_embeddings || *padding_idx < -num_embeddings)
      fail(ErrorKind::InvalidArgument, "Embedding: padding_idx (", *padding_idx,
           ") must be within num_embeddings (", num_embeddings, ")");
    if (*padding_idx < 0)
      *padding_idx += num_embeddings;
  }
  this->padding_idx = padding_idx;
  if (scale_grad_by_freq)
    fail(ErrorKind::Unsupported,
         "Embedding: scale_grad_by_freq=True is not supported");
  if (sparse)
    fail(ErrorKind::Unsupported, "Embedding: sparse=True is not supported "
                                 "(nngraph has no sparse gradients)");
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  reset_parameters();
}

std::shared_ptr<Embedding>
Embedding::from_pretrained(const Tensor &embeddings, bool freeze,
                           std::optional<int64_t> padding_idx,
                           std::optional<double> max_norm, double norm_type) {
  if (!embeddings.defined() || embeddings.dim() != 2)
    fail(ErrorKind::ShapeMismatch,
         "Embedding.from_pretrained: embeddings "
         "must be a 2-D tensor [num_embeddings, embedding_dim], got ",
         embeddings.defined() ? embeddings.shape().toString() : "undefined");
  auto E = std::make_shared<Embedding>(embeddings.size(0), embeddings.size(1),
                                       padding_idx, max_norm, norm_type);
  // PyTorch keeps the given values as they are (no padding-row zeroing).
  E->weight = E->replace_parameter("weight", embeddings.detach().clone(),
                                   /*RequiresGrad=*/!freeze);
  return E;
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard NoGrad;
    Tensor IsPad = unsqueeze(
        eq(arange(num_embeddings), scalar_tensor(*padding_idx, DType::I64)), 1);
    weight.copy_(masked_fill(weight, IsPad, 0.0));
  }
}

Tensor Embedding::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "Embedding: the input is undefined");
  if (input.dtype() != DType::I64 && input.dtype() != DType::I32)
    fail(ErrorKind::InvalidArgument,
         "Embedding: expected integer indices "
         "(i64 or i32), got ",
         dtypeName(input.dtype()), " of shape ", input.shape().toString());
  if (max_norm) {
    // Indices are checked first, so a bad input changes no weights.
    std::vector<int64_t> Idx = input.data().toIntVector();
    for (int64_t R : Idx)
      if (R < 0 || R >= num_embeddings)
        fail(ErrorKind::InvalidArgument, "Embedding: index ", R,
             " is out of range for num_embeddings=", num_embeddings,
             " (input of shape ", input.shape().toString(), ")");
    std::set<int64_t> Rows(Idx.begin(), Idx.end());
    rt::Tensor W = weight.data().contiguous().clone();
    bool Changed = false;
    for (int64_t R : Rows) {
      double Norm = 0;
      for (int64_t J = 0; J < embedding_dim; ++J)
        Norm += std::pow(std::abs(W.getFlat(R * embedding_dim + J)), norm_type);
      Norm = std::pow(Norm, 1.0 / norm_type);
      if (Norm > *max_norm) {
        double Scale = *max_norm / (Norm + 1e-7);
        for (int64_t J = 0; J < embedding_dim; ++J)
          W.setFlat(R * embedding_dim + J,
                    W.getFlat(R * embedding_dim + J) * Scale);
        Changed = true;
      }
    }
    if (Changed) {
      NoGradGuard NoGrad;
      weight.copy_(Tensor(W));
    }
  }
  return F::embedding(input, weight, padding_idx);
}

std::string Embedding::extra_repr() const {
  std::string S =
      std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx)
    S += ", padding_idx=" + std::to_string(*padding_idx);
  if (max_norm)
    S += ", max_norm=" + repr::pyFloat(*max_norm);
  if (norm_type != 2)
    S += ", norm_type=" + repr::pyFloat(norm_type);
  if (scale_grad_by_freq)
    S += ", scale_grad_by_freq=True";
  if (sparse)
    S += ", sparse=True";
  return S;
}

} // namespace nng::nn
