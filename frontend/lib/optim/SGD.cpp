//===- SGD.cpp - Stochastic gradient descent ------------------------------===//
//
// torch.optim.SGD's _single_tensor_sgd, formula for formula:
//   d_p = grad (negated with maximize) [+ weight_decay * p]
//   with momentum: buf = clone(d_p) on the first step, else
//                  buf = momentum * buf + (1 - dampening) * d_p
//                  d_p = d_p + momentum * buf (nesterov) or buf
//   p -= lr * d_p
// The state holds "momentum_buffer", None while momentum is 0.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/SGD.h"
#include "OptimInternal.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::optim {

namespace {

OptionDict sgdDefaults(const SGDOptions &O) {
  OptionDict D;
  D.set("lr", O.lr ? OptionValue(*O.lr) : OptionValue());
  D.set("momentum", O.momentum);
  D.set("dampening", O.dampening);
  D.set("weight_decay", O.weight_decay);
  D.set("nesterov", O.nesterov);
  D.set("maximize", O.maximize);
  D.set("foreach", OptionValue());
  D.set("differentiable", false);
  return D;
}

} // namespace

SGD::SGD(std::vector<Tensor> Params, SGDOptions Defaults)
    : SGD(groupsFromParams(std::move(Params)), Defaults) {}

SGD::SGD(std::vector<ParamGroup> Groups, SGDOptions Defaults)
    : Optimizer("SGD", sgdDefaults(Defaults)) {
  if (Defaults.lr && *Defaults.lr < 0)
    fail(ErrorKind::InvalidArgument,
         "SGD: Invalid learning rate: ", *Defaults.lr,
         "; the learning rate must be >= 0");
  addInitialGroups(std::move(Groups));
}

void SGD::checkOptions(const OptionDict &O, const std::string &Where) const {
  detail::checkNumber(O, "lr", "learning rate", Where);
  double Momentum = detail::checkNumber(O, "momentum", "momentum value", Where);
  double Dampening =
      detail::checkNumber(O, "dampening", "dampening value", Where, -HUGE_VAL);
  detail::checkNumber(O, "weight_decay", "weight_decay value", Where);
  bool Nesterov = detail::checkFlag(O, "nesterov", Where);
  detail::checkFlag(O, "maximize", Where);
  detail::checkNoneOrFlag(O, "foreach", Where);
  detail::checkOff(O, "differentiable", Where,
                   "differentiating through the optimizer step");
  if (Nesterov && (Momentum <= 0 || Dampening != 0))
    fail(ErrorKind::InvalidArgument, Where,
         ": Nesterov momentum requires a momentum and zero dampening (got "
         "momentum ",
         Momentum, ", dampening ", Dampening,
         "); set momentum > 0 and dampening = 0, or nesterov = false");
}

void SGD::updateGroup(ParamGroup &Group, size_t) {
  const OptionDict &O = Group.options;
  double Lr = O.number("lr"), Momentum = O.number("momentum");
  double Dampening = O.number("dampening");
  double WeightDecay = O.number("weight_decay");
  bool Nesterov = O.flag("nesterov"), Maximize = O.flag("maximize");
  for (Tensor &P : Group.params) {
    Tensor Grad = P.grad();
    if (!Grad.defined())
      continue;
    ParamState &S = mutableState(P);
    Tensor Dp = Maximize ? neg(Grad) : Grad;
    if (WeightDecay != 0)
      Dp = add(Dp, P, WeightDecay);
    if (Momentum != 0) {
      Tensor Buf = stateTensor(S, "momentum_buffer");
      if (!Buf.defined()) {
        // The first step: the buffer is the gradient itself, undamped.
        Buf = Tensor(Dp.data().clone());
        S["momentum_buffer"] = Buf;
      } else {
        Buf.mul_(Momentum).add_(Dp, 1 - Dampening);
      }
      Dp = Nesterov ? add(Dp, Buf, Momentum) : Buf;
    } else if (!S.count("momentum_buffer")) {
      S["momentum_buffer"] = std::monostate();
    }
    P.add_(Dp, -Lr);
  }
}

void SGD::normalizeLoadedState(ParamState &S) const {
  auto It = S.find("momentum_buffer");
  if (It != S.end() && std::holds_alternative<double>(It->second))
    fail(ErrorKind::InvalidArgument,
         "SGD: a parameter's momentum_buffer is "
         "a number; it must be a tensor or None (load a state_dict saved by "
         "SGD)");
}

} // namespace nng::optim
