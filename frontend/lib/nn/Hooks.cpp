//===- Hooks.cpp - Calling modules: scopes, the loud check, hooks --------===//
//
// What happens when a module is called. ModuleCallGuard works out the
// module's path from the module running it (its name among the caller's
// submodules, as named_modules would give it), refuses modules that were
// never registered anywhere when they are called inside another module's
// forward (the std::vector-of-layers trap), and pushes the
// dispatch::ModuleScope that errors and the tracer read. ModuleBase::call
// runs forward pre-hooks, forward and forward hooks on Values, and wires
// full backward hooks the way PyTorch's BackwardHook does: the tensor
// inputs and outputs of the call pass through identity autograd nodes;
// the output node captures grad_output (running backward pre-hooks), the
// input node calls the hooks with grad_input and grad_output. Also the hook
// registries, their handles and the global hooks.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <atomic>
#include <deque>

namespace nng::nn {

// --- Registries and handles ------------------------------------------------------

namespace detail {

int HookRegistry::nextId() {
  static std::atomic<int> Next{0};
  return Next++;
}

void HookRegistry::remove(int Id) {
  auto Drop = [Id](auto &List) {
    std::erase_if(List, [Id](const auto &E) { return E.first == Id; });
  };
  Drop(ForwardPre);
  Drop(Forward);
  Drop(Backward);
  Drop(BackwardPre);
  std::erase(AlwaysCalled, Id);
  Drop(StateDictPre);
  Drop(StateDictPost);
  Drop(LoadPre);
  Drop(LoadPost);
  Drop(ModuleRegistration);
  Drop(ParameterRegistration);
  Drop(BufferRegistration);
}

const std::shared_ptr<HookRegistry> &globalHooks() {
  static const std::shared_ptr<HookRegistry> G =
      std::make_shared<HookRegistry>();
  return G;
}

// Under a dispatch mode every call goes through ModuleBase::call, where the
// mode (the tracer) can take a module's call.
bool callsNeedValues() {
  return !globalHooks()->empty() || dispatch::currentMode() != nullptr;
}

namespace {
template <typename H>
RemovableHandle addTo(const std::shared_ptr<HookRegistry> &R,
                      std::vector<std::pair<int, H>> &List, H Hook,
                      bool Prepend) {
  int Id = HookRegistry::nextId();
  if (Prepend)
    List.insert(List.begin(), {Id, std::move(Hook)});
  else
    List.emplace_back(Id, std::move(Hook));
  return RemovableHandle(R, Id);
}
} // namespace

RemovableHandle addGlobalForwardPreHook(ForwardPreHook Hook) {
  return addTo(globalHooks(), globalHooks()->ForwardPre, std::move(Hook),
               false);
}
RemovableHandle addGlobalForwardHook(ForwardHook Hook,
                                     ForwardHookOptions Options) {
  RemovableHandle H = addTo(globalHooks(), globalHooks()->Forward,
                            std::move(Hook), Options.prepend);
  if (Options.always_call)
    globalHooks()->AlwaysCalled.push_back(H.id());
  return H;
}
RemovableHandle addGlobalBackwardHook(BackwardHook Hook) {
  return addTo(globalHooks(), globalHooks()->Backward, std::move(Hook), false);
}
RemovableHandle addGlobalBackwardPreHook(BackwardPreHook Hook) {
  return addTo(globalHooks(), globalHooks()->BackwardPre, std::move(Hook),
               false);
}
RemovableHandle addGlobalModuleRegistrationHook(ModuleRegistrationHook Hook) {
  return addTo(globalHooks(), globalHooks()->ModuleRegistration,
               std::move(Hook), false);
}
RemovableHandle
addGlobalParameterRegistrationHook(TensorRegistrationHook Hook) {
  return addTo(globalHooks(), globalHooks()->ParameterRegistration,
               std::move(Hook), false);
}
RemovableHandle addGlobalBufferRegistrationHook(TensorRegistrationHook Hook) {
  return addTo(globalHooks(), globalHooks()->BufferRegistration,
               std::move(Hook), false);
}

} // namespace detail

ModuleCallMode::~ModuleCallMode() = default;

void RemovableHandle::remove() {
  if (auto R = Registry.lock())
    R->remove(Id);
  Registry.reset();
}

RemovableHandle ModuleBase::addForwardPreHook(ForwardPreHook H, bool Prepend) {
  return detail::addTo(Hooks, Hooks->ForwardPre, std::move(H), Prepend);
}
RemovableHandle ModuleBase::addForwardHook(ForwardHook H,
                                           ForwardHookOptions Options) {
  RemovableHandle R =
      detail::addTo(Hooks, Hooks->Forward, std::move(H), Options.prepend);
  if (Options.always_call)
    Hooks->AlwaysCalled.push_back(R.id());
  return R;
}
RemovableHandle ModuleBase::addStateDictPreHook(StateDictPreHook H) {
  return detail::addTo(Hooks, Hooks->StateDictPre, std::move(H), false);
}
RemovableHandle ModuleBase::addStateDictHook(StateDictHook H) {
  return detail::addTo(Hooks, Hooks->StateDictPost, std::move(H), false);
}
RemovableHandle ModuleBase::addLoadPreHook(LoadStateDictPreHook H) {
  return detail::addTo(Hooks, Hooks->LoadPre, std::move(H), false);
}
RemovableHandle ModuleBase::addLoadPostHook(LoadStateDictPostHook H) {
  return detail::addTo(Hooks, Hooks->LoadPost, std::move(H), false);
}
RemovableHandle ModuleBase::addBackwardHook(BackwardHook H, bool Prepend) {
  return detail::addTo(Hooks, Hooks->Backward, std::move(H), Prepend);
}
RemovableHandle ModuleBase::addBackwardPreHook(BackwardPreHook H,
                                               bool Prepend) {
  return detail::addTo(Hooks, Hooks->BackwardPre, std::move(H), Prepend);
}

// --- The call scope and the loud check --------------------------------------------

namespace detail {

namespace {

/// A module being called on this thread.
struct Frame {
  ModuleBase *M;
  std::string Path;
  bool InForward;
};
thread_local std::vector<Frame> Running;
thread_local std::deque<dispatch::ModuleScope> Scopes;

std::string join(const std::string &Prefix, const std::string &Name) {
  return Prefix.empty() ? Name : Prefix + "." + Name;
}

std::string describe(const std::string &Path, const std::string &Type) {
  return Path.empty() ? Type : Path + " (" + Type + ")";
}

} // namespace

ModuleCallGuard::ModuleCallGuard(ModuleBase &M, bool InForward) {
  std::string Path;
  if (!Running.empty()) {
    const Frame &P = Running.back();
    bool Found = false;
    if (P.M == &M) {
      Path = P.Path;
      Found = true;
    }
    for (const auto &[N, C] : P.M->Children)
      if (!Found && C.get() == &M) {
        Path = join(P.Path, N);
        Found = true;
      }
    if (!Found && M.NumParents > 0) {
      // A deeper descendant (self.block.conv(x)), or a module registered
      // somewhere else.
      for (const auto &[N, C] : P.M->named_modules(P.Path))
        if (!Found && C.get() == &M) {
          Path = N;
          Found = true;
        }
      if (!Found)
        Path = join(P.Path, M.LastName);
      Found = true;
    }
    if (!Found) {
      if (P.InForward && !M.AllowUnregisteredCall)
        fail(ErrorKind::InvalidArgument, M.TypeName,
             " was called inside ", describe(P.Path, P.M->TypeName),
             ".forward but is not registered: register it with "
             "register_module, or hold it in nn::ModuleList/nn::Sequential "
             "(an unregistered module's parameters are missing from "
             "parameters() and state_dict(), and train()/eval()/to() do not "
             "reach it). If it is deliberately separate, call "
             "set_allow_unregistered_call(true) on it");
      Path = join(P.Path, M.TypeName);
    }
  }
  Running.push_back({&M, Path, InForward});
  try {
    Scopes.emplace_back(Path, M.TypeName);
  } catch (...) {
    Running.pop_back();
    throw;
  }
}

ModuleCallGuard::~ModuleCallGuard() {
  Scopes.pop_back();
  Running.pop_back();
}

void ModuleCallGuard::setInForward(bool InForward) {
  Running.back().InForward = InForward;
}

const std::string &ModuleCallGuard::path() const { return Running.back().Path; }

void ModuleCallGuard::addContext(Error &E) const {
  const Frame &F = Running.back();
  std::string Line =
      "in module " + (F.Path.empty() ? std::string("<root>") : F.Path) + " (" +
      F.M->type_name() + ")";
  if (E.context().empty() || E.context().back() != Line)
    E.addContext(Line);
}

void failNoForward(const ModuleBase &M) {
  fail(ErrorKind::InvalidArgument, M.type_name(),
       " has no forward() to call (or an overloaded/template one): "
       "containers such as ModuleList and ModuleDict are not callable, "
       "iterate them in your module's forward");
}

void failArity(const ModuleBase &M, size_t Given, size_t Arity) {
  fail(ErrorKind::InvalidArgument, M.type_name(), ".forward takes ", Arity,
       " argument(s) (trailing ones may have defaults) but was called with ",
       Given);
}

} // namespace detail

// --- Full backward hooks ------------------------------------------------------------

namespace {

/// What the two identity nodes of one hooked call share.
struct BackwardHookState {
  ModulePtr Module;
  std::vector<BackwardHook> Hooks;
  std::vector<BackwardPreHook> PreHooks;
  size_t NumInputs = 0;
  /// Positions of the wrapped (gradient-requiring) tensor inputs.
  std::vector<size_t> InputIdx;
  std::vector<Shape> InputShapes;
  bool InputsWrapped = false;
  size_t NumOutputs = 0;
  std::vector<size_t> OutputIdx;
  /// Tensor inputs / outputs that need no gradient, next to ones that do:
  /// PyTorch's hook sees zeros for them (materialized gradients).
  std::vector<std::tuple<size_t, Shape, DType>> InputZeros, OutputZeros;
  /// Set by the output node, consumed by the input node.
  std::optional<std::vector<Tensor>> GradOutputs;
};

/// Passes Ts through one identity node whose backward is Backward; returns
/// the new tensors (same data, history through the node).
std::vector<Tensor> wrapIdentity(const std::vector<Tensor> &Ts,
                                 autograd::FunctionNode::Fn Backward) {
  auto Node = std::make_shared<autograd::FunctionNode>(
      "BackwardHookFunctionBackward", std::move(Backward));
  std::vector<autograd::Edge> Edges;
  std::vector<Tensor> New;
  for (const Tensor &T : Ts) {
    Edges.push_back(autograd::gradientEdge(T));
    auto Impl = std::make_shared<TensorImpl>();
    Impl->Data = T.data();
    Impl->TraceValue = T.impl()->TraceValue;
    New.emplace_back(std::move(Impl));
  }
  Node->setNextEdges(std::move(Edges));
  autograd::setHistory(New, Node);
  return New;
}

void fillZeros(std::vector<Tensor> &Packed,
               const std::vector<std::tuple<size_t, Shape, DType>> &Zeros) {
  for (const auto &[I, Sh, Type] : Zeros)
    Packed[I] = zeros(Sh.dims(), Type);
}

void checkCount(const ModuleBase &M, const char *What, size_t Got,
                size_t Want) {
  if (Got != Want)
    fail(ErrorKind::InvalidArgument, "a backward ", What, " of ",
         M.type_name(), " returned ", Got, " gradients; expected ", Want,
         " (one per ", What[0] == 'h' ? "input" : "output", ")");
}

std::shared_ptr<BackwardHookState>
setupInputHook(ModuleBase &M, std::vector<Value> &Inputs,
               std::vector<BackwardHook> Hooks,
               std::vector<BackwardPreHook> PreHooks) {
  auto S = std::make_shared<BackwardHookState>();
  S->Module = M.ptr();
  S->Hooks = std::move(Hooks);
  S->PreHooks = std::move(PreHooks);
  S->NumInputs = Inputs.size();
  std::vector<Tensor> Ts;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    if (!Inputs[I].isTensor())
      continue;
    Tensor T = Inputs[I].toTensor();
    if (T.requires_grad()) {
      S->InputIdx.push_back(I);
      Ts.push_back(T);
      S->InputShapes.push_back(T.shape());
    } else {
      S->InputZeros.emplace_back(I, T.shape(), T.dtype());
    }
  }
  if (Ts.empty())
    return S;
  S->InputsWrapped = true;
  std::vector<Tensor> New = wrapIdentity(
      Ts, [S](const std::vector<Tensor> &Grads) -> std::vector<Tensor> {
        // No grad_output: the gradient reached the inputs without passing
        // through the outputs (PyTorch skips the hooks then too).
        if (!S->GradOutputs)
          return Grads;
        std::vector<Tensor> Packed(S->NumInputs);
        for (size_t K = 0; K < S->InputIdx.size(); ++K)
          Packed[S->InputIdx[K]] = Grads[K];
        fillZeros(Packed, S->InputZeros);
        for (const BackwardHook &H : S->Hooks)
          if (auto R = H(*S->Module, Packed, *S->GradOutputs)) {
            checkCount(*S->Module, "hook", R->size(), Packed.size());
            Packed = std::move(*R);
          }
        S->GradOutputs.reset();
        std::vector<Tensor> Out;
        for (size_t K = 0; K < S->InputIdx.size(); ++K) {
          const Tensor &G = Packed[S->InputIdx[K]];
          if (G.defined() && G.shape() != S->InputShapes[K])
            fail(ErrorKind::ShapeMismatch, "a full backward hook of ",
                 S->Module->type_name(), " returned grad_input[",
                 S->InputIdx[K], "] of shape ", G.shape().toString(),
                 " for an input of shape ", S->InputShapes[K].toString());
          Out.push_back(G);
        }
        return Out;
      });
  for (size_t K = 0; K < New.size(); ++K)
    Inputs[S->InputIdx[K]] = Value(New[K]);
  return S;
}

Value setupOutputHook(const std::shared_ptr<BackwardHookState> &S, Value Out) {
  std::vector<Value> Slots;
  if (Out.isTensor())
    Slots.push_back(Out);
  else if (Out.isSequence() || Out.isDict())
    Slots = Out.elements();
  S->NumOutputs = Slots.size();
  std::vector<Tensor> Ts;
  for (size_t I = 0; I < Slots.size(); ++I) {
    if (!Slots[I].isTensor())
      continue;
    Tensor T = Slots[I].toTensor();
    if (T.requires_grad()) {
      S->OutputIdx.push_back(I);
      Ts.push_back(T);
    } else {
      S->OutputZeros.emplace_back(I, T.shape(), T.dtype());
    }
  }
  if (Ts.empty())
    return Out;
  std::vector<Tensor> New = wrapIdentity(
      Ts, [S](const std::vector<Tensor> &Grads) -> std::vector<Tensor> {
        std::vector<Tensor> Packed(S->NumOutputs);
        for (size_t K = 0; K < S->OutputIdx.size(); ++K)
          Packed[S->OutputIdx[K]] = Grads[K];
        fillZeros(Packed, S->OutputZeros);
        for (const BackwardPreHook &H : S->PreHooks)
          if (auto R = H(*S->Module, Packed)) {
            checkCount(*S->Module, "pre-hook", R->size(), Packed.size());
            Packed = std::move(*R);
          }
        S->GradOutputs = Packed;
        if (!S->InputsWrapped) {
          // No input needs a gradient: the hooks run now, with undefined
          // grad_input, and may not replace it.
          std::vector<Tensor> GradIn(S->NumInputs);
          for (const BackwardHook &H : S->Hooks)
            if (auto R = H(*S->Module, GradIn, Packed))
              for (const Tensor &G : *R)
                if (G.defined())
                  fail(ErrorKind::InvalidArgument, "a full backward hook of ",
                       S->Module->type_name(),
                       " returned a gradient although no input of the call "
                       "requires one: return nullopt (or undefined tensors)");
          S->GradOutputs.reset();
        }
        std::vector<Tensor> Res;
        for (size_t K = 0; K < S->OutputIdx.size(); ++K)
          Res.push_back(Packed[S->OutputIdx[K]]);
        return Res;
      });
  if (Out.isTensor())
    return Value(New[0]);
  for (size_t K = 0; K < New.size(); ++K)
    Out.elements()[S->OutputIdx[K]] = Value(New[K]);
  return Out;
}

/// The forward hooks of a call (global, then own), with whether each is
/// always called.
struct CallForwardHook {
  int Id;
  bool Always;
  ForwardHook Fn;
};
std::vector<CallForwardHook> forwardHooksOf(const detail::HookRegistry &Global,
                                            const detail::HookRegistry &Own) {
  std::vector<CallForwardHook> R;
  for (const detail::HookRegistry *Reg : {&Global, &Own})
    for (const auto &[Id, F] : Reg->Forward)
      R.push_back({Id,
                   std::find(Reg->AlwaysCalled.begin(), Reg->AlwaysCalled.end(),
                             Id) != Reg->AlwaysCalled.end(),
                   F});
  return R;
}

/// After an exception in a call: the always-called forward hooks that have
/// not run yet get a None output; what they throw is dropped (PyTorch warns
/// and continues), so the caller sees the original exception.
void runAlwaysCalled(ModuleBase &M, const detail::HookRegistry &Own,
                     const std::vector<Value> &Inputs,
                     const std::vector<int> &Ran) {
  const detail::HookRegistry &Global = *detail::globalHooks();
  for (const CallForwardHook &H : forwardHooksOf(Global, Own)) {
    if (!H.Always || std::find(Ran.begin(), Ran.end(), H.Id) != Ran.end())
      continue;
    try {
      H.Fn(M, Inputs, Value());
    } catch (...) {
      // Dropped: the exception of the call is the one reported.
    }
  }
}

template <typename H>
std::vector<H> hooksOf(const std::vector<std::pair<int, H>> &Global,
                       const std::vector<std::pair<int, H>> &Own) {
  std::vector<H> R;
  R.reserve(Global.size() + Own.size());
  for (const auto &[Id, F] : Global)
    R.push_back(F);
  for (const auto &[Id, F] : Own)
    R.push_back(F);
  return R;
}

} // namespace

