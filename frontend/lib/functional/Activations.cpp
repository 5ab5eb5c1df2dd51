//===- Activations.cpp - nng::F activations ---------------------------------===//
//
// relu, gelu, silu, leaky_relu, sigmoid, tanh, softmax and log_softmax of
// nng::F, each on the matching op of the op table (silu is x * sigmoid(x)).
// Inputs must be floating point, as in PyTorch; relu, sigmoid and tanh
// are the tensor methods of the same name (eager).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using ir::OpKind;

using nng::detail::floatInput;

Tensor relu(const Tensor &X) { return X.relu(); }

Tensor gelu(const Tensor &X, const std::string &Approximate) {
  if (Approximate != "none" && Approximate != "tanh")
    fail(ErrorKind::InvalidArgument,
         "gelu: approximate must be 'none' or 'tanh', got '", Approximate,
         "'");
  return dispatch::call1(OpKind::Gelu, {floatInput("gelu", X)},
                         dispatch::attrs({{"approximate", Approximate}}));
}

Tensor silu(const Tensor &X) { return X * sigmoid(floatInput("silu", X)); }

Tensor leaky_relu(const Tensor &X, double NegativeSlope) {
  return dispatch::call1(
      OpKind::LeakyRelu, {floatInput("leaky_relu", X)},
      dispatch::attrs({{"alpha", static_cast<float>(NegativeSlope)}}));
}

Tensor sigmoid(const Tensor &X) { return X.sigmoid(); }

Tensor tanh(const Tensor &X) { return X.tanh(); }

Tensor softmax(const Tensor &X, int64_t Dim) { return nng::softmax(X, Dim); }

Tensor log_softmax(const Tensor &X, int64_t Dim) {
  return nng::log_softmax(X, Dim);
}

} // namespace nng::F
