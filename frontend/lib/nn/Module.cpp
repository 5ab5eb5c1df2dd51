//===- Module.cpp - nn::ModuleBase: registration, iteration, modes -------===//
//
// The state half of nn::ModuleBase: registering parameters, buffers and
// submodules with PyTorch's name validation, member bindings (which data
// member holds which slot, so the module can rebind it), the named_*
// iterations (depth first in registration order, with PyTorch's duplicate
// removal), lookups by dotted path, train/eval, dtype and device conversion that
// keeps tensor identity, apply, zero_grad, requires_grad_ and parameter
// counts. Calling and hooks are in Hooks.cpp, state dicts in
// StateDict.cpp, printing in ModulePrinting.cpp.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace nng::nn {

namespace detail {

std::string demangleTypeName(const std::type_info &T) {
  int Status = 0;
  char *Raw = abi::__cxa_demangle(T.name(), nullptr, nullptr, &Status);
  std::string Name = (Status == 0 && Raw) ? Raw : T.name();
  std::free(Raw);
  // Strip the namespaces (outside template arguments): "nng::nn::Linear"
  // -> "Linear", "(anonymous namespace)::Net" -> "Net".
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I + 1 < Name.size(); ++I) {
    char C = Name[I];
    if (C == '<' || C == '(')
      ++Depth;
    else if (C == '>' || C == ')')
      --Depth;
    else if (Depth == 0 && C == ':' && Name[I + 1] == ':')
      Start = I + 2;
  }
  return Name.substr(Start);
}

} // namespace detail

ModuleBase::ModuleBase(std::string TypeName)
    : TypeName(std::move(TypeName)),
      Hooks(std::make_shared<detail::HookRegistry>()) {}

ModuleBase::~ModuleBase() {
  for (auto &[Name, C] : Children)
    if (C)
      --C->NumParents;
}

ModulePtr ModuleBase::ptr() const {
  auto *Self = const_cast<ModuleBase *>(this);
  if (ModulePtr P = Self->weak_from_this().lock())
    return P;
  return ModulePtr(ModulePtr(), Self); // Non-owning alias.
}

// --- Registration ---------------------------------------------------------------

void ModuleBase::checkNewName(const std::string &Name, const char *What) const {
  if (Name.empty())
    fail(ErrorKind::InvalidArgument, TypeName, ": ", What,
         " name can't be empty: pass a name such as \"weight\"");
  if (Name.find('.') != std::string::npos)
    fail(ErrorKind::InvalidArgument, TypeName, ": ", What, " name '", Name,
         "' can't contain \".\" (dots separate the levels of "
         "state_dict keys): use '_' instead");
  const char *Taken = Params.contains(Name)     ? "parameter"
                      : Buffers.contains(Name)  ? "buffer"
                      : Children.contains(Name) ? "submodule"
                                                : nullptr;
  if (Taken)
    fail(ErrorKind::InvalidArgument, TypeName, ": cannot register ", What,
         " '", Name, "': the name is already taken by a ", Taken,
         " of this module; choose another name (or use replace_",
         (std::string(Taken) == "submodule" ? "module" : Taken),
         " to swap it)");
}

RegisteredTensor ModuleBase::register_parameter(const std::string &Name,
                                                Tensor Param,
                                                bool RequiresGrad) {
  checkNewName(Name, "parameter");
  if (Param.defined()) {
    if (Param.grad_fn())
      fail(ErrorKind::InvalidArgument, TypeName,
           ": cannot register a non-leaf tensor as parameter '", Name,
           "' (it has a grad_fn). Parameters must be created explicitly: "
           "pass .detach() of it, or compute the value in forward()");
    if (RequiresGrad && !Param.is_floating_point())
      fail(ErrorKind::InvalidArgument, TypeName, ": parameter '", Name,
           "' has dtype ", dtypeName(Param.dtype()),
           " but only floating-point tensors can require gradients: "
           "register it with requires_grad=false, or as a buffer");
    Param.requires_grad_(RequiresGrad);
    Param = registrationHooks(Name, std::move(Param), /*IsParam=*/true);
  }
  Params.insert(Name, Param);
  return registered(Name, std::move(Param));
}

RegisteredTensor ModuleBase::register_buffer(const std::string &Name,
                                             Tensor Buffer, bool Persistent) {
  checkNewName(Name, "buffer");
  if (Buffer.defined())
    Buffer = registrationHooks(Name, std::move(Buffer), /*IsParam=*/false);
  Buffers.insert(Name, {Buffer, Persistent});
  return registered(Name, std::move(Buffer));
}

// --- Global registration hooks
// ---------------------------------------------------

