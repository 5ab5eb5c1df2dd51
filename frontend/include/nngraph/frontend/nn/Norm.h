//===- Norm.h - Normalization layers -------------------------- -*- C++ -*-===//
//
// torch.nn.BatchNorm1d, BatchNorm2d, LayerNorm and GroupNorm with PyTorch
// 1.13's arguments, parameters (weight = 1, bias = 0; absent when not
// affine) and buffers (running_mean = 0, running_var = 1 and the i64
// num_batches_tracked; absent without track_running_stats), extra_repr and
// behaviour:
//   - training: batch statistics; running statistics (when tracked) are
//     updated with momentum, or with a cumulative average when momentum is
//     nullopt (PyTorch's momentum=None), and num_batches_tracked counts;
//   - eval: the running statistics, or batch statistics when they are not
//     tracked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nng::nn {

/// BatchNorm arguments by name (PyTorch's order).
struct BatchNormOptions {
  int64_t num_features = -1;
  double eps = 1e-5;
  /// nullopt: cumulative moving average (PyTorch's momentum=None).
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
  /// Where and as what the parameters are created (PyTorch's device= and
  /// dtype=; unset: the defaults).
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

namespace detail {

/// The state and logic of PyTorch's _BatchNorm, shared by BatchNorm1d/2d.
class BatchNormBase {
public:
  int64_t num_features = 0;
  double eps = 1e-5;
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
  /// [num_features]; undefined unless affine.
  Tensor weight;
  Tensor bias;
  /// [num_features]; undefined unless track_running_stats.
  Tensor running_mean;
  Tensor running_var;
  /// A 0-d i64 tensor; undefined unless track_running_stats.
  Tensor num_batches_tracked;

  /// running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  /// reset_running_stats(); weight = 1, bias = 0.
  void reset_parameters();

protected:
  BatchNormBase() = default;
  void setUp(ModuleBase &Self, const BatchNormOptions &O);
  /// "16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True".
  std::string normRepr() const;
  /// _BatchNorm.forward; Name is the layer type for messages.
  Tensor run(const ModuleBase &Self, const Tensor &Input,
             const std::string &Name);
};

} // namespace detail

/// Batch normalization over [N, C] or [N, C, L].
class BatchNorm1d : public Module<BatchNorm1d>, public detail::BatchNormBase {
public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true,
                       FactoryKwargs factory = {});
  explicit BatchNorm1d(const BatchNorm1dOptions &O);
  Tensor forward(const Tensor &input);
  std::string extra_repr() const override { return normRepr(); }
};

/// Batch normalization over [N, C, H, W].
class BatchNorm2d : public Module<BatchNorm2d>, public detail::BatchNormBase {
public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true,
                       FactoryKwargs factory = {});
  explicit BatchNorm2d(const BatchNorm2dOptions &O);
  Tensor forward(const Tensor &input);
  std::string extra_repr() const override { return normRepr(); }
};

/// Normalizes over the trailing normalized_shape axes; weight and bias of
/// that shape when elementwise_affine.
class LayerNorm : public Module<LayerNorm> {
public:
  /// normalized_shape: an int (LayerNorm(512)) or a shape ({16, 16}).
  explicit LayerNorm(IntOrTuple normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true,
                     FactoryKwargs factory = {});
  Tensor forward(const Tensor &input);
  /// weight = 1, bias = 0.
  void reset_parameters();
  /// "(512,), eps=1e-05, elementwise_affine=True".
  std::string extra_repr() const override;

  std::vector<int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight;
  Tensor bias;
};

/// Normalizes groups of channels of [N, C, *]; weight and bias
/// [num_channels] when affine.
class GroupNorm : public Module<GroupNorm> {
public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5,
            bool affine = true, FactoryKwargs factory = {});
  Tensor forward(const Tensor &input);
  void reset_parameters();
  /// "4, 16, eps=1e-05, affine=True".
  std::string extra_repr() const override;

  int64_t num_groups;
  int64_t num_channels;
  double eps;
  bool affine;
  Tensor weight;
  Tensor bias;
};

} // namespace nng::nn
