//===- SGD.h - Stochastic gradient descent --------------------------------===//
//
// torch.optim.SGD (PyTorch 1.13): momentum, dampening, Nesterov momentum,
// L2 weight decay and maximize, with the same update formula: on its first
// step a parameter's momentum buffer is a copy of its (decayed) gradient,
// with no dampening; afterwards buf = momentum * buf + (1 - dampening) * g.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/Optimizer.h"

#include <optional>

namespace nng::optim {

/// The defaults of SGD (torch.optim.SGD's arguments). lr is required,
/// here or in every parameter group.
struct SGDOptions {
  std::optional<double> lr;
  double momentum = 0;
  double dampening = 0;
  /// L2 penalty added to the gradient.
  double weight_decay = 0;
  /// Needs momentum > 0 and dampening == 0.
  bool nesterov = false;
  /// Ascend instead of descend.
  bool maximize = false;
};

/// Stochastic gradient descent, optionally with momentum:
///   optim::SGD Opt(Model.parameters(), {.lr = 0.1, .momentum = 0.9});
/// Per-group options: {ParamGroup(A), ParamGroup(B, {{"lr", 0.01}})}.
class SGD final : public Optimizer {
public:
  SGD(std::vector<Tensor> Params, SGDOptions Defaults);
  SGD(std::vector<ParamGroup> Groups, SGDOptions Defaults);

protected:
  void checkOptions(const OptionDict &O,
                    const std::string &Where) const override;
  void updateGroup(ParamGroup &Group, size_t Index) override;
  void normalizeLoadedState(ParamState &S) const override;
};

} // namespace nng::optim