ModulePtr ModuleBase::registrationHooks(const std::string &Name,
                                        ModulePtr Module) {
  // A snapshot: a hook may remove itself.
  auto Hooks = detail::globalHooks()->ModuleRegistration;
  for (const auto &[Id, H] : Hooks)
    if (ModulePtr R = H(*this, Name, Module))
      Module = std::move(R);
  if (Module.get() == this)
    fail(ErrorKind::InvalidArgument, TypeName, ": cannot register module '",
         Name, "' as a submodule of itself",
         Hooks.empty() ? "" : " (after the module registration hooks)");
  return Module;
}

Tensor ModuleBase::registrationHooks(const std::string &Name, Tensor T,
                                     bool IsParam) {
  auto Hooks = IsParam ? detail::globalHooks()->ParameterRegistration
                       : detail::globalHooks()->BufferRegistration;
  for (const auto &[Id, H] : Hooks)
    if (Tensor R = H(*this, Name, T); R.defined())
      T = std::move(R);
  if (IsParam && T.grad_fn())
    fail(ErrorKind::InvalidArgument, TypeName,
         ": a parameter registration hook returned a non-leaf tensor (one "
         "with a grad_fn) for parameter '",
         Name, "'; return a leaf (.detach() of it, with requires_grad_)");
  return T;
}

void ModuleBase::failRegisteredType(const std::string &Name,
                                    const ModuleBase &Stored,
                                    const std::string &Wanted) const {
  fail(ErrorKind::InvalidArgument, TypeName,
       ": a module registration hook "
       "replaced submodule '",
       Name, "' with a ", Stored.type_name(),
       ", but the registration returns a ", Wanted,
       "; return a module of the registered type (or a subclass of it), or "
       "hold the member as nn::ModulePtr");
}

ModulePtr ModuleBase::addChild(const std::string &Name, ModulePtr Module) {
  checkNewName(Name, "module");
  if (Module.get() == this)
    fail(ErrorKind::InvalidArgument, TypeName, ": cannot register module '",
         Name, "' as a submodule of itself");
  Module = registrationHooks(Name, std::move(Module));
  if (Module) {
    ++Module->NumParents;
    Module->LastName = Name;
  }
  Children.insert(Name, Module);
  return Module;
}

ModulePtr ModuleBase::replaceChild(const std::string &Name, ModulePtr Module) {
  if (Module.get() == this)
    fail(ErrorKind::InvalidArgument, TypeName, ": cannot register module '",
         Name, "' as a submodule of itself");
  if (ModulePtr *C = Children.find(Name)) {
    Module = registrationHooks(Name, std::move(Module));
    if (Module) {
      ++Module->NumParents;
      Module->LastName = Name;
    }
    if (*C)
      --(*C)->NumParents;
    *C = Module;
    return Module;
  }
  fail(ErrorKind::InvalidArgument, TypeName, ": replace_module('", Name,
       "'): there is no submodule of that name; use register_module to add "
       "one");
}

void ModuleBase::setChildren(std::vector<std::pair<std::string, ModulePtr>> New) {
  for (auto &[N, C] : New)
    if (C) {
      ++C->NumParents;
      C->LastName = N;
    }
  for (const auto &[N, C] : Children)
    if (C)
      --C->NumParents;
  Children = OrderedMap<ModulePtr>();
  for (auto &[N, C] : New)
    Children.insert(N, std::move(C));
}

RegisteredTensor ModuleBase::replace_parameter(const std::string &Name,
                                               Tensor Param,
                                               bool RequiresGrad) {
  if (Tensor *T = Params.find(Name)) {
    if (Param.defined()) {
      if (Param.grad_fn())
        fail(ErrorKind::InvalidArgument, TypeName,
             ": cannot use a non-leaf tensor as parameter '", Name,
             "' (it has a grad_fn); pass .detach() of it");
      if (RequiresGrad != Param.requires_grad())
        Param.requires_grad_(RequiresGrad);
      Param = registrationHooks(Name, std::move(Param), /*IsParam=*/true);
    }
    *T = Param;
    return registered(Name, std::move(Param));
  }
  fail(ErrorKind::InvalidArgument, TypeName, ": replace_parameter('", Name,
       "'): there is no parameter of that name; use register_parameter to "
       "add one");
}

RegisteredTensor ModuleBase::replace_buffer(const std::string &Name,
                                            Tensor Buffer) {
  if (BufferSlot *B = Buffers.find(Name)) {
    if (Buffer.defined())
      Buffer = registrationHooks(Name, std::move(Buffer), /*IsParam=*/false);
    B->Value = Buffer;
    return registered(Name, std::move(Buffer));
  }
  fail(ErrorKind::InvalidArgument, TypeName, ": replace_buffer('", Name,
       "'): there is no buffer of that name; use register_buffer to add one");
}

