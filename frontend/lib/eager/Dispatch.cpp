//===- Dispatch.cpp - The dispatcher and the eager single-op cache -------===//
//
// dispatch::call hands the call to the innermost DispatchMode when one is
// installed; otherwise it runs the op eagerly and records autograd. The
// eager run goes through this thread's SingleOpCache on the eager backend
// (SingleOpCache.cpp); calls with a meta input only infer their output
// types (MetaDispatch.cpp). Errors get the module scope
// as context. Before that, f32 elementwise calls the inline loops of
// EagerFastPath.h serve skip the executable (and the operand vectors, for
// the dispatchBinary / dispatchUnary entries the operators use).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/SingleOpCache.h"
#include "EagerFastPath.h"
#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif
#include "nngraph/frontend/GradMode.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Error.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace nng::dispatch {

DispatchMode::~DispatchMode() = default;

namespace {

thread_local std::vector<DispatchMode *> Modes;
thread_local std::vector<std::pair<std::string, std::string>> Scopes;

backends::Backend &eagerBackend() {
  static backends::Backend &B = [&]() -> backends::Backend & {
    if (const char *E = std::getenv("NNGRAPH_EAGER_BACKEND"); E && *E)
      return backends::getBackend(E);
    for (const std::string &N : backends::backendNames())
      if (N == "cpu")
        return backends::getBackend("cpu");
    return backends::getBackend("reference");
  }();
  return B;
}

/// The single-op executable of G on the eager backend. On the cpu backend
/// it runs the node kernel directly (node by node): one op on its inputs
/// has nothing to fuse, keep in a layout or plan, and a compiled schedule
/// would only copy its outputs out of an arena.
std::unique_ptr<backends::Executable> compileEager(const ir::Graph &G) {
#if NNGRAPH_HAVE_ONEDNN
  if (eagerBackend().name() == "cpu")
    return backends::compileCpu(G, backends::CpuMode::NodeByNode);
#endif
  return eagerBackend().compile(G);
}

/// True when the eager backend is "cpu", whose kernels the inline loops of
/// EagerFastPath.h stand in for (the reference backend keeps every op),
/// unless NNGRAPH_EAGER_FAST_PATH=0 turns them off (to compare).
bool fastPathEnabled() {
  static const bool On = [] {
    const char *E = std::getenv("NNGRAPH_EAGER_FAST_PATH");
    return eagerBackend().name() == "cpu" && !(E && std::strcmp(E, "0") == 0);
  }();
  return On;
}

/// The one eager fast path: computes Op of A (and B, for binary ops) with
/// the inline loops of EagerFastPath.h when they serve the call (no mode
/// installed, the cpu eager backend, f32 contiguous operands) and records
/// its autograd node; an undefined Tensor when they do not. The common
/// no-grad case builds no operand vectors.
Tensor serveFast(ir::OpKind Op, const Tensor &A, const Tensor *B) {
  if (!Modes.empty() || !fastPathEnabled() || !A.defined() ||
      (B && !B->defined()))
    return Tensor();
  rt::Tensor Out;
  if (!(B ? detail::fastBinary(Op, A.data(), B->data(), Out)
          : detail::fastUnary(Op, A.data(), Out)))
    return Tensor();
  Tensor R(std::move(Out));
  if (autograd::isGradEnabled() &&
      (A.requires_grad() || (B && B->requires_grad()))) {
    static const ir::AttrMap NoAttrs;
    std::vector<Tensor> Inputs{A};
    if (B)
      Inputs.push_back(*B);
    std::vector<Tensor> Outputs{R};
    detail::recordAutograd(Op, NoAttrs, Inputs, Outputs);
  }
  return R;
}

/// This thread's single-op executables on the eager backend.
SingleOpCache &eagerCache() {
  thread_local SingleOpCache Cache(compileEager);
  return Cache;
}

} // namespace

