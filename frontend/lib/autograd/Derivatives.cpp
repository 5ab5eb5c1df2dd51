//===- Derivatives.cpp - Registering every backward formula ---------------===//
//
// registerAllDerivatives, called once by getBackward (Node.cpp), fills the
// BackwardFn table from the per-area files Derivatives*.cpp.
//
//===----------------------------------------------------------------------===//

#include "Derivatives.h"

namespace nng::autograd {

void registerAllDerivatives() {
  registerArithmeticDerivatives();
  registerTensorDerivatives();
  registerNNDerivatives();
}

} // namespace nng::autograd
