//===- Parametrize.cpp - torch.nn.utils.parametrize ----------------------===//
//
// The "parametrizations" ModuleDict, its ParametrizationLists, the forward
// pre-hook that gives the module's members their parametrized values (and
// a forward hook that, after a traced call, replaces the proxies it left
// with their example values, as pruning does), the Cached scope, and
// removal. Parametrize.h has the semantics.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/Parametrize.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>

namespace nng::nn::utils::parametrize {

namespace {

/// The open Cached scopes of this thread and their values.
thread_local int CacheDepth = 0;
thread_local std::unordered_map<const ParametrizationList *, Tensor> CacheValues;

constexpr const char *Container = "parametrizations";
constexpr const char *Prefix = "Parametrized";

std::shared_ptr<ModuleDict> containerOf(const ModuleBase &M) {
  for (const auto &[N, C] : M.named_children())
    if (N == Container)
      return std::dynamic_pointer_cast<ModuleDict>(C);
  return nullptr;
}

/// The hooks one parametrized module carries.
struct HookState {
  RemovableHandle Pre, Post;
};

/// Before forward: module.name = its parametrized value, for every name.
struct ParametrizeHook {
  std::shared_ptr<HookState> S;
  std::optional<std::vector<Value>> operator()(ModuleBase &M,
                                               const std::vector<Value> &) const {
    if (std::shared_ptr<ModuleDict> D = containerOf(M))
      for (const auto &[Name, L] : D->named_children())
        M.set_attr(Name, std::static_pointer_cast<ParametrizationList>(L)->forward());
    return std::nullopt;
  }
};

std::shared_ptr<HookState> hooksOf(const ModuleBase &M) {
  for (const auto &[Id, Hook] : M.forward_pre_hooks())
    if (const auto *H = Hook.target<ParametrizeHook>())
      return H->S;
  return nullptr;
}

void installHooks(ModuleBase &M) {
  auto S = std::make_shared<HookState>();
  S->Pre = M.register_forward_pre_hook(ForwardPreHook(ParametrizeHook{S}));
  S->Post = M.register_forward_hook(
      [](ModuleBase &Mod, const std::vector<Value> &, const Value &) {
        if (std::shared_ptr<ModuleDict> D = containerOf(Mod))
          for (const auto &[Name, L] : D->named_children()) {
            Tensor *Member = Mod.bound_member(Name);
            if (Member && Member->is_proxy())
              Mod.set_attr(Name, Tensor(Member->data()));
          }
      });
}

/// The registered parameter (or buffer, IsBuffer) Name of M, or an error.
Tensor tensorToParametrize(const ModuleBase &M, const std::string &Name,
                           bool &IsBuffer) {
  for (const auto &[N, T] : M.named_parameters("", false, false))
    if (N == Name) {
      IsBuffer = false;
      return T;
    }
  for (const auto &[N, T] : M.named_buffers("", false, false))
    if (N == Name) {
      IsBuffer = true;
      return T;
    }
  fail(ErrorKind::InvalidArgument, M.type_name(),
       " has no parameter or buffer '", Name, "' to parametrize");
}

void checkKeeps(const ModuleBase &M, const std::string &Name, const Tensor &Was,
                const Tensor &Now, const char *What) {
  if (Now.shape() != Was.shape() || Now.dtype() != Was.dtype())
    fail(ErrorKind::InvalidArgument, "register_parametrization(",
         M.type_name(), ", '", Name, "'): ", What, " gives ",
         dtypeName(Now.dtype()), Now.shape().toString(), " for ",
         dtypeName(Was.dtype()), Was.shape().toString(),
         "; a parametrization must keep the shape and dtype (pass "
         "unsafe=true to allow it)");
}

} // namespace

ParametrizationList::ParametrizationList(std::vector<Tensor> Originals,
                                         bool AsBuffers, Parametrization First)
    : NumOriginals(Originals.size()), AsBuffers(AsBuffers) {
  for (size_t I = 0; I < Originals.size(); ++I) {
    std::string N =
        Originals.size() == 1 ? "original" : "original" + std::to_string(I);
    if (AsBuffers)
      register_buffer(N, Originals[I]);
    else
      register_parameter(N, Originals[I], Originals[I].requires_grad());
  }
  append(std::move(First));
}

void ParametrizationList::append(Parametrization P) {
  register_module(std::to_string(Chain.size()), P.Module);
  Chain.push_back(std::move(P));
}

std::vector<Tensor> ParametrizationList::originals() const {
  std::vector<Tensor> R;
  for (const auto &[N, T] : AsBuffers ? named_buffers("", false, false)
                                      : named_parameters("", false, false))
    if (N.rfind("original", 0) == 0)
      R.push_back(T);
  return R;
}

bool ParametrizationList::has_right_inverse() const {
  for (const Parametrization &P : Chain)
    if (!P.RightInverse)
      return false;
  return true;
}

void ParametrizationList::right_inverse(const Tensor &Value) {
  NoGradGuard NoGrad;
  std::vector<Tensor> V = {Value.detach()};
  for (size_t I = Chain.size(); I-- > 0;) {
    if (!Chain[I].RightInverse)
      fail(ErrorKind::InvalidArgument,
           "assigning to a parametrized tensor: parametrization ",
           I, " (", Chain[I].Module->type_name(),
           ") does not implement right_inverse; give it one, or remove the "
           "parametrizations first");
    if (V.size() != 1)
      fail(ErrorKind::InvalidArgument,
           "assigning to a parametrized tensor: parametrization ",
           I + 1, " returned ", V.size(),
           " tensors from right_inverse; only the first one may return "
           "several");
    V = Chain[I].RightInverse(V[0]);
  }
  std::vector<Tensor> O = originals();
  if (V.size() != O.size())
    fail(ErrorKind::InvalidArgument,
         "assigning to a parametrized tensor: right_inverse returned ",
         V.size(), " tensor(s) for ", O.size(), " original(s)");
  for (size_t I = 0; I < O.size(); ++I) {
    if (V[I].dtype() != O[I].dtype() || V[I].shape() != O[I].shape())
      fail(ErrorKind::InvalidArgument,
           "assigning to a parametrized tensor: right_inverse gives ",
           dtypeName(V[I].dtype()), V[I].shape().toString(), " for original ",
           I, " of ", dtypeName(O[I].dtype()), O[I].shape().toString(),
           "; it must keep the original's dtype and shape");
    O[I].copy_(V[I]);
  }
}

Tensor ParametrizationList::forward() {
  if (CacheDepth > 0)
    if (auto It = CacheValues.find(this); It != CacheValues.end())
      return It->second;
  Tensor X = Chain.front().Forward(originals());
  for (size_t I = 1; I < Chain.size(); ++I)
    X = Chain[I].Forward({X});
  if (CacheDepth > 0)
    CacheValues[this] = X;
  return X;
}

void register_parametrization(ModuleBase &M, const std::string &Name,
                              Parametrization P, bool Unsafe) {
  if (!P.Module || !P.Forward)
    fail(ErrorKind::InvalidArgument, "register_parametrization(",
         M.type_name(), ", '", Name, "'): the parametrization is null");
  if (is_parametrized(M, Name)) {
    // Appended to the chain: it sees the current value.
    std::shared_ptr<ParametrizationList> L = parametrizations(M, Name);
    Tensor Now = L->forward();
    if (!Unsafe)
      checkKeeps(M, Name, Now, P.Forward({Now}), "the new parametrization");
    L->append(std::move(P));
    M.set_attr(Name, L->forward());
    return;
  }
  bool IsBuffer = false;
  Tensor Original = tensorToParametrize(M, Name, IsBuffer);
  std::vector<Tensor> Originals = {Original};
  if (P.RightInverse) {
    NoGradGuard NoGrad;
    std::vector<Tensor> R;
    try {
      R = P.RightInverse(Original);
    } catch (const NotImplemented &) {
      R = {Original}; // Taken as the identity, as PyTorch does.
    }
    if (R.size() == 1 && R[0].is_same(Original)) {
      // Nothing to copy.
    } else if (R.size() == 1 && R[0].shape() == Original.shape() &&
               R[0].dtype() == Original.dtype()) {
      Original.copy_(R[0]); // PyTorch's original.set_(new): same tensor.
    } else {
      Originals.clear();
      for (const Tensor &T : R) {
        Tensor O = T.detach().clone();
        if (!IsBuffer)
          O.requires_grad_(Original.requires_grad());
        Originals.push_back(O);
      }
    }
  }
  if (!Unsafe) {
    NoGradGuard NoGrad;
    checkKeeps(M, Name, Original, P.Forward(Originals), "the parametrization");
  }
  if (IsBuffer)
    M.remove_buffer(Name);
  else
    M.remove_parameter(Name);
  std::shared_ptr<ModuleDict> D = containerOf(M);
  if (!D) {
    D = M.register_module(Container, std::make_shared<ModuleDict>());
    M.set_type_name(Prefix + M.type_name());
    installHooks(M);
  }
  auto L = std::make_shared<ParametrizationList>(std::move(Originals), IsBuffer,
                                                 std::move(P));
  D->insert(Name, L);
  M.set_attr(Name, L->forward());
}

void assign(ModuleBase &M, const std::string &Name, const Tensor &Value) {
  std::shared_ptr<ParametrizationList> L = parametrizations(M, Name);
  L->right_inverse(Value);
  M.set_attr(Name, L->forward());
}

bool is_parametrized(const ModuleBase &M, const std::string &Name) {
  std::shared_ptr<ModuleDict> D = containerOf(M);
  if (!D)
    return false;
  return Name.empty() ? !D->empty() : D->contains(Name);
}

std::shared_ptr<ParametrizationList> parametrizations(const ModuleBase &M,
                                                      const std::string &Name) {
  std::shared_ptr<ModuleDict> D = containerOf(M);
  if (!D || !D->contains(Name))
    fail(ErrorKind::InvalidArgument, M.type_name(), ": tensor '", Name,
         "' is not parametrized");
  return D->at<ParametrizationList>(Name);
}

Tensor value(const ModuleBase &M, const std::string &Name) {
  return parametrizations(M, Name)->forward();
}

void remove_parametrizations(ModuleBase &M, const std::string &Name,
                             bool LeaveParametrized) {
  std::shared_ptr<ParametrizationList> L = parametrizations(M, Name);
  std::vector<Tensor> Originals = L->originals();
  bool IsBuffer = L->holds_buffers();
  Tensor Result;
  if (LeaveParametrized) {
    NoGradGuard NoGrad;
    Tensor Now = L->forward();
    if (Originals.size() == 1 && Originals[0].shape() == Now.shape() &&
        Originals[0].dtype() == Now.dtype()) {
      Originals[0].copy_(Now);
      Result = Originals[0];
    } else {
      Result = Now.detach().clone();
      if (!IsBuffer)
        Result.requires_grad_(Originals.empty() ||
                              Originals[0].requires_grad());
    }
  } else {
    if (Originals.size() != 1)
      fail(ErrorKind::InvalidArgument, "remove_parametrizations(",
           M.type_name(), ", '", Name,
           "', leave_parametrized=false): the tensor has ", Originals.size(),
           " originals; only a single one can take its place");
    Result = Originals[0];
  }
  std::shared_ptr<ModuleDict> D = containerOf(M);
  D->pop(Name);
  if (D->empty()) {
    M.remove_module(Container);
    if (std::shared_ptr<HookState> S = hooksOf(M)) {
      S->Pre.remove();
      S->Post.remove();
    }
    const std::string &T = M.type_name();
    if (T.rfind(Prefix, 0) == 0)
      M.set_type_name(T.substr(std::string(Prefix).size()));
  }
  if (IsBuffer)
    M.register_buffer(Name, Result);
  else
    M.register_parameter(Name, Result, Result.requires_grad());
}

Cached::Cached() { ++CacheDepth; }
Cached::~Cached() {
  if (--CacheDepth == 0)
    CacheValues.clear();
}

} // namespace nng::nn::utils::parametrize
