//===- Hooks.h - Module hooks and their removable handles --------*- C++
//-*-===//
//
// The hook types of nn::Module (forward pre-hooks, forward hooks, full
// backward hooks and backward pre-hooks, state-dict save and load hooks),
// the RemovableHandle that every registration returns, and the global hooks
// that run for every module (torch.nn.modules.module.register_module_
// forward_hook & co., and PyTorch 2's register_module_*_registration_hook,
// run when any module registers a submodule, parameter or buffer). Global
// hooks run before a module's own hooks, as in PyTorch. The registries are
// plain lists without locks: register and remove hooks while no other
// thread is calling modules.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/StateDict.h"
#include "nngraph/frontend/nn/Value.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace nng::nn {

class ModuleBase;

/// fn(module, inputs) -> replacement inputs, or nullopt to keep them.
using ForwardPreHook = std::function<std::optional<std::vector<Value>>(
    ModuleBase &, const std::vector<Value> &)>;
/// fn(module, inputs, output) -> replacement output, or nullopt.
using ForwardHook = std::function<std::optional<Value>(
    ModuleBase &, const std::vector<Value> &, const Value &)>;
/// fn(module, grad_input, grad_output) -> replacement grad_input, or
/// nullopt. grad_input has one entry per positional input of the call
/// (undefined for non-tensor inputs and inputs that need no gradient);
/// grad_output one per output tensor (see Module.h).
using BackwardHook = std::function<std::optional<std::vector<Tensor>>(
    ModuleBase &, const std::vector<Tensor> &, const std::vector<Tensor> &)>;
/// fn(module, grad_output) -> replacement grad_output, or nullopt.
using BackwardPreHook = std::function<std::optional<std::vector<Tensor>>(
    ModuleBase &, const std::vector<Tensor> &)>;

/// fn(module, prefix, keep_vars), run by state_dict() before the module
/// saves its own entries (PyTorch 2's register_state_dict_pre_hook).
using StateDictPreHook =
    std::function<void(ModuleBase &, const std::string &, bool)>;
/// fn(module, state_dict, prefix) -> a replacement dict, or nullopt; run
/// after the module and its children saved their entries; may edit the
/// dict in place (PyTorch's _register_state_dict_hook).
using StateDictHook = std::function<std::optional<StateDict>(
    ModuleBase &, StateDict &, const std::string &)>;
/// fn(module, state_dict, prefix, context), run by load_state_dict() before
/// the module loads its own entries; may rewrite the keys of the dict (a
/// working copy) and report keys or errors through the context (PyTorch's
/// _register_load_state_dict_pre_hook with with_module=True).
using LoadStateDictPreHook = std::function<void(
    ModuleBase &, StateDict &, const std::string &, LoadStateDictContext &)>;
/// fn(module, incompatible_keys), run after the module and its children
/// loaded; may edit the keys (PyTorch's register_load_state_dict_post_hook).
using LoadStateDictPostHook =
    std::function<void(ModuleBase &, LoadStateDictResult &)>;
/// fn(module, name, submodule) -> a replacement, or null to keep it.
using ModuleRegistrationHook = std::function<std::shared_ptr<ModuleBase>(
    ModuleBase &, const std::string &, const std::shared_ptr<ModuleBase> &)>;
/// fn(module, name, tensor) -> a replacement, or an undefined tensor to
/// keep it (parameters and buffers).
using TensorRegistrationHook =
    std::function<Tensor(ModuleBase &, const std::string &, const Tensor &)>;

/// The options of register_forward_hook (PyTorch's keyword arguments).
struct ForwardHookOptions {
  /// Run before the hooks already registered.
  bool prepend = false;
  /// Run even when forward (or a pre-hook, or an earlier forward hook)
  /// throws: the hook then gets a None output, an exception it throws is
  /// dropped, and the original exception is rethrown (PyTorch 2).
  bool always_call = false;
};

