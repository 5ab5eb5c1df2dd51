//===- RNN.h - RNN, LSTM and GRU layers ----------------------*- C++ -*-===//
//
// torch.nn.RNN, LSTM and GRU (PyTorch 1.13): multi-layer, bidirectional,
// batch_first, dropout between layers in training, LSTM's proj_size, an
// unbatched 2-d input; parameters named and shaped as PyTorch's
// (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k},
// weight_hr_l{k}), so state_dicts load both ways, all drawn from
// U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) as PyTorch does. Built on
// eager ops, so autograd and tracing see through them. Gates in PyTorch's
// order: LSTM (input, forget, cell, output), GRU (reset, update, new).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace nng::nn {

/// The keyword arguments of nn.RNN / nn.LSTM / nn.GRU after input_size and
/// hidden_size: nn::LSTM(10, 20, {.num_layers = 2, .bidirectional = true}).
struct RNNOptions {
  int64_t num_layers = 1;
  /// RNN only: "tanh" or "relu".
  std::string nonlinearity = "tanh";
  bool bias = true;
  /// Input and output [batch, seq, feature] instead of [seq, batch, ...].
  bool batch_first = false;
  /// Dropout on each layer's output but the last's, in training.
  double dropout = 0.0;
  bool bidirectional = false;
  /// LSTM only: h is projected to this size (0: none).
  int64_t proj_size = 0;
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};

namespace detail {
/// What the three layers share (torch's RNNBase).
struct RNNConfig {
  enum Kind { RnnTanh, RnnRelu, Lstm, Gru } K = RnnTanh;
  int64_t InputSize = 0, HiddenSize = 0;
  RNNOptions O;
  /// Gate rows per direction: hidden_size times 1, 4 or 3.
  int64_t gateSize() const;
  int64_t numDirections() const { return O.bidirectional ? 2 : 1; }
  /// The size of h (proj_size when set).
  int64_t realHidden() const { return O.proj_size > 0 ? O.proj_size : HiddenSize; }
};
/// Checks C (naming Type) and registers its parameters on M in PyTorch's
/// order, then draws them.
void registerRNNParameters(ModuleBase &M, const RNNConfig &C,
                           const std::string &Type);
void resetRNNParameters(ModuleBase &M, const RNNConfig &C);
/// Runs the stack on Input with initial states H0 (and C0 for LSTM; both
/// may be undefined: zeros). Returns output, h_n, c_n (undefined unless
/// LSTM).
std::tuple<Tensor, Tensor, Tensor> runRNN(const ModuleBase &M,
                                          const RNNConfig &C,
                                          const Tensor &Input, const Tensor &H0,
                                          const Tensor &C0,
                                          const std::string &Type);
std::string rnnExtraRepr(const RNNConfig &C);
} // namespace detail

/// An Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).
class RNN : public Module<RNN> {
public:
  RNN(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  /// input [seq, batch, input_size] (batch_first: [batch, seq, ...]) or
  /// [seq, input_size]; hx [layers * directions, batch, hidden] or
  /// undefined (zeros). Returns (output, h_n).
  std::pair<Tensor, Tensor> forward(const Tensor &input,
                                    const Tensor &hx = Tensor());
  void reset_parameters();
  /// "10, 20, num_layers=2", as PyTorch prints it.
  std::string extra_repr() const override;

  int64_t input_size, hidden_size, num_layers;
  std::string nonlinearity;
  bool bias, batch_first;
  double dropout;
  bool bidirectional;

private:
  detail::RNNConfig Config;
};

/// A long short-term memory: gates i, f, g, o; c_t = f * c_{t-1} + i * g,
/// h_t = o * tanh(c_t), projected by weight_hr when proj_size > 0.
class LSTM : public Module<LSTM> {
public:
  LSTM(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  /// hx: (h_0 [layers * directions, batch, proj_size or hidden], c_0
  /// [layers * directions, batch, hidden]), or none (zeros). Returns
  /// (output, (h_n, c_n)).
  std::tuple<Tensor, std::pair<Tensor, Tensor>>
  forward(const Tensor &input,
          const std::optional<std::pair<Tensor, Tensor>> &hx = std::nullopt);
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t input_size, hidden_size, num_layers;
  bool bias, batch_first;
  double dropout;
  bool bidirectional;
  int64_t proj_size;

private:
  detail::RNNConfig Config;
};

/// A gated recurrent unit: r, z from sigmoid, n = tanh(x W_in + b_in + r *
/// (h W_hn + b_hn)), h_t = (1 - z) * n + z * h_{t-1}.
class GRU : public Module<GRU> {
public:
  GRU(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  /// As RNN::forward.
  std::pair<Tensor, Tensor> forward(const Tensor &input,
                                    const Tensor &hx = Tensor());
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t input_size, hidden_size, num_layers;
  bool bias, batch_first;
  double dropout;
  bool bidirectional;

private:
  detail::RNNConfig Config;
};

} // namespace nng::nn
