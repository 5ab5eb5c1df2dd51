//===- OptimInternal.h - Helpers shared by the optimizers -----------------===//
//
// Checks of option values with PyTorch's messages ("Invalid learning rate:
// -0.1") plus where and what to do.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/Optimizer.h"

#include <string>

namespace nng::optim::detail {

/// The number O[Key]; throws "Where: Invalid <What>: <value>" when it is
/// not a number, not finite, or below Min.
double checkNumber(const OptionDict &O, const char *Key, const char *What,
                   const std::string &Where, double Min = 0.0);
/// The bool O[Key]; throws when it is not a bool.
bool checkFlag(const OptionDict &O, const char *Key, const std::string &Where);
/// O[Key] must be None or a bool (foreach: both implementations compute
/// the same update here).
void checkNoneOrFlag(const OptionDict &O, const char *Key,
                     const std::string &Where);
/// O[Key] must be False: the feature (capturable, differentiable, fused)
/// is PyTorch's and not supported here; Why says what it is for.
void checkOff(const OptionDict &O, const char *Key, const std::string &Where,
              const char *Why);
/// The options Adam and AdamW share (lr, betas, eps, weight_decay,
/// amsgrad, maximize, foreach, capturable).
void checkAdamOptions(const OptionDict &O, const std::string &Where);

} // namespace nng::optim::detail