namespace detail {

/// The hooks of one module (or the global ones). Ids are unique across
/// all registries, so a handle knows its hook by id alone.
struct HookRegistry {
  std::vector<std::pair<int, ForwardPreHook>> ForwardPre;
  std::vector<std::pair<int, ForwardHook>> Forward;
  std::vector<std::pair<int, BackwardHook>> Backward;
  std::vector<std::pair<int, BackwardPreHook>> BackwardPre;
  /// Ids of the forward hooks registered with always_call.
  std::vector<int> AlwaysCalled;
  // Not call hooks (they do not make calls take the Value path):
  std::vector<std::pair<int, StateDictPreHook>> StateDictPre;
  std::vector<std::pair<int, StateDictHook>> StateDictPost;
  std::vector<std::pair<int, LoadStateDictPreHook>> LoadPre;
  std::vector<std::pair<int, LoadStateDictPostHook>> LoadPost;
  /// Global only.
  std::vector<std::pair<int, ModuleRegistrationHook>> ModuleRegistration;
  std::vector<std::pair<int, TensorRegistrationHook>> ParameterRegistration;
  std::vector<std::pair<int, TensorRegistrationHook>> BufferRegistration;

  bool hasForward() const { return !ForwardPre.empty() || !Forward.empty(); }
  bool hasBackward() const { return !Backward.empty() || !BackwardPre.empty(); }
  bool empty() const { return !hasForward() && !hasBackward(); }
  /// Removes the hook with this id from whichever list holds it.
  void remove(int Id);
  /// A fresh hook id.
  static int nextId();
};

/// The registry of the global hooks.
const std::shared_ptr<HookRegistry> &globalHooks();

/// Adapts a user callable to the stored hook types: a callable returning
/// void keeps the value; one returning T (convertible to the optional
/// result) replaces it.
template <typename R, typename Fn> auto adaptHook(Fn &&F) {
  return [F = std::forward<Fn>(F)](auto &...Args) -> R {
    using Ret = decltype(F(Args...));
    if constexpr (std::is_void_v<Ret>) {
      F(Args...);
      return std::nullopt;
    } else {
      return R(F(Args...));
    }
  };
}

/// Like adaptHook for hooks whose "keep" value is R() (a null module, an
/// undefined tensor) and for hooks taking arguments by value.
template <typename R, typename Fn> auto adaptOrKeep(Fn &&F) {
  return [F = std::forward<Fn>(F)](auto &&...Args) -> R {
    using Ret = decltype(F(Args...));
    if constexpr (std::is_void_v<Ret>) {
      F(Args...);
      return R();
    } else {
      return R(F(Args...));
    }
  };
}

/// A load pre-hook may leave out the context: fn(module, state_dict,
/// prefix).
template <typename Fn> LoadStateDictPreHook adaptLoadPreHook(Fn &&F) {
  return [F = std::forward<Fn>(F)](ModuleBase &M, StateDict &SD,
                                   const std::string &Prefix,
                                   LoadStateDictContext &C) {
    if constexpr (std::is_invocable_v<std::decay_t<Fn> &, ModuleBase &,
                                      StateDict &, const std::string &,
                                      LoadStateDictContext &>)
      F(M, SD, Prefix, C);
    else
      F(M, SD, Prefix);
  };
}

/// A ForwardPreHook is stored as it is (so target<F>() finds the callable
/// it holds; torch.nn.utils.prune finds its hooks this way).
inline ForwardPreHook adaptPreHook(ForwardPreHook F) { return F; }

/// A pre-hook may return replacement inputs as a vector of Values, or a
/// single Value (a tuple is spread into the inputs, anything else becomes
/// the only input), as PyTorch wraps a non-tuple result into a 1-tuple.
template <typename Fn> ForwardPreHook adaptPreHook(Fn &&F) {
  return [F = std::forward<Fn>(F)](ModuleBase &M, const std::vector<Value> &In)
             -> std::optional<std::vector<Value>> {
    using Ret = decltype(F(M, In));
    if constexpr (std::is_void_v<Ret>) {
      F(M, In);
      return std::nullopt;
    } else if constexpr (std::is_convertible_v<
                             Ret, std::optional<std::vector<Value>>>) {
      return std::optional<std::vector<Value>>(F(M, In));
    } else {
      std::optional<Value> R(F(M, In));
      if (!R)
        return std::nullopt;
      if (R->isTuple())
        return R->elements();
      return std::vector<Value>{*R};
    }
  };
}

} // namespace detail

