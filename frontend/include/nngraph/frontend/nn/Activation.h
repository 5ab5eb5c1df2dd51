//===- Activation.h - Activation layers ----------------------- -*- C++ -*-===//
//
// torch.nn.ReLU, GELU, SiLU, LeakyReLU, Sigmoid, Tanh and Softmax: thin
// modules over nng::F with PyTorch's arguments and extra_repr strings.
// inplace=true (ReLU, SiLU, LeakyReLU) also writes the result into the
// input when that is allowed (the input needs no gradient, or grad mode is
// off) and returns it; with autograd the result is computed out of place,
// which gives the same values and gradients.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nng::nn {

/// max(0, x).
class ReLU : public Module<ReLU> {
public:
  explicit ReLU(bool inplace = false) : inplace(inplace) {}
  Tensor forward(const Tensor &input);
  /// "" or "inplace=True".
  std::string extra_repr() const override;
  bool inplace;
};

/// x * Phi(x); approximate "none" (erf) or "tanh".
class GELU : public Module<GELU> {
public:
  explicit GELU(const std::string &approximate = "none");
  Tensor forward(const Tensor &input);
  /// "approximate='none'".
  std::string extra_repr() const override;
  std::string approximate;
};

/// x * sigmoid(x).
class SiLU : public Module<SiLU> {
public:
  explicit SiLU(bool inplace = false) : inplace(inplace) {}
  Tensor forward(const Tensor &input);
  std::string extra_repr() const override;
  bool inplace;
};

/// max(0, x) + negative_slope * min(0, x).
class LeakyReLU : public Module<LeakyReLU> {
public:
  explicit LeakyReLU(double negative_slope = 1e-2, bool inplace = false)
      : negative_slope(negative_slope), inplace(inplace) {}
  Tensor forward(const Tensor &input);
  /// "negative_slope=0.01" (+ ", inplace=True").
  std::string extra_repr() const override;
  double negative_slope;
  bool inplace;
};

/// 1 / (1 + exp(-x)).
class Sigmoid : public Module<Sigmoid> {
public:
  Sigmoid() = default;
  Tensor forward(const Tensor &input);
};

class Tanh : public Module<Tanh> {
public:
  Tanh() = default;
  Tensor forward(const Tensor &input);
};

/// softmax along dim; with dim = nullopt, PyTorch's legacy choice: axis 0
/// for 0-, 1- and 3-D inputs, else axis 1.
class Softmax : public Module<Softmax> {
public:
  explicit Softmax(std::optional<int64_t> dim = std::nullopt) : dim(dim) {}
  Tensor forward(const Tensor &input);
  /// "dim=1" or "dim=None".
  std::string extra_repr() const override;
  std::optional<int64_t> dim;
};

} // namespace nng::nn