ModulePtr ModuleBase::remove_module(const std::string &Name) {
  const ModulePtr *C = Children.find(Name);
  if (!C)
    fail(ErrorKind::InvalidArgument, TypeName, ": remove_module('", Name,
         "'): there is no submodule of that name");
  ModulePtr Removed = *C;
  if (Removed)
    --Removed->NumParents;
  Children.erase(Name);
  return Removed;
}

Tensor ModuleBase::remove_parameter(const std::string &Name) {
  adoptMembers();
  if (const Tensor *P = Params.find(Name)) {
    Tensor T = *P;
    Params.erase(Name);
    return T;
  }
  fail(ErrorKind::InvalidArgument, TypeName, ": remove_parameter('", Name,
       "'): there is no parameter of that name",
       Buffers.contains(Name) ? " (it is a buffer: use remove_buffer)" : "");
}

Tensor ModuleBase::remove_buffer(const std::string &Name) {
  adoptMembers();
  if (const BufferSlot *B = Buffers.find(Name)) {
    Tensor T = B->Value;
    Buffers.erase(Name);
    return T;
  }
  fail(ErrorKind::InvalidArgument, TypeName, ": remove_buffer('", Name,
       "'): there is no buffer of that name",
       Params.contains(Name) ? " (it is a parameter: use remove_parameter)"
                             : "");
}

// --- Member bindings ---------------------------------------------------------

RegisteredTensor ModuleBase::registered(const std::string &Name, Tensor T) {
  updateMember(Name, T);
  return RegisteredTensor(std::move(T), this, Name, &ModuleBase::notifyHandle);
}

void ModuleBase::notifyHandle(void *Owner, const std::string &Name,
                              Tensor *Handle) {
  auto *M = static_cast<ModuleBase *>(Owner);
  const char *At = reinterpret_cast<const char *>(Handle);
  // Only a handle inside the module object lives as long as the module; a
  // local or a container element would dangle.
  if (!M->ObjectBegin || At < M->ObjectBegin ||
      At + sizeof(Tensor) > M->ObjectBegin + M->ObjectSize)
    return;
  M->bind_member(Name, *Handle);
}

Tensor &ModuleBase::bind_member(const std::string &Name, Tensor &Member) {
  std::erase_if(Members, [&](const auto &B) {
    return B.first == Name || B.second == &Member;
  });
  Members.emplace_back(Name, &Member);
  if (const Tensor *T = Params.find(Name))
    Member = *T;
  if (const BufferSlot *B = Buffers.find(Name))
    Member = B->Value;
  return Member;
}

Tensor *ModuleBase::bound_member(const std::string &Name) const {
  for (const auto &[N, M] : Members)
    if (N == Name)
      return M;
  return nullptr;
}

void ModuleBase::updateMember(const std::string &Name, const Tensor &T) {
  if (Tensor *M = bound_member(Name))
    *M = T;
}

void ModuleBase::adoptMembers() const {
  auto &Self = const_cast<ModuleBase &>(*this);
  for (const auto &[Name, Handle] : Members) {
    // A member holding a trace proxy is the tracer's business (it restores
    // or reports it); the slot keeps the real tensor.
    if (Handle->defined() && Handle->is_proxy())
      continue;
    if (BufferSlot *B = Self.Buffers.find(Name); B && !B->Value.is_same(*Handle))
      B->Value = *Handle;
    if (Tensor *Slot = Self.Params.find(Name); Slot && !Slot->is_same(*Handle)) {
      Tensor &P = *Slot;
      if (Handle->defined() &&
          (Handle->grad_fn() || !Handle->requires_grad())) {
        // Put the member back, so the module stays usable after the error.
        Tensor Assigned = *Handle;
        *Handle = P;
        fail(ErrorKind::InvalidArgument, TypeName, ": member '", Name,
             "' of parameter '", Name, "' was assigned a tensor ",
             Assigned.grad_fn() ? "computed by autograd (it has a grad_fn)"
                                : "that does not require grad",
             "; a parameter takes a leaf that requires grad, as PyTorch "
             "takes only an nn.Parameter. Update it in place under "
             "NoGradGuard (weight.copy_(...)), or swap it with "
             "replace_parameter(\"",
             Name, "\", t), or make it a buffer (register_buffer)");
      }
      P = *Handle;
    }
  }
}

