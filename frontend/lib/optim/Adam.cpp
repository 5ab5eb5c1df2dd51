//===- Adam.cpp - Adam and AdamW: one implementation ----------------------===//
//
// torch.optim.Adam's _single_tensor_adam (PyTorch 1.13), formula for
// formula, for one parameter p with gradient g:
//   g = -g with maximize;  step += 1 (a float32 0-d tensor)
//   Adam:  g = g + weight_decay * p        AdamW: p *= 1 - lr * weight_decay
//   exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
//   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
//   bc1 = 1 - beta1^step, bc2 = 1 - beta2^step  (in double, as Python does)
//   amsgrad: max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq), used below
//   denom = sqrt(exp_avg_sq) / sqrt(bc2) + eps
//   p -= (lr / bc1) * exp_avg / denom
// AdamBase holds it, the option checks and the state handling; Adam and
// AdamW are its two configurations: the weight decay (AdamW's decoupled
// one shrinks the parameter after the step count is bumped and before the
// moments are updated) and the options, in PyTorch's key order (AdamW's
// have no differentiable or fused keys and weight_decay 1e-2 by default),
// which the state_dict's param_groups show.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/Adam.h"
#include "OptimInternal.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::optim {

namespace {

/// Turns a number "step" (older PyTorch state dicts) into a 0-d float32
/// tensor, as Adam's __setstate__ does, and checks the state's tensors.
void normalizeAdamState(ParamState &S) {
  auto It = S.find("step");
  if (It != S.end())
    if (const double *D = std::get_if<double>(&It->second))
      It->second = Tensor(rt::Tensor::scalar<float>(static_cast<float>(*D)));
  if (S.empty())
    return;
  for (const char *Key : {"step", "exp_avg", "exp_avg_sq"}) {
    Tensor T = stateTensor(S, Key);
    if (!T.defined())
      fail(ErrorKind::InvalidArgument,
           "Adam: a parameter's state has no tensor '", Key,
           "' (it needs step, exp_avg and exp_avg_sq); load a state_dict "
           "saved by Adam or AdamW");
    if (std::string(Key) == "step" && T.numel() != 1)
      fail(ErrorKind::InvalidArgument, "Adam: a parameter's state 'step' has ",
           T.numel(), " elements; it must be a single number");
  }
}

/// The defaults of Adam (Decoupled false) or AdamW, keys in PyTorch
/// 1.13's order: Adam's maximize precedes foreach, AdamW's follows it.
template <typename Options>
OptionDict defaultsOf(const Options &O, bool Decoupled) {
  OptionDict D;
  D.set("lr", O.lr);
  D.set("betas", O.betas);
  D.set("eps", O.eps);
  D.set("weight_decay", O.weight_decay);
  D.set("amsgrad", O.amsgrad);
  if (!Decoupled)
    D.set("maximize", O.maximize);
  D.set("foreach", OptionValue());
  if (Decoupled)
    D.set("maximize", O.maximize);
  D.set("capturable", false);
  if (!Decoupled) {
    D.set("differentiable", false);
    D.set("fused", false);
  }
  return D;
}

} // namespace

AdamBase::AdamBase(std::string Name, OptionDict Defaults,
                   bool DecoupledWeightDecay)
    : Optimizer(std::move(Name), std::move(Defaults)),
      Decoupled(DecoupledWeightDecay) {}

void AdamBase::checkOptions(const OptionDict &O,
                            const std::string &Where) const {
  detail::checkAdamOptions(O, Where);
  if (!Decoupled) {
    detail::checkOff(O, "differentiable", Where,
                     "differentiating through the optimizer step");
    detail::checkOff(O, "fused", Where, "the fused CUDA kernel");
  }
}

void AdamBase::normalizeLoadedState(ParamState &S) const {
  normalizeAdamState(S);
}

