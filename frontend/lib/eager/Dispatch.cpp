//===- Dispatch.cpp - The dispatcher and the eager single-op cache -------===//
//
// dispatch::call hands the call to the innermost DispatchMode when one is
// installed; otherwise it runs the op eagerly and records autograd. The
// eager run asks the eager backend for an executable of a one-node graph
// whose inputs have the call's dtypes and ranks (dims unknown), caches it
// per thread under a compact key, and runs it. Errors get the module scope
// as context. Before that, f32 elementwise calls the inline loops of
// EagerFastPath.h serve skip the executable (and the operand vectors, for
// the dispatchBinary / dispatchUnary entries the operators use).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Dispatch.h"
#include "EagerFastPath.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif
#include "nngraph/frontend/Autograd.h"
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

/// Appends the bytes of V to K.
template <typename T> void appendRaw(std::string &K, const T &V) {
  K.append(reinterpret_cast<const char *>(&V), sizeof(V));
}

/// A cache key for the call, or false when an attribute (a tensor) makes
/// the call uncacheable.
bool makeKey(std::string &K, ir::OpKind Op,
             const std::vector<rt::Tensor> &Inputs, const ir::AttrMap &Attrs,
             unsigned NumOutputs) {
  K.clear();
  appendRaw(K, static_cast<uint16_t>(Op));
  appendRaw(K, static_cast<uint8_t>(NumOutputs));
  for (const rt::Tensor &T : Inputs) {
    if (!T.defined()) {
      K.push_back('\xff');
      continue;
    }
    K.push_back(static_cast<char>(T.dtype()));
    K.push_back(static_cast<char>(T.rank()));
  }
  for (const auto &[Name, A] : Attrs) {
    K += Name;
    K.push_back('=');
    switch (A.type()) {
    case ir::AttrType::Int:
      appendRaw(K, A.i());
      break;
    case ir::AttrType::Float:
      appendRaw(K, A.f());
      break;
    case ir::AttrType::String:
      K += A.s();
      K.push_back('\0');
      break;
    case ir::AttrType::Ints:
      appendRaw(K, A.ints().size());
      for (int64_t V : A.ints())
        appendRaw(K, V);
      break;
    case ir::AttrType::Floats:
      appendRaw(K, A.floats().size());
      for (float V : A.floats())
        appendRaw(K, V);
      break;
    case ir::AttrType::Strings:
      for (const std::string &S : A.strings()) {
        K += S;
        K.push_back('\0');
      }
      break;
    case ir::AttrType::Tensor:
      return false;
    }
    K.push_back(';');
  }
  return true;
}

/// A one-node graph of the call with rank-only input types.
std::unique_ptr<ir::Graph> singleOpGraph(ir::OpKind Op,
                                         const std::vector<rt::Tensor> &Inputs,
                                         const ir::AttrMap &Attrs,
                                         unsigned NumOutputs) {
  auto G = std::make_unique<ir::Graph>();
  std::vector<ir::Value *> Ins;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const rt::Tensor &T = Inputs[I];
    if (!T.defined()) {
      Ins.push_back(nullptr);
      continue;
    }
    std::vector<ir::Dim> Dims(T.rank(), ir::Dim::unknown());
    Ins.push_back(G->addInput("x" + std::to_string(I),
                              ir::TensorType(T.dtype(), std::move(Dims))));
  }
  std::vector<std::string> Outs;
  for (unsigned I = 0; I < NumOutputs; ++I)
    Outs.push_back("y" + std::to_string(I));
  ir::Node *N = G->addNode(Op, Ins, Outs, Attrs);
  N->setName("eager");
  for (ir::Value *V : N->outputs())
    G->addOutput(V);
  return G;
}

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

/// Records the autograd node of a call the fast path served, when one is
/// needed (the common no-grad case builds no vectors).
void recordFast(ir::OpKind Op, std::initializer_list<const Tensor *> Ins,
                Tensor &Out) {
  if (!autograd::isGradEnabled())
    return;
  bool Any = false;
  for (const Tensor *T : Ins)
    Any |= T->requires_grad();
  if (!Any)
    return;
  static const ir::AttrMap NoAttrs;
  std::vector<Tensor> Inputs;
  Inputs.reserve(Ins.size());
  for (const Tensor *T : Ins)
    Inputs.push_back(*T);
  std::vector<Tensor> Outputs{Out};
  autograd::recordOp(Op, NoAttrs, Inputs, Outputs);
}