void ModuleBase::set_attr(const std::string &Name, const Tensor &Value) {
  if (Buffers.contains(Name)) {
    replace_buffer(Name, Value);
    return;
  }
  if (Params.contains(Name))
    fail(ErrorKind::InvalidArgument, TypeName, ": set_attr('", Name,
           "'): '", Name,
           "' is a parameter; use replace_parameter to swap it (PyTorch "
           "only accepts an nn.Parameter there)");
  Tensor *M = bound_member(Name);
  if (!M)
    fail(ErrorKind::InvalidArgument, TypeName, ": set_attr('", Name,
         "'): no parameter, buffer or bound member is named '", Name,
         "'; bind the C++ member that forward reads with bind_member(\"",
         Name, "\", member)");
  *M = Value;
}

// --- Iteration ---------------------------------------------------------------------

namespace {

std::string join(const std::string &Prefix, const std::string &Name) {
  return Prefix.empty() ? Name : Prefix + "." + Name;
}

/// PyTorch's _named_members: each module (deduplicated or not), then its
/// own members, skipping undefined ones and (with RemoveDuplicate) ones
/// already seen.
template <typename GetMembers>
std::vector<std::pair<std::string, Tensor>>
namedMembers(const ModuleBase &M, const std::string &Prefix, bool Recurse,
             bool RemoveDuplicate, GetMembers Get) {
  std::vector<std::pair<std::string, ModulePtr>> Mods;
  if (Recurse)
    Mods = M.named_modules(Prefix, RemoveDuplicate);
  else
    Mods.emplace_back(Prefix, M.ptr());
  std::unordered_set<const TensorImpl *> Seen;
  std::vector<std::pair<std::string, Tensor>> R;
  for (const auto &[ModPrefix, Mod] : Mods)
    Get(*Mod, [&](const std::string &Name, const Tensor &T) {
      if (!T.defined() || Seen.count(T.impl().get()))
        return;
      if (RemoveDuplicate)
        Seen.insert(T.impl().get());
      R.emplace_back(join(ModPrefix, Name), T);
    });
  return R;
}

std::vector<Tensor> valuesOf(std::vector<std::pair<std::string, Tensor>> V) {
  std::vector<Tensor> R;
  R.reserve(V.size());
  for (auto &[N, T] : V)
    R.push_back(std::move(T));
  return R;
}

} // namespace

std::vector<std::pair<std::string, Tensor>>
ModuleBase::named_parameters(const std::string &Prefix, bool Recurse,
                             bool RemoveDuplicate) const {
  return namedMembers(*this, Prefix, Recurse, RemoveDuplicate,
                      [](const ModuleBase &Mod, auto Emit) {
                        Mod.adoptMembers();
                        for (const auto &[N, T] : Mod.Params)
                          Emit(N, T);
                      });
}

std::vector<Tensor> ModuleBase::parameters(bool Recurse) const {
  return valuesOf(named_parameters("", Recurse));
}

std::vector<std::pair<std::string, Tensor>>
ModuleBase::named_buffers(const std::string &Prefix, bool Recurse,
                          bool RemoveDuplicate) const {
  return namedMembers(*this, Prefix, Recurse, RemoveDuplicate,
                      [](const ModuleBase &Mod, auto Emit) {
                        Mod.adoptMembers();
                        for (const auto &[N, B] : Mod.Buffers)
                          Emit(N, B.Value);
                      });
}

std::vector<Tensor> ModuleBase::buffers(bool Recurse) const {
  return valuesOf(named_buffers("", Recurse));
}

std::vector<std::pair<std::string, ModulePtr>>
ModuleBase::named_children() const {
  std::vector<std::pair<std::string, ModulePtr>> R;
  std::unordered_set<const ModuleBase *> Seen;
  for (const auto &[N, C] : Children)
    if (C && Seen.insert(C.get()).second)
      R.emplace_back(N, C);
  return R;
}

std::vector<ModulePtr> ModuleBase::children() const {
  std::vector<ModulePtr> R;
  for (auto &[N, C] : named_children())
    R.push_back(C);
  return R;
}

namespace {
/// PyTorch's named_modules: pre-order, a memo shared by the whole walk (a
/// module seen before is skipped with its subtree).
void collectModules(const ModulePtr &M, const std::string &Prefix,
                    bool RemoveDuplicate,
                    std::unordered_set<const ModuleBase *> &Memo,
                    std::vector<std::pair<std::string, ModulePtr>> &Out,
                    const std::vector<std::pair<std::string, ModulePtr>> &(
                        *KidsOf)(const ModuleBase &)) {
  if (RemoveDuplicate && !Memo.insert(M.get()).second)
    return;
  Out.emplace_back(Prefix, M);
  for (const auto &[N, C] : KidsOf(*M))
    if (C)
      collectModules(C, join(Prefix, N), RemoveDuplicate, Memo, Out, KidsOf);
}
} // namespace

