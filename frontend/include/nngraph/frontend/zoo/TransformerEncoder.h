//===- TransformerEncoder.h - nn.TransformerEncoder and the MLP --*- C++ -*-===//
//
// The two non-vision models of the benchmarks:
//  - torch.nn.TransformerEncoder (PyTorch 1.13): num_layers copies of a
//    TransformerEncoderLayer in a ModuleList "layers" (keys
//    layers.0.self_attn.in_proj_weight, layers.0.linear1.weight, ...,
//    layers.3.norm2.bias), then an optional final LayerNorm "norm". As in
//    PyTorch, the copies start with identical weights (PyTorch deep-copies
//    one layer). transformer_encoder() is the benchmark's: d_model 256,
//    4 heads, dim_feedforward 1024, batch_first, 4 layers, no final norm.
//  - the MLP: an nn::Sequential Linear(784, 1024), ReLU, Linear(1024,
//    1024), ReLU, Linear(1024, 10), so its keys are torch's Sequential
//    keys 0.weight, 0.bias, 2.weight, 2.bias, 4.weight, 4.bias.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Transformer.h"

#include <cstdint>
#include <memory>

namespace nng::zoo {

/// A stack of TransformerEncoderLayers (torch.nn.TransformerEncoder).
class TransformerEncoder : public nn::Module<TransformerEncoder> {
public:
  /// num_layers layers built from Layer's options; norm may be null.
  TransformerEncoder(const nn::TransformerEncoderLayerOptions &Layer,
                     int64_t num_layers,
                     std::shared_ptr<nn::LayerNorm> norm = nullptr);
  /// src [S, N, E] ([N, S, E] with batch_first); mask and
  /// src_key_padding_mask go to every layer.
  Tensor forward(const Tensor &src, const Tensor &mask = Tensor(),
                 const Tensor &src_key_padding_mask = Tensor());

  int64_t num_layers;
  std::shared_ptr<nn::ModuleList> layers;
  /// Null unless given.
  std::shared_ptr<nn::LayerNorm> norm;
};

/// The benchmarks' encoder: 4 layers, d_model 256, nhead 4,
/// dim_feedforward 1024, batch_first (input [N, S, 256]).
std::shared_ptr<TransformerEncoder> transformer_encoder();

/// The benchmarks' MLP: Linear(784, 1024), ReLU, Linear(1024, 1024), ReLU,
/// Linear(1024, num_classes), with PyTorch's default init.
std::shared_ptr<nn::Sequential> mlp(int64_t num_classes = 10);

} // namespace nng::zoo
