//===- Init.h - nn::init, PyTorch's parameter initializers ---- -*- C++ -*-===//
//
// torch.nn.init in C++: functions that fill a tensor in place (without
// recording autograd history, like PyTorch's no_grad wrappers) from the
// global generator (Random.h): uniform_, normal_, constant_, xavier_*,
// kaiming_*, orthogonal_, trunc_normal_, eye_, dirac_, plus calculate_gain
// and the fan computation. The formulas are PyTorch 1.13's exactly
// (torch/nn/init.py); the random streams are our own. Each returns the
// tensor it filled (a handle sharing the same storage).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace nng::nn::init {

/// The recommended gain for a nonlinearity (an nn.functional name):
/// 1 for linear, conv{1,2,3}d, conv_transpose{1,2,3}d and sigmoid; 5/3 for
/// tanh; sqrt(2) for relu; sqrt(2 / (1 + slope^2)) for leaky_relu (Param
/// is the negative slope, default 0.01); 3/4 for selu. Other names are an
/// error.
double calculate_gain(const std::string &Nonlinearity,
                      std::optional<double> Param = std::nullopt);

/// (fan_in, fan_out) of a weight: fan_in = size(1) * receptive field,
/// fan_out = size(0) * receptive field, where the receptive field is the
/// product of the sizes after the first two. Tensors of fewer than 2
/// dimensions are an error (as in PyTorch).
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor &T);

/// fan_in or fan_out of T by Mode ("fan_in" or "fan_out", any case).
int64_t calculate_correct_fan(const Tensor &T, const std::string &Mode);

/// Fills T from U(A, B).
Tensor uniform_(Tensor T, double A = 0.0, double B = 1.0);
/// Fills T from N(Mean, Std^2).
Tensor normal_(Tensor T, double Mean = 0.0, double Std = 1.0);
/// Fills T from N(Mean, Std^2) truncated to [A, B] (inverse-CDF sampling,
/// as PyTorch does).
Tensor trunc_normal_(Tensor T, double Mean = 0.0, double Std = 1.0,
                     double A = -2.0, double B = 2.0);
/// Fills T with Val.
Tensor constant_(Tensor T, double Val);
Tensor ones_(Tensor T);
Tensor zeros_(Tensor T);
/// Fills a 2-D T with the identity matrix (ones on the main diagonal).
Tensor eye_(Tensor T);
/// Fills a 3-, 4- or 5-D convolution weight with the Dirac delta, so each
/// group preserves as many input channels as possible.
Tensor dirac_(Tensor T, int64_t Groups = 1);

/// Glorot: U(-a, a) with a = Gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor T, double Gain = 1.0);
/// Glorot: N(0, std^2) with std = Gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor T, double Gain = 1.0);

/// He: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain =
/// calculate_gain(Nonlinearity, A), fan by Mode. A zero-element tensor is
/// left as it is.
Tensor kaiming_uniform_(Tensor T, double A = 0.0,
                        const std::string &Mode = "fan_in",
                        const std::string &Nonlinearity = "leaky_relu");
/// He: N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor T, double A = 0.0,
                       const std::string &Mode = "fan_in",
                       const std::string &Nonlinearity = "leaky_relu");

/// A (semi-)orthogonal matrix times Gain: the Q of the QR decomposition of
/// a standard normal [rows, numel/rows] matrix (transposed when wider than
/// tall), with PyTorch's sign convention Q *= sign(diag(R)); computed in
/// double. T needs at least 2 dimensions; trailing ones are flattened.
Tensor orthogonal_(Tensor T, double Gain = 1.0);

/// Fills the 2-D T as a sparse matrix: N(0, Std^2) with
/// ceil(Sparsity * rows) zeros in each column.
Tensor sparse_(Tensor T, double Sparsity, double Std = 0.01);

} // namespace nng::nn::init