struct EagerCache {
  std::unordered_map<std::string, std::unique_ptr<backends::Executable>> Map;
  std::string Key; ///< Reused buffer.
};
thread_local EagerCache Cache;

} // namespace

std::vector<rt::Tensor> runEager(ir::OpKind Op,
                                 const std::vector<rt::Tensor> &Inputs,
                                 const ir::AttrMap &Attrs,
                                 unsigned NumOutputs) {
  // Present inputs only: the one-node graph's inputs skip absent ones (a
  // copy only when some are absent).
  bool AllPresent = true;
  for (const rt::Tensor &T : Inputs)
    AllPresent &= T.defined();
  std::vector<rt::Tensor> Present;
  if (!AllPresent)
    for (const rt::Tensor &T : Inputs)
      if (T.defined())
        Present.push_back(T);
  const std::vector<rt::Tensor> &RunInputs = AllPresent ? Inputs : Present;
  if (!makeKey(Cache.Key, Op, Inputs, Attrs, NumOutputs)) {
    auto G = singleOpGraph(Op, Inputs, Attrs, NumOutputs);
    return compileEager(*G)->run(RunInputs);
  }
  auto It = Cache.Map.find(Cache.Key);
  if (It == Cache.Map.end()) {
    std::string Key = Cache.Key;
    auto G = singleOpGraph(Op, Inputs, Attrs, NumOutputs);
    It = Cache.Map.emplace(std::move(Key), compileEager(*G)).first;
  }
  return It->second->run(RunInputs);
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
  if (NumOutputs == 1 && Attrs.empty() && fastPathEnabled()) {
    rt::Tensor Out;
    bool Served = false;
    if (Inputs.size() == 2 && Inputs[0].defined() && Inputs[1].defined())
      Served = detail::fastBinary(Op, Inputs[0].data(), Inputs[1].data(), Out);
    else if (Inputs.size() == 1 && Inputs[0].defined())
      Served = detail::fastUnary(Op, Inputs[0].data(), Out);
    if (Served) {
      std::vector<Tensor> Result;
      Result.emplace_back(std::move(Out));
      autograd::recordOp(Op, Attrs, Inputs, Result);
      return Result;
    }
  }
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
  autograd::recordOp(Op, Attrs, Inputs, Result);
  return Result;
}

Tensor call1(ir::OpKind Op, const std::vector<Tensor> &Inputs,
             const ir::AttrMap &Attrs) {
  return std::move(call(Op, Inputs, Attrs, 1)[0]);
}

} // namespace nng::dispatch

namespace nng::detail {

Tensor dispatchBinary(ir::OpKind Op, const Tensor &A, const Tensor &B) {
  if (dispatch::Modes.empty() && A.defined() && B.defined() &&
      dispatch::fastPathEnabled()) {
    rt::Tensor Out;
    if (fastBinary(Op, A.data(), B.data(), Out)) {
      Tensor R(std::move(Out));
      dispatch::recordFast(Op, {&A, &B}, R);
      return R;
    }
  }
  return dispatch::call1(Op, {A, B});
}

Tensor dispatchUnary(ir::OpKind Op, const Tensor &A) {
  if (dispatch::Modes.empty() && A.defined() && dispatch::fastPathEnabled()) {
    rt::Tensor Out;
    if (fastUnary(Op, A.data(), Out)) {
      Tensor R(std::move(Out));
      dispatch::recordFast(Op, {&A}, R);
      return R;
    }
  }
  return dispatch::call1(Op, {A});
}

} // namespace nng::detail

namespace nng::dispatch {

ModeGuard::ModeGuard(DispatchMode &M) { Modes.push_back(&M); }
ModeGuard::~ModeGuard() { Modes.pop_back(); }
DispatchMode *currentMode() { return Modes.empty() ? nullptr : Modes.back(); }

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
size_t eagerCacheSize() { return Cache.Map.size(); }

} // namespace nng::dispatch
