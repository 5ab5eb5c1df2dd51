//===- Embedding.h - The Embedding layer ---------------------- -*- C++ -*-===//
//
// torch.nn.Embedding: a lookup table weight [num_embeddings, embedding_dim]
// initialized from N(0, 1), indexed by integer tensors. padding_idx (may be
// negative, stored normalized) names a row that is zero at initialization
// and gets no gradient. max_norm renormalizes the looked-up rows in place
// (PyTorch's embedding_renorm_). scale_grad_by_freq and sparse gradients
// are refused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace nng::nn {

class Embedding : public Module<Embedding> {
public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt,
            std::optional<double> max_norm = std::nullopt,
            double norm_type = 2.0, bool scale_grad_by_freq = false,
            bool sparse = false, FactoryKwargs factory = {});
  /// An Embedding holding a copy of Embeddings [num, dim]; frozen (no
  /// gradient) unless freeze is false (torch.nn.Embedding.from_pretrained).
  static std::shared_ptr<Embedding>
  from_pretrained(const Tensor &embeddings, bool freeze = true,
                  std::optional<int64_t> padding_idx = std::nullopt,
                  std::optional<double> max_norm = std::nullopt,
                  double norm_type = 2.0);

  /// Integer indices of any shape -> [..., embedding_dim].
  Tensor forward(const Tensor &input);
  /// weight from N(0, 1), padding row zeroed.
  void reset_parameters();
  /// "10, 3" (+ ", padding_idx=0", ", max_norm=...", ...).
  std::string extra_repr() const override;

  int64_t num_embeddings;
  int64_t embedding_dim;
  std::optional<int64_t> padding_idx;
  std::optional<double> max_norm;
  double norm_type;
  bool scale_grad_by_freq;
  bool sparse;
  Tensor weight;
};

} // namespace nng::nn