/// Removes the hook it was returned for. remove() is idempotent and safe
/// after the module is gone; destroying the handle does not remove the hook
/// (as in PyTorch).
class RemovableHandle {
public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<detail::HookRegistry> Registry, int Id)
      : Registry(std::move(Registry)), Id(Id) {}
  void remove();
  /// The hook's id (unique among all hooks).
  int id() const { return Id; }

private:
  std::weak_ptr<detail::HookRegistry> Registry;
  int Id = -1;
};

namespace detail {
RemovableHandle addGlobalForwardPreHook(ForwardPreHook Hook);
RemovableHandle addGlobalForwardHook(ForwardHook Hook,
                                     ForwardHookOptions Options = {});
RemovableHandle addGlobalBackwardHook(BackwardHook Hook);
RemovableHandle addGlobalBackwardPreHook(BackwardPreHook Hook);
RemovableHandle addGlobalModuleRegistrationHook(ModuleRegistrationHook Hook);
RemovableHandle addGlobalParameterRegistrationHook(TensorRegistrationHook Hook);
RemovableHandle addGlobalBufferRegistrationHook(TensorRegistrationHook Hook);
} // namespace detail

/// Global forward pre-hook, run for every module call before the module's
/// own pre-hooks: fn(ModuleBase &, const std::vector<Value> &inputs) may
/// return replacement inputs (void: keep them).
template <typename Fn>
RemovableHandle register_module_forward_pre_hook(Fn &&Hook) {
  return detail::addGlobalForwardPreHook(
      detail::adaptPreHook(std::forward<Fn>(Hook)));
}
/// Global forward hook: fn(module, inputs, const Value &output) may return
/// a replacement output (void: keep it).
template <typename Fn>
RemovableHandle register_module_forward_hook(Fn &&Hook,
                                             ForwardHookOptions Options = {}) {
  return detail::addGlobalForwardHook(
      detail::adaptHook<std::optional<Value>>(std::forward<Fn>(Hook)), Options);
}
/// Global full backward hook: fn(module, grad_input, grad_output) may
/// return replacement grad_input.
template <typename Fn>
RemovableHandle register_module_full_backward_hook(Fn &&Hook) {
  return detail::addGlobalBackwardHook(
      detail::adaptHook<std::optional<std::vector<Tensor>>>(
          std::forward<Fn>(Hook)));
}
/// Global backward pre-hook: fn(module, grad_output) may return
/// replacement grad_output.
template <typename Fn>
RemovableHandle register_module_full_backward_pre_hook(Fn &&Hook) {
  return detail::addGlobalBackwardPreHook(
      detail::adaptHook<std::optional<std::vector<Tensor>>>(
          std::forward<Fn>(Hook)));
}

/// Global module registration hook (PyTorch 2's
/// torch.nn.modules.module.register_module_module_registration_hook):
/// fn(ModuleBase &parent, const std::string &name, const ModulePtr &child),
/// run whenever a module registers or replaces a submodule (register_module,
/// replace_module, containers adding entries); may return a replacement
/// (a null pointer or void keeps it).
template <typename Fn>
RemovableHandle register_module_module_registration_hook(Fn &&Hook) {
  return detail::addGlobalModuleRegistrationHook(
      detail::adaptOrKeep<std::shared_ptr<ModuleBase>>(std::forward<Fn>(Hook)));
}
/// Global parameter registration hook: fn(module, name, const Tensor &),
/// run when a module registers or replaces a (defined) parameter; may
/// return a replacement (an undefined tensor or void keeps it).
template <typename Fn>
RemovableHandle register_module_parameter_registration_hook(Fn &&Hook) {
  return detail::addGlobalParameterRegistrationHook(
      detail::adaptOrKeep<Tensor>(std::forward<Fn>(Hook)));
}
/// Global buffer registration hook, likewise for buffers.
template <typename Fn>
RemovableHandle register_module_buffer_registration_hook(Fn &&Hook) {
  return detail::addGlobalBufferRegistrationHook(
      detail::adaptOrKeep<Tensor>(std::forward<Fn>(Hook)));
}

} // namespace nng::nn