void AdamBase::updateGroup(ParamGroup &Group, size_t) {
  const OptionDict &O = Group.options;
  double Lr = O.number("lr"), Eps = O.number("eps");
  double WeightDecay = O.number("weight_decay");
  double Beta1 = O.at("betas").to_tuple()[0];
  double Beta2 = O.at("betas").to_tuple()[1];
  bool Amsgrad = O.flag("amsgrad"), Maximize = O.flag("maximize");
  for (Tensor &P : Group.params) {
    Tensor Grad = P.grad();
    if (!Grad.defined())
      continue;
    if (Maximize)
      Grad = neg(Grad);
    ParamState &S = mutableState(P);
    // Lazy state initialization.
    if (S.empty()) {
      S["step"] = Tensor(rt::Tensor::scalar<float>(0.0f));
      S["exp_avg"] = zeros_like(P);
      S["exp_avg_sq"] = zeros_like(P);
      if (Amsgrad)
        S["max_exp_avg_sq"] = zeros_like(P);
    }
    normalizeAdamState(S);
    Tensor StepT = stateTensor(S, "step");
    Tensor ExpAvg = stateTensor(S, "exp_avg");
    Tensor ExpAvgSq = stateTensor(S, "exp_avg_sq");
    if (!StepT.defined() || !ExpAvg.defined() || !ExpAvgSq.defined())
      fail(ErrorKind::InvalidArgument,
           "Adam: the state of a parameter lacks step, exp_avg or "
           "exp_avg_sq; load a state_dict saved by Adam/AdamW");
    // step_t += 1, in float32 like PyTorch's tensor.
    float Step = StepT.item<float>() + 1.0f;
    StepT.fill_(Step);

    if (Decoupled)
      P.mul_(1 - Lr * WeightDecay);
    else if (WeightDecay != 0)
      Grad = add(Grad, P, WeightDecay);

    ExpAvg.mul_(Beta1).add_(Grad, 1 - Beta1);
    ExpAvgSq.mul_(Beta2).add_(mul(Grad, Grad), 1 - Beta2);

    double BiasCorrection1 = 1 - std::pow(Beta1, static_cast<double>(Step));
    double BiasCorrection2 = 1 - std::pow(Beta2, static_cast<double>(Step));
    double StepSize = Lr / BiasCorrection1;
    double BiasCorrection2Sqrt = std::sqrt(BiasCorrection2);

    Tensor SecondMoment = ExpAvgSq;
    if (Amsgrad) {
      Tensor MaxSq = stateTensor(S, "max_exp_avg_sq");
      if (!MaxSq.defined()) {
        // amsgrad switched on after the first step: start from zeros.
        MaxSq = zeros_like(P);
        S["max_exp_avg_sq"] = MaxSq;
      }
      MaxSq.copy_(maximum(MaxSq, ExpAvgSq));
      SecondMoment = MaxSq;
    }
    Tensor Denom = sqrt(SecondMoment) / BiasCorrection2Sqrt + Eps;
    P.add_(div(ExpAvg, Denom), -StepSize);
  }
}

Adam::Adam(std::vector<Tensor> Params, AdamOptions Defaults)
    : Adam(groupsFromParams(std::move(Params)), Defaults) {}

Adam::Adam(std::vector<ParamGroup> Groups, AdamOptions Defaults)
    : AdamBase("Adam", defaultsOf(Defaults, /*Decoupled=*/false),
               /*DecoupledWeightDecay=*/false) {
  checkOptions(this->defaults(), "Adam: defaults");
  addInitialGroups(std::move(Groups));
}

AdamW::AdamW(std::vector<Tensor> Params, AdamWOptions Defaults)
    : AdamW(groupsFromParams(std::move(Params)), Defaults) {}

AdamW::AdamW(std::vector<ParamGroup> Groups, AdamWOptions Defaults)
    : AdamBase("AdamW", defaultsOf(Defaults, /*Decoupled=*/true),
               /*DecoupledWeightDecay=*/true) {
  checkOptions(this->defaults(), "AdamW: defaults");
  addInitialGroups(std::move(Groups));
}

} // namespace nng::optim
