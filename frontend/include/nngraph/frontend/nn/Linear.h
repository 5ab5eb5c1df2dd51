//===- Linear.h - Linear, Identity and Flatten layers --------- -*- C++ -*-===//
//
// torch.nn.Linear, NonDynamicallyQuantizableLinear (MultiheadAttention's
// out_proj), Identity and Flatten, with PyTorch 1.13's constructor
// arguments, parameter names and shapes (weight [out_features,
// in_features], bias [out_features]), default initialization and
// extra_repr strings.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <string>

namespace nng::nn {

/// y = x W^T + b over the last axis of x.
class Linear : public Module<Linear> {
public:
  /// weight [out_features, in_features] from kaiming_uniform_(a=sqrt(5));
  /// bias [out_features] from U(-1/sqrt(in_features), 1/sqrt(in_features)).
  Linear(int64_t in_features, int64_t out_features, bool bias = true,
         FactoryKwargs factory = {});

  /// input [..., in_features] -> [..., out_features].
  Tensor forward(const Tensor &input);
  /// Re-draws weight and bias as the constructor does.
  void reset_parameters();
  /// "in_features=4, out_features=3, bias=True".
  std::string extra_repr() const override;

  int64_t in_features;
  int64_t out_features;
  Tensor weight;
  /// Undefined when constructed with bias=false.
  Tensor bias;
};

/// A Linear that PyTorch prints as NonDynamicallyQuantizableLinear (the
/// type of MultiheadAttention.out_proj); otherwise identical.
class NonDynamicallyQuantizableLinear : public Linear {
public:
  NonDynamicallyQuantizableLinear(int64_t in_features, int64_t out_features,
                                  bool bias = true, FactoryKwargs factory = {});
};

/// Returns its input (a placeholder, e.g. for a removed layer).
class Identity : public Module<Identity> {
public:
  Identity() = default;
  Tensor forward(const Tensor &input) { return input; }
};

/// Flattens axes start_dim..end_dim into one (default: all but the batch
/// axis).
class Flatten : public Module<Flatten> {
public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor &input);
  /// "start_dim=1, end_dim=-1".
  std::string extra_repr() const override;

  int64_t start_dim;
  int64_t end_dim;
};

} // namespace nng::nn
