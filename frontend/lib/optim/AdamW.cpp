//===- AdamW.cpp - Adam with decoupled weight decay ----------------------===//
//
// torch.optim.AdamW (PyTorch 1.13): the Adam update of Adam.cpp, except that
// weight decay shrinks the parameter, p *= 1 - lr * weight_decay, after the
// step count is bumped and before the moments are updated, instead of
// adding weight_decay * p to the gradient. Its options (and so its
// state_dict's param_groups) are AdamW's: no differentiable or fused keys,
// weight_decay 1e-2 by default.
//
//===----------------------------------------------------------------------===//

#include "OptimInternal.h"
#include "nngraph/frontend/optim/Adam.h"

namespace nng::optim {

namespace {

OptionDict adamwDefaults(const AdamWOptions &O) {
  OptionDict D;
  D.set("lr", O.lr);
  D.set("betas", O.betas);
  D.set("eps", O.eps);
  D.set("weight_decay", O.weight_decay);
  D.set("amsgrad", O.amsgrad);
  D.set("foreach", OptionValue());
  D.set("maximize", O.maximize);
  D.set("capturable", false);
  return D;
}

} // namespace

AdamW::AdamW(std::vector<Tensor> Params, AdamWOptions Defaults)
    : AdamW(groupsFromParams(std::move(Params)), Defaults) {}

AdamW::AdamW(std::vector<ParamGroup> Groups, AdamWOptions Defaults)
    : Optimizer("AdamW", adamwDefaults(Defaults)) {
  checkOptions(this->defaults(), "AdamW: defaults");
  addInitialGroups(std::move(Groups));
}

void AdamW::checkOptions(const OptionDict &O, const std::string &Where) const {
  detail::checkAdamOptions(O, Where);
}

void AdamW::updateGroup(ParamGroup &Group, size_t) {
  detail::adamUpdate(
      Group,
      [this](const Tensor &P) -> ParamState & { return mutableState(P); },
      /*Decoupled=*/true);
}

void AdamW::normalizeLoadedState(ParamState &S) const {
  detail::normalizeAdamState(S);
}

} // namespace nng::optim
