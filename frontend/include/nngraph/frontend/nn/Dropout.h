//===- Dropout.h - The Dropout layer -------------------------- -*- C++ -*-===//
//
// torch.nn.Dropout: in training, zeroes each element with probability p
// (from the global generator) and scales the rest by 1/(1-p); the identity
// in eval mode. inplace=true also writes the result into the input when no
// gradient is involved (see Activation.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"

#include <string>

namespace nng::nn {

class Dropout : public Module<Dropout> {
public:
  /// p must lie in [0, 1].
  explicit Dropout(double p = 0.5, bool inplace = false);
  Tensor forward(const Tensor &input);
  /// "p=0.5, inplace=False".
  std::string extra_repr() const override;
  double p;
  bool inplace;
};

} // namespace nng::nn
