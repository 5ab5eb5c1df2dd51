//===- Dropout.cpp - The Dropout layer ------------------------------------===//
//
// Dropout over nng::F::dropout (identity in eval mode), its inplace
// behaviour and extra_repr.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/nn/LayerArgs.h"

namespace nng::nn {

Dropout::Dropout(double p, bool inplace) : p(p), inplace(inplace) {
  if (!(p >= 0.0 && p <= 1.0))
    fail(ErrorKind::InvalidArgument,
         "Dropout: dropout probability has to be "
         "between 0 and 1, but got ",
         repr::pyFloat(p));
}

Tensor Dropout::forward(const Tensor &input) {
  if (!input.defined())
    fail(ErrorKind::InvalidArgument, "Dropout: the input is undefined");
  Tensor Y = F::dropout(input, p, is_training());
  if (!inplace || Y.is_same(input) ||
      (input.requires_grad() && autograd::isGradEnabled()))
    return Y;
  NoGradGuard NoGrad;
  Tensor In = input;
  In.copy_(Y);
  return In;
}

std::string Dropout::extra_repr() const {
  return "p=" + repr::pyFloat(p) + ", inplace=" + repr::pyBool(inplace);
}

} // namespace nng::nn