const std::vector<std::pair<std::string, ModulePtr>> &
ModuleBase::childSlots(const ModuleBase &M) {
  return M.Children.items();
}

std::vector<std::pair<std::string, ModulePtr>>
ModuleBase::named_modules(const std::string &Prefix,
                          bool RemoveDuplicate) const {
  std::vector<std::pair<std::string, ModulePtr>> Out;
  std::unordered_set<const ModuleBase *> Memo;
  collectModules(ptr(), Prefix, RemoveDuplicate, Memo, Out, &childSlots);
  return Out;
}

std::vector<ModulePtr> ModuleBase::modules() const {
  std::vector<ModulePtr> R;
  for (auto &[N, M] : named_modules())
    R.push_back(M);
  return R;
}

ModulePtr ModuleBase::get_submodule(const std::string &Target) const {
  ModulePtr Cur = ptr();
  if (Target.empty())
    return Cur;
  std::string Path;
  size_t Start = 0;
  while (true) {
    size_t Dot = Target.find('.', Start);
    std::string Part = Target.substr(Start, Dot == std::string::npos
                                                ? std::string::npos
                                                : Dot - Start);
    const ModulePtr *Found = Cur->Children.find(Part);
    ModulePtr Next = Found ? *Found : nullptr;
    if (!Next)
      fail(ErrorKind::InvalidArgument, "get_submodule('", Target, "'): ",
           Path.empty() ? TypeName : Path + " (" + Cur->TypeName + ")",
           " has no submodule '", Part, "'");
    Path = join(Path, Part);
    Cur = Next;
    if (Dot == std::string::npos)
      return Cur;
    Start = Dot + 1;
  }
}

namespace {
std::pair<std::string, std::string> splitLast(const std::string &Target) {
  size_t Dot = Target.rfind('.');
  if (Dot == std::string::npos)
    return {"", Target};
  return {Target.substr(0, Dot), Target.substr(Dot + 1)};
}
} // namespace

Tensor ModuleBase::get_parameter(const std::string &Target) const {
  auto [ModPath, Name] = splitLast(Target);
  ModulePtr M = get_submodule(ModPath);
  M->adoptMembers();
  if (const Tensor *T = M->Params.find(Name)) {
    if (!T->defined())
      fail(ErrorKind::InvalidArgument, "get_parameter('", Target,
           "'): the parameter is reserved but empty (undefined)");
    return *T;
  }
  fail(ErrorKind::InvalidArgument, "get_parameter('", Target, "'): ",
       M->TypeName, " has no parameter '", Name, "'");
}

Tensor ModuleBase::get_buffer(const std::string &Target) const {
  auto [ModPath, Name] = splitLast(Target);
  ModulePtr M = get_submodule(ModPath);
  M->adoptMembers();
  if (const BufferSlot *B = M->Buffers.find(Name)) {
    if (!B->Value.defined())
      fail(ErrorKind::InvalidArgument, "get_buffer('", Target,
           "'): the buffer is reserved but empty (undefined)");
    return B->Value;
  }
  fail(ErrorKind::InvalidArgument, "get_buffer('", Target, "'): ",
       M->TypeName, " has no buffer '", Name, "'");
}

// --- Modes and conversions ------------------------------------------------------------

ModuleBase &ModuleBase::train(bool Mode) {
  for (const ModulePtr &M : modules())
    M->Training = Mode;
  return *this;
}

ModuleBase &ModuleBase::apply(const std::function<void(ModuleBase &)> &Fn) {
  for (const ModulePtr &C : children())
    C->apply(Fn);
  Fn(*this);
  return *this;
}

void ModuleBase::zero_grad(bool SetToNone) {
  NoGradGuard NoGrad;
  for (Tensor P : parameters()) {
    Tensor G = P.grad();
    if (!G.defined())
      continue;
    if (SetToNone)
      P.set_grad(Tensor());
    else
      G.zero_();
  }
}

ModuleBase &ModuleBase::requires_grad_(bool RequiresGrad) {
  for (Tensor P : parameters())
    P.requires_grad_(RequiresGrad);
  return *this;
}

int64_t ModuleBase::num_parameters(bool OnlyTrainable) const {
  int64_t N = 0;
  for (const Tensor &P : parameters())
    if (!OnlyTrainable || P.requires_grad())
      N += P.numel();
  return N;
}

} // namespace nng::nn
