//===- InstallHooks.cpp - Autograd's entry points for eager tensors -------===//
//
// Installs autograd's recordOp, backward and tensor-hook functions as the
// eager library's AutogradHooks (detail/EagerHooks.h) when the program
// starts. The autograd library's users link with
// --undefined=nngraph_autograd_hooks (its CMake target says so), so this
// file is linked even though no code names it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/Autograd.h"

namespace {

nng::detail::AutogradHooks makeHooks() {
  nng::detail::AutogradHooks H;
  H.RecordOp = &nng::autograd::recordOp;
  H.Backward = [](const std::vector<nng::Tensor> &Roots,
                  const std::vector<nng::Tensor> &Grads, bool RetainGraph) {
    nng::autograd::backward(Roots, Grads, RetainGraph);
  };
  H.AddTensorHook = [](nng::autograd::Node &Fn, uint32_t Nr,
                       nng::TensorHook Hook) {
    return Fn.addTensorHook(Nr, std::move(Hook));
  };
  H.RemoveTensorHook = [](nng::autograd::Node &Fn, int Id) {
    Fn.removeTensorHook(Id);
  };
  H.RetainGrad = [](nng::autograd::Node &Fn, uint32_t Nr,
                   const std::shared_ptr<nng::TensorImpl> &Impl) {
    Fn.Retained[Nr] = Impl;
  };
  H.NodeName = [](const nng::autograd::Node &Fn) { return Fn.name(); };
  return H;
}

} // namespace

/// The anchor the link option names; initializing it installs the hooks.
extern "C" const bool nngraph_autograd_hooks =
    (nng::detail::installAutogradHooks(makeHooks()), true);
