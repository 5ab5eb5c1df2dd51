//===- Adam.h - Adam and AdamW --------------------------------------------===//
//
// torch.optim.Adam and torch.optim.AdamW (PyTorch 1.13): bias-corrected
// moment estimates, AMSGrad, maximize; Adam adds weight_decay * param to the
// gradient (L2), AdamW decays the parameter itself by lr * weight_decay
// before the update (decoupled weight decay). The per-parameter state is
// PyTorch's: step (a 0-d float32 tensor), exp_avg, exp_avg_sq and, with
// amsgrad, max_exp_avg_sq. Both are one implementation, AdamBase.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/Optimizer.h"

namespace nng::optim {

/// The defaults of Adam (torch.optim.Adam's arguments).
struct AdamOptions {
  double lr = 1e-3;
  /// Decay rates of the first and second moment estimates.
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  /// L2 penalty added to the gradient.
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;
};

/// The defaults of AdamW: as Adam's, with weight_decay 1e-2 (decoupled).
struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

/// What Adam and AdamW share: one implementation of PyTorch 1.13's
/// _single_tensor_adam, its option checks and its state (Adam.cpp). The two
/// differ only in the weight decay (DecoupledWeightDecay: AdamW's) and in
/// their options (AdamW has no differentiable or fused keys).
class AdamBase : public Optimizer {
protected:
  AdamBase(std::string Name, OptionDict Defaults, bool DecoupledWeightDecay);

  void checkOptions(const OptionDict &O,
                    const std::string &Where) const override;
  void updateGroup(ParamGroup &Group, size_t Index) override;
  void normalizeLoadedState(ParamState &S) const override;

private:
  bool Decoupled;
};

/// Adam: optim::Adam Opt(Model.parameters(), {.lr = 1e-3, .amsgrad = true});
class Adam final : public AdamBase {
public:
  Adam(std::vector<Tensor> Params, AdamOptions Defaults = {});
  Adam(std::vector<ParamGroup> Groups, AdamOptions Defaults = {});
};

/// AdamW: Adam with decoupled weight decay.
class AdamW final : public AdamBase {
public:
  AdamW(std::vector<Tensor> Params, AdamWOptions Defaults = {});
  AdamW(std::vector<ParamGroup> Groups, AdamWOptions Defaults = {});
};

} // namespace nng::optim
