//===- Linear.cpp - Linear, Identity and Flatten layers -------------------===//
//
// Construction (parameter registration and PyTorch's reset_parameters),
// forward through nng::F / TensorOps with shape checks that name the layer
// and both shapes, and extra_repr.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/LayerArgs.h"

#include <cmath>

namespace nng::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias,
               FactoryKwargs factory)
    : in_features(in_features), out_features(out_features) {
  nng::detail::FactoryDefaultsScope Scope(factory.device, factory.dtype);
  if (in_features < 0 || out_features < 0)
    fail(ErrorKind::InvalidArgument,
         "Linear: in_features and out_features "
         "must be non-negative, got in_features=",
         in_features, ", out_features=", out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  this->bias =
      register_parameter("bias", bias ? empty({out_features}) : Tensor());
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t FanIn = init::calculate_fan_in_and_fan_out(weight).first;
    double Bound =
        FanIn > 0 ? 1.0 / std::sqrt(static_cast<double>(FanIn)) : 0.0;
    init::uniform_(bias, -Bound, Bound);
  }
}

Tensor Linear::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, type_name(), ": the input is undefined");
  if (input.dim() < 1 || input.size(-1) != in_features)
    fail(ErrorKind::ShapeMismatch, type_name(), ": input of shape ",
         input.shape().toString(), " does not end in in_features=", in_features,
         " (weight of shape ", weight.shape().toString(), ")");
  return F::linear(input, weight, bias);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) +
         ", out_features=" + std::to_string(out_features) +
         ", bias=" + repr::pyBool(bias.defined());
}

NonDynamicallyQuantizableLinear::NonDynamicallyQuantizableLinear(
    int64_t in_features, int64_t out_features, bool bias,
    FactoryKwargs factory)
    : Linear(in_features, out_features, bias, factory) {
  set_type_name("NonDynamicallyQuantizableLinear");
}

Tensor Flatten::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "Flatten: the input is undefined");
  return flatten(input, start_dim, end_dim);
}

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) +
         ", end_dim=" + std::to_string(end_dim);
}

} // namespace nng::nn
