//===- OptionChecks.cpp - Validation of optimizer options -----------------===//
//
// The checks every optimizer runs on a parameter group's options when the
// group is added, before each step (options may have been changed through
// param_groups()) and when a state_dict is loaded. Messages start like
// PyTorch's ValueErrors ("Invalid learning rate: -0.1"), name the
// optimizer and group, and say what is accepted.
//
//===----------------------------------------------------------------------===//

#include "OptimInternal.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::optim::detail {

double checkNumber(const OptionDict &O, const char *Key, const char *What,
                   const std::string &Where, double Min) {
  const OptionValue &V = O.at(Key);
  if (!V.is_number())
    fail(ErrorKind::InvalidArgument, Where, ": option ", Key, " is ",
         V.describe(), "; it must be a number");
  double D = V.to_double();
  if (std::isnan(D) || (std::isinf(D) && Min != -HUGE_VAL) || D < Min)
    fail(ErrorKind::InvalidArgument, Where, ": Invalid ", What, ": ", V.repr(),
         "; ", Key, " must be a finite number >= ", Min);
  return D;
}

bool checkFlag(const OptionDict &O, const char *Key, const std::string &Where) {
  const OptionValue &V = O.at(Key);
  if (!V.is_bool())
    fail(ErrorKind::InvalidArgument, Where, ": option ", Key, " is ",
         V.describe(), "; it must be true or false");
  return V.to_bool();
}

void checkNoneOrFlag(const OptionDict &O, const char *Key,
                     const std::string &Where) {
  const OptionValue &V = O.at(Key);
  if (!V.is_none() && !V.is_bool())
    fail(ErrorKind::InvalidArgument, Where, ": option ", Key, " is ",
         V.describe(), "; it must be None, true or false");
}

void checkOff(const OptionDict &O, const char *Key, const std::string &Where,
              const char *Why) {
  if (checkFlag(O, Key, Where))
    fail(ErrorKind::Unsupported, Where, ": ", Key, "=True (", Why,
         ") is not supported by nngraph's optimizers; set it to false");
}

void checkAdamOptions(const OptionDict &O, const std::string &Where) {
  checkNumber(O, "lr", "learning rate", Where);
  checkNumber(O, "eps", "epsilon value", Where);
  const OptionValue &Betas = O.at("betas");
  if (!Betas.is_tuple() || Betas.to_tuple().size() != 2)
    fail(ErrorKind::InvalidArgument, Where, ": option betas is ",
         Betas.describe(), "; it must be a pair of numbers, e.g. (0.9, 0.999)");
  for (int I = 0; I < 2; ++I) {
    double B = Betas.to_tuple()[I];
    if (!(B >= 0.0 && B < 1.0))
      fail(ErrorKind::InvalidArgument, Where,
           ": Invalid beta parameter at index ", I, ": ", B,
           "; betas must lie in [0, 1)");
  }
  checkNumber(O, "weight_decay", "weight_decay value", Where);
  checkFlag(O, "amsgrad", Where);
  checkFlag(O, "maximize", Where);
  checkNoneOrFlag(O, "foreach", Where);
  checkOff(O, "capturable", Where, "CUDA graph capture");
}

} // namespace nng::optim::detail
