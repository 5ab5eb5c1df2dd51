//===- Norm.cpp - Normalization layers ------------------------------------===//
//
// BatchNorm1d/2d (PyTorch's _NormBase/_BatchNorm: registration of the
// affine parameters and running-statistics buffers, reset, the momentum /
// cumulative-average factor, which statistics forward uses in train and
// eval), LayerNorm and GroupNorm, all computing through nng::F.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/nn/Init.h"

#include <algorithm>
#include <cmath>

namespace nng::nn {

namespace detail {

void BatchNormBase::setUp(ModuleBase &Self, const BatchNormOptions &O) {
  if (O.num_features < 0)
    fail(ErrorKind::InvalidArgument, Self.type_name(),
         ": num_features is required and must be non-negative, got ",
         O.num_features);
  if (O.momentum && !std::isfinite(*O.momentum))
    fail(ErrorKind::InvalidArgument, Self.type_name(),
         ": momentum must be a finite number or nullopt");
  num_features = O.num_features;
  eps = O.eps;
  momentum = O.momentum;
  affine = O.affine;
  track_running_stats = O.track_running_stats;
  weight = Self.register_parameter("weight",
                                   affine ? empty({num_features}) : Tensor());
  bias = Self.register_parameter("bias",
                                 affine ? empty({num_features}) : Tensor());
  running_mean = Self.register_buffer(
      "running_mean", track_running_stats ? zeros({num_features}) : Tensor());
  running_var = Self.register_buffer(
      "running_var", track_running_stats ? ones({num_features}) : Tensor());
  num_batches_tracked = Self.register_buffer(
      "num_batches_tracked",
      track_running_stats ? scalar_tensor(0, DType::I64) : Tensor());
  reset_parameters();
}

void BatchNormBase::reset_running_stats() {
  if (!track_running_stats)
    return;
  NoGradGuard NoGrad;
  running_mean.zero_();
  running_var.fill_(1.0);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

std::string BatchNormBase::normRepr() const {
  return std::to_string(num_features) + ", eps=" + repr::pyFloat(eps) +
         ", momentum=" + (momentum ? repr::pyFloat(*momentum) : "None") +
         ", affine=" + repr::pyBool(affine) +
         ", track_running_stats=" + repr::pyBool(track_running_stats);
}

Tensor BatchNormBase::run(const ModuleBase &Self, const Tensor &Input,
                          const std::string &Name) {
  if (Input.size(1) != num_features)
    fail(ErrorKind::ShapeMismatch, Name, ": expected input with ", num_features,
         " channels (num_features, axis 1), got input of shape ",
         Input.shape().toString());
  bool Training = Self.is_training();
  double Factor = momentum.value_or(0.0);
  // A trace records no running-statistics update (docs/fx.md); a meta
  // module has no count to read (its statistics updates are no-ops).
  bool Count = Training && track_running_stats &&
               num_batches_tracked.defined() && !num_batches_tracked.is_meta() &&
               !dispatch::inSymbolicMode();
  int64_t N = 0;
  if (Count) {
    // The batch counts before its statistics (as in PyTorch), but the count
    // is stored only once F::batch_norm succeeded: a refused batch changes
    // no state.
    N = num_batches_tracked.item<int64_t>() + 1;
    if (Input.numel() / std::max<int64_t>(num_features, 1) <= 1)
      fail(ErrorKind::InvalidArgument, Name,
           ": expected more than 1 value "
           "per channel when training, got input of shape ",
           Input.shape().toString());
    Factor = momentum ? *momentum : 1.0 / static_cast<double>(N);
  }
  // Batch statistics in training, and in eval when none are tracked.
  bool UseBatchStats =
      Training || (!running_mean.defined() && !running_var.defined());
  bool PassBuffers = !Training || track_running_stats;
  Tensor Y = F::batch_norm(Input, PassBuffers ? running_mean : Tensor(),
                           PassBuffers ? running_var : Tensor(), weight, bias,
                           UseBatchStats, Factor, eps);
  if (Count) {
    NoGradGuard NoGrad;
    num_batches_tracked.fill_(static_cast<double>(N));
  }
  return Y;
}

} // namespace detail

BatchNorm1d::BatchNorm1d(int64_t num_features, double eps,
                         std::optional<double> momentum, bool affine,
                         bool track_running_stats, FactoryKwargs factory)
    : BatchNorm1d(BatchNormOptions{num_features, eps, momentum, affine,
                                   track_running_stats, factory.device,
                                   factory.dtype}) {}

BatchNorm1d::BatchNorm1d(const BatchNorm1dOptions &O) {
  nng::detail::FactoryDefaultsScope Scope(O.device, O.dtype);
  setUp(*this, O);
}

Tensor BatchNorm1d::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "BatchNorm1d: the input is undefined");
  if (input.dim() != 2 && input.dim() != 3)
    fail(ErrorKind::ShapeMismatch,
         "BatchNorm1d: expected 2D or 3D input "
         "(got ",
         input.dim(), "D input of shape ", input.shape().toString(), ")");
  return run(*this, input, "BatchNorm1d");
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps,
                         std::optional<double> momentum, bool affine,
                         bool track_running_stats, FactoryKwargs factory)
    : BatchNorm2d(BatchNormOptions{num_features, eps, momentum, affine,
                                   track_running_stats, factory.device,
                                   factory.dtype}) {}