std::vector<rt::Tensor> runEager(ir::OpKind Op,
                                 const std::vector<rt::Tensor> &Inputs,
                                 const ir::AttrMap &Attrs,
                                 unsigned NumOutputs, unsigned NumImplicit) {
  if (detail::anyMeta(Inputs))
    return detail::runMeta(Op, Inputs, Attrs, NumOutputs);
  return eagerCache().run(Op, Inputs, Attrs, NumOutputs, NumImplicit);
}

std::vector<Tensor> call(ir::OpKind Op, const std::vector<Tensor> &Inputs,
                         const ir::AttrMap &Attrs, unsigned NumOutputs) {
  if (!Modes.empty()) {
    DispatchMode *M = Modes.back();
    Modes.pop_back();
    struct Restore {
      DispatchMode *M;
      ~Restore() { Modes.push_back(M); }
    } R{M};
    return M->call(OpCall{Op, Inputs, Attrs, NumOutputs});
  }
  if (NumOutputs == 1 && Attrs.empty() &&
      (Inputs.size() == 1 || Inputs.size() == 2))
    if (Tensor R = serveFast(Op, Inputs[0],
                             Inputs.size() == 2 ? &Inputs[1] : nullptr);
        R.defined())
      return {std::move(R)};
  std::vector<rt::Tensor> Data;
  Data.reserve(Inputs.size());
  for (const Tensor &T : Inputs)
    Data.push_back(T.defined() ? T.data() : rt::Tensor());
  std::vector<rt::Tensor> Outs;
  try {
    Outs = runEager(Op, Data, Attrs, NumOutputs);
  } catch (Error &E) {
    std::string Where = currentModuleDescription();
    if (!Where.empty())
      E.addContext("in module " + Where);
    throw;
  }
  std::vector<Tensor> Result;
  Result.reserve(Outs.size());
  for (rt::Tensor &T : Outs)
    Result.emplace_back(std::move(T));
  detail::recordAutograd(Op, Attrs, Inputs, Result);
  return Result;
}

Tensor call1(ir::OpKind Op, const std::vector<Tensor> &Inputs,
             const ir::AttrMap &Attrs) {
  return std::move(call(Op, Inputs, Attrs, 1)[0]);
}

} // namespace nng::dispatch

namespace nng::detail {

Tensor dispatchBinary(ir::OpKind Op, const Tensor &A, const Tensor &B) {
  if (Tensor R = dispatch::serveFast(Op, A, &B); R.defined())
    return R;
  return dispatch::call1(Op, {A, B});
}

Tensor dispatchUnary(ir::OpKind Op, const Tensor &A) {
  if (Tensor R = dispatch::serveFast(Op, A, nullptr); R.defined())
    return R;
  return dispatch::call1(Op, {A});
}

} // namespace nng::detail

namespace nng::dispatch {

ModeGuard::ModeGuard(DispatchMode &M) { Modes.push_back(&M); }
ModeGuard::~ModeGuard() { Modes.pop_back(); }
DispatchMode *currentMode() { return Modes.empty() ? nullptr : Modes.back(); }
bool inSymbolicMode() { return !Modes.empty() && Modes.back()->symbolic(); }

ModuleScope::ModuleScope(std::string Path, std::string Type) {
  Scopes.emplace_back(std::move(Path), std::move(Type));
}
ModuleScope::~ModuleScope() { Scopes.pop_back(); }

std::string currentModuleDescription() {
  if (Scopes.empty())
    return "";
  const auto &[Path, Type] = Scopes.back();
  return (Path.empty() ? std::string("<root>") : Path) + " (" + Type + ")";
}

const std::vector<std::pair<std::string, std::string>> &moduleScopes() {
  return Scopes;
}

std::string eagerBackendName() { return std::string(eagerBackend().name()); }
size_t eagerCacheSize() { return eagerCache().size(); }

} // namespace nng::dispatch

namespace nng::detail {
bool isTracing() { return dispatch::inSymbolicMode(); }
} // namespace nng::detail
