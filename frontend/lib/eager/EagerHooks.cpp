//===- EagerHooks.cpp - The installed hooks of autograd and the tracer ----===//
//
// Holds what autograd and the fx tracer install (EagerHooks.h) and the
// seams of Tensor.h that reach the tracer (size(i) of a proxy, reading a
// proxy's data), forwarded to its hooks.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/GradMode.h"
#include "nngraph/runtime/Error.h"

#include <ostream>

namespace nng::detail {

namespace {
AutogradHooks InstalledAutograd;
TraceHooks *InstalledTrace = nullptr;

TraceHooks &traceHooks(const char *What) {
  if (!InstalledTrace)
    fail(ErrorKind::Internal, What,
         " on a traced tensor or symbolic size, but no trace has started");
  return *InstalledTrace;
}
} // namespace

TraceHooks::~TraceHooks() = default;

void installAutogradHooks(const AutogradHooks &H) { InstalledAutograd = H; }

const AutogradHooks &autogradHooks(const char *What) {
  if (!InstalledAutograd.RecordOp)
    fail(ErrorKind::Unsupported, What,
         " needs autograd, which is not linked into this program: link "
         "the nngraph::autograd library (nngraph::nngraph includes it)");
  return InstalledAutograd;
}

void recordAutograd(ir::OpKind Op, const ir::AttrMap &Attrs,
                    const std::vector<Tensor> &Inputs,
                    std::vector<Tensor> &Outputs) {
  if (!autograd::isGradEnabled())
    return;
  for (const Tensor &T : Inputs)
    if (T.requires_grad())
      return autogradHooks("an operation on a tensor that requires grad")
          .RecordOp(Op, Attrs, Inputs, Outputs);
}

void installTraceHooks(TraceHooks &H) { InstalledTrace = &H; }

// GCC does not carry [[noreturn]] through a virtual call: a returning hook
// is a bug, reported as one.
void failProxyData(const Tensor &T, const char *What) {
  traceHooks(What).failProxyData(T, What);
  fail(ErrorKind::Internal, "the tracer's failProxyData returned");
}

SymInt traceSize(const Tensor &T, int64_t D) {
  if (!InstalledTrace)
    return SymInt(T.data().size(D));
  return InstalledTrace->size(T, D);
}

SymInt symArith(char Op, const SymInt &A, const SymInt &B) {
  return traceHooks("arithmetic").arith(Op, A, B);
}

void failSymbolicToInt(const SymInt &S) {
  traceHooks("converting a size").failSymbolicToInt(S);
  fail(ErrorKind::Internal, "the tracer's failSymbolicToInt returned");
}

Tensor symShapeTensor(const SymIntList &Sizes) {
  if (!Sizes.isSymbolic())
    return i64Tensor(Sizes.examples());
  return traceHooks("view/reshape/expand").shapeTensor(Sizes);
}

} // namespace nng::detail

namespace nng {

std::ostream &operator<<(std::ostream &OS, const SymInt &S) {
  if (S.isSymbolic())
    return OS << "sym(" << S.example() << ")";
  return OS << S.example();
}

} // namespace nng
