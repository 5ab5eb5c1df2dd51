//===- Hooks.h - Module hooks and their removable handles --------*- C++ -*-===//
//
// The hook types of nn::Module (forward pre-hooks, forward hooks, full
// backward hooks and backward pre-hooks), the RemovableHandle that every
// registration returns, and the global hooks that run for every module
// (torch.nn.modules.module.register_module_forward_hook & co.). Global
// hooks run before a module's own hooks, as in PyTorch. The registries are
// plain lists without locks: register and remove hooks while no other
// thread is calling modules.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Value.h"

#include <functional>
#include <memory>
#include <optional>
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

namespace detail {

/// The hooks of one module (or the global ones). Ids are unique across
/// all registries, so a handle knows its hook by id alone.
struct HookRegistry {
  std::vector<std::pair<int, ForwardPreHook>> ForwardPre;
  std::vector<std::pair<int, ForwardHook>> Forward;
  std::vector<std::pair<int, BackwardHook>> Backward;
  std::vector<std::pair<int, BackwardPreHook>> BackwardPre;

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
RemovableHandle addGlobalForwardHook(ForwardHook Hook);
RemovableHandle addGlobalBackwardHook(BackwardHook Hook);
RemovableHandle addGlobalBackwardPreHook(BackwardPreHook Hook);
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
template <typename Fn> RemovableHandle register_module_forward_hook(Fn &&Hook) {
  return detail::addGlobalForwardHook(
      detail::adaptHook<std::optional<Value>>(std::forward<Fn>(Hook)));
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

} // namespace nng::nn