BatchNorm2d::BatchNorm2d(const BatchNorm2dOptions &O) {
  nng::detail::FactoryDefaultsScope Scope(O.device, O.dtype);
  setUp(*this, O);
}

Tensor BatchNorm2d::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "BatchNorm2d: the input is undefined");
  if (input.dim() != 4)
    fail(ErrorKind::ShapeMismatch, "BatchNorm2d: expected 4D input (got ",
         input.dim(), "D input of shape ", input.shape().toString(), ")");
  return run(*this, input, "BatchNorm2d");
}

LayerNorm::LayerNorm(IntOrTuple normalized_shape, double eps,
                     bool elementwise_affine, FactoryKwargs factory)
    : normalized_shape(normalized_shape.values()), eps(eps),
      elementwise_affine(elementwise_affine) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  for (int64_t D : this->normalized_shape)
    if (D < 0)
      fail(ErrorKind::InvalidArgument,
           "LayerNorm: normalized_shape must be "
           "non-negative, got ",
           normalized_shape.repr());
  weight = register_parameter(
      "weight", elementwise_affine ? empty(this->normalized_shape) : Tensor());
  bias = register_parameter(
      "bias", elementwise_affine ? empty(this->normalized_shape) : Tensor());
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (elementwise_affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor LayerNorm::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "LayerNorm: the input is undefined");
  int64_t K = static_cast<int64_t>(normalized_shape.size());
  bool Ok = input.dim() >= K;
  for (int64_t I = 0; Ok && I < K; ++I)
    Ok = input.size(input.dim() - K + I) == normalized_shape[I];
  if (!Ok)
    fail(ErrorKind::ShapeMismatch, "LayerNorm: input of shape ",
         input.shape().toString(), " does not end with normalized_shape ",
         repr::pyTuple(normalized_shape));
  return F::layer_norm(input, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  return repr::pyTuple(normalized_shape) + ", eps=" + repr::pyFloat(eps) +
         ", elementwise_affine=" + repr::pyBool(elementwise_affine);
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps,
                     bool affine, FactoryKwargs factory)
    : num_groups(num_groups), num_channels(num_channels), eps(eps),
      affine(affine) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (num_groups <= 0 || num_channels < 0)
    fail(ErrorKind::InvalidArgument,
         "GroupNorm: num_groups must be positive "
         "and num_channels non-negative, got num_groups=",
         num_groups, ", num_channels=", num_channels);
  if (num_channels % num_groups != 0)
    fail(ErrorKind::InvalidArgument, "GroupNorm: num_channels (", num_channels,
         ") must be divisible by num_groups (", num_groups, ")");
  weight =
      register_parameter("weight", affine ? empty({num_channels}) : Tensor());
  bias = register_parameter("bias", affine ? empty({num_channels}) : Tensor());
  reset_parameters();
}

void GroupNorm::reset_parameters() {
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor GroupNorm::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "GroupNorm: the input is undefined");
  if (input.dim() < 2 || input.size(1) != num_channels)
    fail(ErrorKind::ShapeMismatch, "GroupNorm: expected input of shape [N, ",
         num_channels, ", *] (num_channels=", num_channels,
         "), got input of shape ", input.shape().toString());
  return F::group_norm(input, num_groups, weight, bias, eps);
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(num_groups) + ", " + std::to_string(num_channels) +
         ", eps=" + repr::pyFloat(eps) + ", affine=" + repr::pyBool(affine);
}

} // namespace nng::nn
