//===- TransformerEncoder.cpp - nn.TransformerEncoder and the MLP ----------===//
//
// The layer stack (copies made by loading layer 0's state into each new
// layer, as PyTorch's deepcopy gives identical starting weights) and the
// benchmark configurations.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/TransformerEncoder.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/runtime/Error.h"

namespace nng::zoo {

TransformerEncoder::TransformerEncoder(
    const nn::TransformerEncoderLayerOptions &Layer, int64_t num_layers,
    std::shared_ptr<nn::LayerNorm> norm)
    : num_layers(num_layers) {
  if (num_layers <= 0)
    fail(ErrorKind::InvalidArgument,
         "TransformerEncoder: num_layers must be positive, got ", num_layers);
  layers = register_module("layers", nn::make<nn::ModuleList>());
  auto First = nn::make<nn::TransformerEncoderLayer>(Layer);
  layers->append(First);
  for (int64_t I = 1; I < num_layers; ++I) {
    auto Copy = nn::make<nn::TransformerEncoderLayer>(Layer);
    Copy->load_state_dict(First->state_dict());
    layers->append(Copy);
  }
  if (norm)
    this->norm = register_module("norm", std::move(norm));
}

Tensor TransformerEncoder::forward(const Tensor &src, const Tensor &mask,
                                   const Tensor &src_key_padding_mask) {
  Tensor Out = src;
  for (int64_t I = 0; I < num_layers; ++I)
    Out = (*layers->at<nn::TransformerEncoderLayer>(I))(Out, mask,
                                                        src_key_padding_mask);
  if (norm)
    Out = (*norm)(Out);
  return Out;
}

std::shared_ptr<TransformerEncoder> transformer_encoder() {
  nn::TransformerEncoderLayerOptions O;
  O.d_model = 256;
  O.nhead = 4;
  O.dim_feedforward = 1024;
  O.batch_first = true;
  return nn::make<TransformerEncoder>(O, 4);
}

std::shared_ptr<nn::Sequential> mlp(int64_t num_classes) {
  if (num_classes <= 0)
    fail(ErrorKind::InvalidArgument, "mlp: num_classes must be positive, got ",
         num_classes);
  return nn::make<nn::Sequential>(
      nn::make<nn::Linear>(784, 1024), nn::make<nn::ReLU>(),
      nn::make<nn::Linear>(1024, 1024), nn::make<nn::ReLU>(),
      nn::make<nn::Linear>(1024, num_classes));
}

} // namespace nng::zoo
