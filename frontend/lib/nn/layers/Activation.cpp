//===- Activation.cpp - Activation layers ---------------------------------===//
//
// Forward of the activation modules through nng::F, the inplace
// behaviour, and their extra_repr strings (PyTorch's, character for
// character).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/nn/LayerArgs.h"

namespace nng::nn {

namespace {

void checkInput(const Tensor &X, const char *Name) {
  if (!X.defined())
    fail(ErrorKind::InvalidArgument, Name, ": the input is undefined");
}

/// With inplace, writes Result into Input when no gradient is involved and
/// returns Input; otherwise returns Result.
Tensor maybeInPlace(const Tensor &Input, const Tensor &Result, bool InPlace) {
  if (!InPlace || (Input.requires_grad() && autograd::isGradEnabled()))
    return Result;
  NoGradGuard NoGrad;
  Tensor In = Input;
  In.copy_(Result);
  return In;
}

std::string inplaceRepr(bool InPlace, bool Leading) {
  if (!InPlace)
    return "";
  return Leading ? ", inplace=True" : "inplace=True";
}

} // namespace

Tensor ReLU::forward(const Tensor &input) {
  checkInput(input, "ReLU");
  return maybeInPlace(input, F::relu(input), inplace);
}

std::string ReLU::extra_repr() const { return inplaceRepr(inplace, false); }

GELU::GELU(const std::string &approximate) : approximate(approximate) {
  if (approximate != "none" && approximate != "tanh")
    fail(ErrorKind::InvalidArgument,
         "GELU: approximate must be 'none' or "
         "'tanh', got '",
         approximate, "'");
}

Tensor GELU::forward(const Tensor &input) {
  checkInput(input, "GELU");
  return F::gelu(input, approximate);
}

std::string GELU::extra_repr() const {
  return "approximate=" + repr::pyStr(approximate);
}

Tensor SiLU::forward(const Tensor &input) {
  checkInput(input, "SiLU");
  return maybeInPlace(input, F::silu(input), inplace);
}

std::string SiLU::extra_repr() const { return inplaceRepr(inplace, false); }

Tensor LeakyReLU::forward(const Tensor &input) {
  checkInput(input, "LeakyReLU");
  return maybeInPlace(input, F::leaky_relu(input, negative_slope), inplace);
}

std::string LeakyReLU::extra_repr() const {
  return "negative_slope=" + repr::pyFloat(negative_slope) +
         inplaceRepr(inplace, true);
}

Tensor Sigmoid::forward(const Tensor &input) {
  checkInput(input, "Sigmoid");
  return F::sigmoid(input);
}

Tensor Tanh::forward(const Tensor &input) {
  checkInput(input, "Tanh");
  return F::tanh(input);
}

Tensor Softmax::forward(const Tensor &input) {
  checkInput(input, "Softmax");
  int64_t D;
  if (dim) {
    D = *dim;
  } else {
    int64_t R = input.dim();
    D = (R == 0 || R == 1 || R == 3) ? 0 : 1;
  }
  int64_t R = std::max<int64_t>(input.dim(), 1);
  if (D < -R || D >= R)
    fail(ErrorKind::InvalidArgument, "Softmax: dim ", D,
         " is out of range for input of shape ", input.shape().toString());
  return F::softmax(input, D);
}

std::string Softmax::extra_repr() const {
  return "dim=" + (dim ? std::to_string(*dim) : std::string("None"));
}

} // namespace nng::nn