// --- ModuleBase::call --------------------------------------------------------------

Value ModuleBase::call(std::vector<Value> Inputs) {
  detail::ModuleCallGuard G(*this, false);
  // The always-called forward hooks that ran (not to be run again after an
  // exception).
  std::vector<int> RanAlways;
  try {
    const detail::HookRegistry &Global = *detail::globalHooks();
    // Snapshots: a hook may remove itself (or others) while running.
    for (const ForwardPreHook &H : hooksOf(Global.ForwardPre, Hooks->ForwardPre))
      if (auto R = H(*this, Inputs))
        Inputs = std::move(*R);
    std::shared_ptr<BackwardHookState> BW;
    if (autograd::isGradEnabled() &&
        (Global.hasBackward() || Hooks->hasBackward()))
      BW = setupInputHook(*this, Inputs,
                          hooksOf(Global.Backward, Hooks->Backward),
                          hooksOf(Global.BackwardPre, Hooks->BackwardPre));
    G.setInForward(true);
    Value Out;
    auto *Mode = dynamic_cast<ModuleCallMode *>(dispatch::currentMode());
    if (!Mode || !Mode->callModule(*this, G.path(), Inputs, Out))
      Out = forwardValues(Inputs);
    G.setInForward(false);
    for (const CallForwardHook &H : forwardHooksOf(Global, *Hooks)) {
      if (H.Always)
        RanAlways.push_back(H.Id);
      if (auto R = H.Fn(*this, Inputs, Out))
        Out = std::move(*R);
    }
    if (BW)
      Out = setupOutputHook(BW, std::move(Out));
    return Out;
  } catch (Error &E) {
    G.addContext(E);
    if (Hooks->AlwaysCalled.size() + detail::globalHooks()->AlwaysCalled.size())
      runAlwaysCalled(*this, *Hooks, Inputs, RanAlways);
    throw;
  } catch (...) {
    if (Hooks->AlwaysCalled.size() + detail::globalHooks()->AlwaysCalled.size())
      runAlwaysCalled(*this, *Hooks, Inputs, RanAlways);
    throw;
  }
}

} // namespace nng::nn
