//===- EagerHooks.h - What eager tensors ask of the layers above -*- C++ -*-===//
//
// The eager library is the lowest of frontend's libraries, yet a tensor's
// methods reach two higher ones: autograd (recording backward nodes,
// backward(), gradient hooks) and the fx tracer (size(i) of a proxy,
// symbolic size arithmetic, reading a proxy's data). As PyTorch's
// VariableHooksInterface does, eager declares what it needs here and the
// higher library installs it: autograd once when it is linked
// (autograd/InstallHooks.cpp), the tracer when a trace starts. Eager calls
// nothing above itself; a program without autograd gets an error that says
// how to link it, not an undefined symbol. A detail header: for the
// frontend libraries, not an API for users.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/ir/Attribute.h"
#include "nngraph/ir/OpSchema.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nng::detail {

/// Autograd's entry points used by eager code.
struct AutogradHooks {
  /// autograd::recordOp: gives Outputs a grad_fn.
  void (*RecordOp)(ir::OpKind Op, const ir::AttrMap &Attrs,
                   const std::vector<Tensor> &Inputs,
                   std::vector<Tensor> &Outputs) = nullptr;
  /// autograd::backward.
  void (*Backward)(const std::vector<Tensor> &Roots,
                   const std::vector<Tensor> &Grads,
                   bool RetainGraph) = nullptr;
  /// autograd::Node::addTensorHook / removeTensorHook.
  int (*AddTensorHook)(autograd::Node &Fn, uint32_t Nr,
                       TensorHook H) = nullptr;
  void (*RemoveTensorHook)(autograd::Node &Fn, int Id) = nullptr;
  /// Makes Fn's output Nr keep its gradient in Impl (retain_grad()).
  void (*RetainGrad)(autograd::Node &Fn, uint32_t Nr,
                     const std::shared_ptr<TensorImpl> &Impl) = nullptr;
  /// autograd::Node::name ("AddBackward0"), for printing.
  std::string (*NodeName)(const autograd::Node &Fn) = nullptr;
};

/// Records the backward of an op call when grad mode is on and an input
/// requires grad (through autograd's RecordOp); otherwise does nothing.
void recordAutograd(ir::OpKind Op, const ir::AttrMap &Attrs,
                    const std::vector<Tensor> &Inputs,
                    std::vector<Tensor> &Outputs);

/// Installs autograd's hooks (autograd/InstallHooks.cpp does, at start-up).
void installAutogradHooks(const AutogradHooks &H);
/// The installed hooks; throws an error naming What and how to link
/// autograd when none are installed.
const AutogradHooks &autogradHooks(const char *What);

/// The tracer's answers for proxies and symbolic sizes (fx/TraceHooks.cpp).
/// Proxies and symbolic sizes exist only once a trace has started, which
/// installs these, so eager code reaches them only through such values.
class TraceHooks {
public:
  virtual ~TraceHooks();
  /// size(D) of proxy T: concrete for a static dim, else symbolic.
  virtual SymInt size(const Tensor &T, int64_t D) = 0;
  /// Records A Op B ('+', '-', '*', '/') with a symbolic side.
  virtual SymInt arith(char Op, const SymInt &A, const SymInt &B) = 0;
  /// The shape operand of Sizes, some entry symbolic.
  virtual Tensor shapeTensor(const SymIntList &Sizes) = 0;
  /// Throws fx::TraceError: a symbolic size became a C++ integer.
  [[noreturn]] virtual void failSymbolicToInt(const SymInt &S) = 0;
  /// Throws fx::TraceError: What reads the data of proxy T (or writes a
  /// non-proxy in place) during a trace.
  [[noreturn]] virtual void failProxyData(const Tensor &T,
                                          const char *What) = 0;
};

/// Installs the tracer's hooks (idempotent; fx's trace start does it).
void installTraceHooks(TraceHooks &H);

} // namespace nng::detail
