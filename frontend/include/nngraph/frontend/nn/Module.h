//===- Module.h - nn::Module, PyTorch's module system in C++ ----*- C++ -*-===//
//
// A module is written with CRTP and holds its state in registered slots:
//
//   struct Net : nn::Module<Net> {
//     std::shared_ptr<nn::Linear> Fc1 =
//         register_module("fc1", std::make_shared<nn::Linear>(4, 3));
//     Tensor Scale = register_parameter("scale", ones({3}));
//     Tensor forward(const Tensor &X) { return (*Fc1)(X) * Scale; }
//   };
//
// nn::ModuleBase holds everything (parameters, buffers, children, hooks,
// the training flag, the type name) and implements the PyTorch API over it:
// named_parameters, state_dict, train/eval, to, apply, hooks, printing. Its
// state dict has PyTorch's extension points: extra state, virtual
// save_to_state_dict / load_from_state_dict, state-dict and load hooks.
// nn::Module<Derived> adds operator()(args...), which runs the hooks
// around Derived::forward: arguments are packed into nn::Values (Value.h)
// when a hook is installed, so pre-hooks may replace them, and converted
// back to forward's parameter types; the result likewise. Without hooks
// the call goes straight to forward. forward must be one public,
// non-template, non-overloaded member function; it may have default
// arguments.
//
// Registration is explicit (C++ has no __setattr__), and forgetting it is
// loud: a module called inside another module's forward that was never
// registered in any module (a std::vector<std::shared_ptr<Linear>> member,
// the trap the PyTorch docs warn about) throws an nng::Error saying to
// register it or hold it in nn::ModuleList / nn::Sequential. Each call
// pushes a dispatch::ModuleScope with the module's path (its dotted name
// from the root, as in named_modules) and type, so errors and the tracer
// know where they are.
//
// Registration also binds: the data member that receives a registration's
// result (Tensor scale = register_parameter(...)) is recorded as the
// member of that name, so the module can rebind it when the tensor behind
// the name changes (replace_parameter, set_attr; pruning's masked weight).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Hooks.h"
#include "nngraph/frontend/nn/StateDict.h"
#include "nngraph/frontend/nn/Value.h"
#include "nngraph/runtime/Error.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace nng::nn {

class ModuleBase;
using ModulePtr = std::shared_ptr<ModuleBase>;

namespace detail {
class ModuleCallGuard;
/// "Net" for typeid(ns::Net): demangled, namespaces stripped.
std::string demangleTypeName(const std::type_info &T);
/// True when module calls must go through ModuleBase::call even without
/// hooks of their own: a global hook is installed, or a dispatch mode
/// (which may take a call: see ModuleCallMode).
bool callsNeedValues();
} // namespace detail

/// A dispatch mode that also takes module calls: ModuleBase::call offers
/// each call to the innermost dispatch mode when it is one of these, before
/// running forward. The tracer is one (a leaf module becomes one node); nn
/// knows modes only through this interface.
class ModuleCallMode {
public:
  virtual ~ModuleCallMode();
  /// Takes the call of M (at Path, its dotted name) on Inputs: sets Out
  /// and returns true, or returns false to let forward run.
  virtual bool callModule(ModuleBase &M, const std::string &Path,
                          const std::vector<Value> &Inputs, Value &Out) = 0;
};

/// The untyped module: all state and the whole PyTorch API except the
/// typed operator() (see Module<Derived>).
class ModuleBase : public std::enable_shared_from_this<ModuleBase> {
public:
  virtual ~ModuleBase();
  ModuleBase(const ModuleBase &) = delete;
  ModuleBase &operator=(const ModuleBase &) = delete;

  /// The class name ("Linear"), as PyTorch prints it.
  const std::string &type_name() const { return TypeName; }
  /// Renames the type shown by printing and errors (parametrize renames a
  /// parametrized Linear "ParametrizedLinear", as PyTorch swaps its class).
  void set_type_name(std::string Name) { TypeName = std::move(Name); }

  // --- Registration ----------------------------------------------------------
  /// Registers Param as parameter Name and returns a handle sharing it
  /// (same impl: changes through either are seen by both). Sets
  /// requires_grad to RequiresGrad. An undefined Param reserves the name
  /// (absent from parameters() and state_dict()). A data member of this
  /// module initialised or assigned from the result is bound to Name (see
  /// "Member bindings"). Errors: empty name, a '.' in it, a name already
  /// taken by a parameter, buffer or submodule, a non-leaf tensor (one
  /// with a grad_fn).
  RegisteredTensor register_parameter(const std::string &Name, Tensor Param,
                                      bool RequiresGrad = true);
  /// Registers a buffer (state that is not trained: running statistics);
  /// non-persistent buffers are left out of state_dict(). Same name rules
  /// and member binding.
  RegisteredTensor register_buffer(const std::string &Name, Tensor Buffer,
                                   bool Persistent = true);
  /// Registers Module as submodule Name and returns it. A null Module
  /// reserves the name. Same name rules; a module cannot contain itself.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string &Name,
                                     std::shared_ptr<M> Module) {
    static_assert(std::is_base_of_v<ModuleBase, M>,
                  "register_module needs an nn module (a class derived from "
                  "nn::Module<...>)");
    ModulePtr Stored = addChild(Name, Module);
    if (Stored.get() == Module.get())
      return Module;
    return registeredAs<M>(Name, Stored);
  }
  /// Removes submodule Name (PyTorch's `del module.name`); returns it.
  /// Throws when there is none.
  ModulePtr remove_module(const std::string &Name);
  /// PyTorch's other name for register_module.
  template <typename M>
  std::shared_ptr<M> add_module(const std::string &Name,
                                std::shared_ptr<M> Module) {
    return register_module(Name, std::move(Module));
  }
  /// Replaces the registered submodule Name (which must exist) in place,
  /// keeping its position; returns the new one. Update your member too.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string &Name,
                                    std::shared_ptr<M> Module) {
    static_assert(std::is_base_of_v<ModuleBase, M>,
                  "replace_module needs an nn module");
    ModulePtr Stored = replaceChild(Name, Module);
    if (Stored.get() == Module.get())
      return Module;
    return registeredAs<M>(Name, Stored);
  }
  /// Replaces the registered parameter Name (which must exist; undefined
  /// reserves it again), keeping its position; for weight tying. The member
  /// bound to Name follows (layers bind theirs), so this is enough:
  ///   Head->replace_parameter("weight", Emb->weight);
  RegisteredTensor replace_parameter(const std::string &Name, Tensor Param,
                                     bool RequiresGrad = true);
  /// Replaces the registered buffer Name, keeping its persistence and
  /// position; the bound member follows.
  RegisteredTensor replace_buffer(const std::string &Name, Tensor Buffer);
  /// Unregisters parameter Name (PyTorch's `del module._parameters[name]`)
  /// and returns it; the bound member keeps its value and its binding.
  /// Errors when there is no such parameter.
  Tensor remove_parameter(const std::string &Name);
  /// Unregisters buffer Name (`del module._buffers[name]`), likewise.
  Tensor remove_buffer(const std::string &Name);

  // --- Member bindings -------------------------------------------------------
  // C++ has no __getattr__: forward reads its parameters through data
  // members (Tensor weight), which share the impl of the registered slot.
  // A binding records which member stands for a name, so the module can
  // rebind it when the tensor behind the name changes (replace_parameter,
  // set_attr, register_* of a name removed before; torch.nn.utils.prune
  // uses them to make `weight` the masked tensor). A data member that is
  // initialised or assigned from register_parameter / register_buffer /
  // replace_* of this module is bound automatically: the registration's
  // result (RegisteredTensor) tells the module the handle's address, and
  // an address inside this module's object (its Derived class, bases
  // included) is a member. Handles elsewhere (locals, containers, members
  // of a subclass of a layer) are not bound; bind those with bind_member.

  /// Binds Member (a Tensor that lives as long as this module, normally a
  /// data member) to Name, replacing an earlier binding of Name or of
  /// Member; when Name is a registered parameter or buffer, Member is set
  /// to it. Returns Member.
  Tensor &bind_member(const std::string &Name, Tensor &Member);
  /// The member bound to Name, or null.
  Tensor *bound_member(const std::string &Name) const;
  /// PyTorch's `module.name = value` for a tensor. A buffer Name is
  /// replaced (replace_buffer); any other unregistered Name is a plain
  /// attribute: the member bound to Name now holds Value (what pruning
  /// does with `weight` before each forward). Errors: Name is a parameter
  /// (use replace_parameter), or nothing is registered under Name and no
  /// member is bound to it.
  void set_attr(const std::string &Name, const Tensor &Value);

  // --- Iteration (registration order, depth first) ---------------------------
  /// All parameters (each shared one once).
  std::vector<Tensor> parameters(bool Recurse = true) const;
  /// (dotted name, parameter); with RemoveDuplicate a parameter or module
  /// reachable twice is listed once, under its first name.
  std::vector<std::pair<std::string, Tensor>>
  named_parameters(const std::string &Prefix = "", bool Recurse = true,
                   bool RemoveDuplicate = true) const;
  std::vector<Tensor> buffers(bool Recurse = true) const;
  std::vector<std::pair<std::string, Tensor>>
  named_buffers(const std::string &Prefix = "", bool Recurse = true,
                bool RemoveDuplicate = true) const;
  /// Direct submodules (each once).
  std::vector<ModulePtr> children() const;
  std::vector<std::pair<std::string, ModulePtr>> named_children() const;
  /// This module and all below it, pre-order; a shared submodule once.
  std::vector<ModulePtr> modules() const;
  std::vector<std::pair<std::string, ModulePtr>>
  named_modules(const std::string &Prefix = "",
                bool RemoveDuplicate = true) const;
  /// The submodule at a dotted path ("" is this module); throws naming the
  /// missing component.
  ModulePtr get_submodule(const std::string &Target) const;
  /// The parameter / buffer at a dotted path ("fc1.weight"); throws when
  /// absent.
  Tensor get_parameter(const std::string &Target) const;
  Tensor get_buffer(const std::string &Target) const;
  /// The submodule at Target as M (null when it is not an M).
  template <typename M>
  std::shared_ptr<M> get_submodule_as(const std::string &Target) const {
    return std::dynamic_pointer_cast<M>(get_submodule(Target));
  }
  /// This module as an M (null when it is not one).
  template <typename M> M *as() { return dynamic_cast<M *>(this); }
  template <typename M> const M *as() const {
    return dynamic_cast<const M *>(this);
  }
  /// A shared_ptr to this module: the owning one when it is held by a
  /// shared_ptr, else a non-owning one.
  ModulePtr ptr() const;

  // --- Modes and conversions -------------------------------------------------
  /// Sets training mode on this module and every submodule.
  ModuleBase &train(bool Mode = true);
  ModuleBase &eval() { return train(false); }
  bool is_training() const { return Training; }
  /// Converts floating-point parameters and buffers (and gradients) to T;
  /// integral ones keep their dtype. Tensor handles stay valid (the data
  /// inside each impl is replaced, like PyTorch's param.data = ...).
  ModuleBase &to(DType T);
  /// Moves parameters and buffers (and gradients) to D, keeping tensor
  /// handles: to the meta device drops their data (shapes and dtypes
  /// stay); to the cpu is a no-op for cpu tensors and an error for meta ones
  /// (no data to copy: use to_empty). cuda: an error in this build (compile
  /// the model with nng::compile instead).
  ModuleBase &to(Device D);
  /// PyTorch's to_empty(device=): every parameter and buffer (and gradient)
  /// gets new memory on D of its shape and dtype, uninitialized by contract
  /// (zero-filled here), keeping tensor handles. The step after building on
  /// the meta device: to_empty(Device::cpu()), then initialize or load.
  ModuleBase &to_empty(Device D);
  ModuleBase &to(Device D, DType T);
  /// To Other's device and dtype (PyTorch's module.to(tensor)).
  ModuleBase &to(const Tensor &Other);
  /// to(F16), to(BF16), to(F32), to(F64): PyTorch's half(), bfloat16(),
  /// float(), double().
  ModuleBase &half() { return to(DType::F16); }
  ModuleBase &bfloat16() { return to(DType::BF16); }
  ModuleBase &float_() { return to(DType::F32); }
  ModuleBase &double_() { return to(DType::F64); }
  /// Calls Fn on every submodule (children first, recursively) then on
  /// this module, like PyTorch's apply.
  ModuleBase &apply(const std::function<void(ModuleBase &)> &Fn);
  /// Clears gradients: undefined with SetToNone (PyTorch 2's default),
  /// else zeroed.
  void zero_grad(bool SetToNone = true);
  /// Sets requires_grad on every parameter (freezing with false).
  ModuleBase &requires_grad_(bool RequiresGrad = true);
  /// Number of elements over all (distinct) parameters.
  int64_t num_parameters(bool OnlyTrainable = false) const;

  // --- State dict ------------------------------------------------------------
  /// Parameters and persistent buffers under dotted keys, ordered like
  /// PyTorch (own parameters, own buffers, extra state, then each child).
  /// Values are detached tensors sharing the data (KeepVars: the handles
  /// themselves). Per module: state-dict pre-hooks, save_to_state_dict,
  /// the children, state-dict post-hooks.
  StateDict state_dict(const std::string &Prefix = "",
                       bool KeepVars = false) const;
  /// Copies SD's tensors into the parameters and buffers in place (dtype
  /// converted), or with Assign makes the given tensors the parameters and
  /// buffers (PyTorch 2's assign=True: no copy, dtype kept, requires_grad
  /// taken from the old parameter). Per module (on a working copy of SD):
  /// load pre-hooks, load_from_state_dict, the children; then the post-hooks
  /// (children first). Everything is checked before anything is written:
  /// a shape mismatch is always an error; with Strict so are missing and
  /// unexpected keys (as the post-hooks leave them). On error nothing
  /// changes and the message lists every offending key with both shapes.
  /// Returns the missing and unexpected keys.
  LoadStateDictResult load_state_dict(const StateDict &SD, bool Strict = true,
                                      bool Assign = false);

  /// Saves this module's own entries (not its children's) into
  /// Destination under Prefix (which ends in '.' or is empty): parameters,
  /// persistent buffers, then the extra state under Prefix + "_extra_state".
  /// Override it (PyTorch's _save_to_state_dict) to rename, convert or
  /// skip entries; call the base to keep the default ones.
  virtual void save_to_state_dict(StateDict &Destination,
                                  const std::string &Prefix,
                                  bool KeepVars) const;
  /// Checks this module's own entries of SD (a working copy that may be
  /// edited) and plans their writes into Ctx (PyTorch's
  /// _load_from_state_dict): each parameter and persistent buffer present
  /// is checked (shape) and planned (Ctx.copy, or replaced with assign),
  /// absent ones are missing; the extra state goes to set_extra_state; keys
  /// under Prefix naming neither an entry nor a child are unexpected.
  /// Override it to accept an old layout (rename keys in SD, then call the
  /// base) or to load entries yourself (plan writes with Ctx.copy /
  /// Ctx.defer so a failed load still changes nothing).
  virtual void load_from_state_dict(StateDict &SD, const std::string &Prefix,
                                    LoadStateDictContext &Ctx);
  /// State that is not a parameter or buffer, saved under
  /// "<prefix>_extra_state" (PyTorch's get_extra_state). A module has extra
  /// state when this returns a tensor; then load_state_dict expects the key
  /// (missing under strict otherwise) and passes it to set_extra_state. The
  /// default: none. PyTorch allows any picklable object; here it is a
  /// Tensor (encode other state in one).
  virtual std::optional<Tensor> get_extra_state() const;
  /// Takes the extra state load_state_dict found (PyTorch's
  /// set_extra_state); override it with get_extra_state. The default throws.
  virtual void set_extra_state(const Tensor &State);

  /// fn(ModuleBase &, const std::string &prefix, bool keep_vars), run by
  /// state_dict() before this module saves its entries (PyTorch 2's
  /// register_state_dict_pre_hook; 1.13 lacks it).
  template <typename Fn>
  RemovableHandle register_state_dict_pre_hook(Fn &&Hook) {
    return addStateDictPreHook(
        detail::adaptOrKeep<void>(std::forward<Fn>(Hook)));
  }
  /// fn(ModuleBase &, StateDict &sd, const std::string &prefix), run after
  /// this module and its children saved their entries; it may edit sd in
  /// place or return a replacement StateDict (which replaces the whole dict
  /// being built). PyTorch's _register_state_dict_hook (2.x:
  /// register_state_dict_post_hook).
  template <typename Fn>
  RemovableHandle register_state_dict_post_hook(Fn &&Hook) {
    return addStateDictHook(
        detail::adaptHook<std::optional<StateDict>>(std::forward<Fn>(Hook)));
  }
  /// fn(ModuleBase &, StateDict &sd, const std::string &prefix[,
  /// LoadStateDictContext &]), run before this module loads its entries;
  /// it may rewrite sd's keys (an old checkpoint layout) and report keys or
  /// errors through the context. PyTorch's
  /// _register_load_state_dict_pre_hook(hook, with_module=True).
  template <typename Fn>
  RemovableHandle register_load_state_dict_pre_hook(Fn &&Hook) {
    return addLoadPreHook(detail::adaptLoadPreHook(std::forward<Fn>(Hook)));
  }
  /// fn(ModuleBase &, LoadStateDictResult &incompatible_keys), run after the
  /// values are written, children's hooks first; it may edit the keys, and
  /// the strict check sees its edits (clearing both lists avoids the
  /// error). PyTorch's register_load_state_dict_post_hook.
  template <typename Fn>
  RemovableHandle register_load_state_dict_post_hook(Fn &&Hook) {
    return addLoadPostHook(detail::adaptOrKeep<void>(std::forward<Fn>(Hook)));
  }

  // --- Hooks -----------------------------------------------------------------
  /// fn(ModuleBase &, const std::vector<Value> &inputs), run before
  /// forward; may return replacement inputs (std::vector<Value>, or one
  /// Value: a tuple spreads into the inputs) or void / nullopt to keep them.
  template <typename Fn>
  RemovableHandle register_forward_pre_hook(Fn &&Hook, bool Prepend = false) {
    return addForwardPreHook(detail::adaptPreHook(std::forward<Fn>(Hook)),
                             Prepend);
  }
  /// fn(module, inputs, const Value &output), run after forward; may
  /// return a replacement output.
  template <typename Fn>
  RemovableHandle register_forward_hook(Fn &&Hook, bool Prepend = false) {
    return register_forward_hook(std::forward<Fn>(Hook),
                                 ForwardHookOptions{Prepend, false});
  }
  /// With options: register_forward_hook(fn, {.always_call = true}) runs
  /// fn even when the call throws (see ForwardHookOptions).
  template <typename Fn>
  RemovableHandle register_forward_hook(Fn &&Hook, ForwardHookOptions Options) {
    return addForwardHook(
        detail::adaptHook<std::optional<Value>>(std::forward<Fn>(Hook)),
        Options);
  }
  /// fn(module, grad_input, grad_output), run when the gradients with
  /// respect to the module's inputs are computed; may return replacement
  /// grad_input (same length). grad_input: one entry per positional input:
  /// undefined for non-tensor inputs; when no tensor input requires a
  /// gradient, all undefined (the first layer); else zeros for the tensor
  /// inputs that need none (as PyTorch's materialized gradients).
  /// grad_output: one per output (the output itself, or the elements of a
  /// tuple/list/dict output; undefined for non-tensors, zeros for tensors
  /// needing no gradient). Inputs and outputs pass through identity
  /// autograd nodes (PyTorch's BackwardHookFunction), so hooks fire only
  /// for calls made with grad mode on and an output requiring a gradient.
  template <typename Fn>
  RemovableHandle register_full_backward_hook(Fn &&Hook, bool Prepend = false) {
    return addBackwardHook(detail::adaptHook<std::optional<std::vector<Tensor>>>(
                               std::forward<Fn>(Hook)),
                           Prepend);
  }
  /// fn(module, grad_output), run before the gradients with respect to the
  /// inputs are computed; may return replacement grad_output.
  template <typename Fn>
  RemovableHandle register_full_backward_pre_hook(Fn &&Hook,
                                                  bool Prepend = false) {
    return addBackwardPreHook(
        detail::adaptHook<std::optional<std::vector<Tensor>>>(
            std::forward<Fn>(Hook)),
        Prepend);
  }

  /// The module's own forward pre-hooks with their ids, in call order
  /// (PyTorch's module._forward_pre_hooks). A hook registered as a
  /// ForwardPreHook holding a callable of type F is found with
  /// hook.target<F>() (torch.nn.utils.prune finds its methods this way).
  const std::vector<std::pair<int, ForwardPreHook>> &forward_pre_hooks() const {
    return Hooks->ForwardPre;
  }

  // --- Calling ---------------------------------------------------------------
  /// Runs the module on Values: global and own forward pre-hooks, backward
  /// hook setup, forward, forward hooks. What operator() does with hooks,
  /// and what Sequential and the tracer use.
  Value call(std::vector<Value> Inputs);
  /// Untyped call (modules held as ModuleBase, e.g. from a ModuleList); the
  /// result converts implicitly to Tensor. Module<Derived>::operator()
  /// hides this with the typed one.
  template <typename... Args> Value operator()(Args &&...A) {
    return call(std::vector<Value>{toValue(std::forward<Args>(A))...});
  }
  /// Derived::forward on Values (no hooks); implemented by Module<Derived>.
  virtual Value forwardValues(const std::vector<Value> &Inputs) = 0;
  /// Whether a call must go through Values (a hook is installed).
  bool needsValueCall() const {
    return !Hooks->empty() || detail::callsNeedValues();
  }
  /// Allows calling this module inside another module's forward without
  /// registering it (a deliberately separate model, e.g. a frozen teacher).
  void set_allow_unregistered_call(bool Allow = true) {
    AllowUnregisteredCall = Allow;
  }

  // --- Printing --------------------------------------------------------------
  /// The text inside "Type(...)" (override it: "in_features=4, ...").
  virtual std::string extra_repr() const;
  /// The module tree as PyTorch prints it.
  std::string to_string() const;

protected:
  explicit ModuleBase(std::string TypeName);
  /// The bytes of the whole module object (the most derived class of
  /// Module<Derived>): handles inside it are members (member bindings).
  void setObjectExtent(const void *Begin, size_t Size) {
    ObjectBegin = static_cast<const char *>(Begin);
    ObjectSize = Size;
  }
  struct BufferSlot {
    Tensor Value;
    bool Persistent = true;
  };
  /// The registered slots by name, in registration order (undefined tensor
  /// / null module: a reserved name). Containers rewrite them
  /// (renumbering); use setChildren to keep parent counts right.
  OrderedMap<Tensor> Params;
  OrderedMap<BufferSlot> Buffers;
  OrderedMap<ModulePtr> Children;
  bool Training = true;

  /// Registers a child (validated name; the global module registration
  /// hooks may replace it); returns the module stored.
  ModulePtr addChild(const std::string &Name, ModulePtr Module);
  ModulePtr replaceChild(const std::string &Name, ModulePtr Module);
  /// Replaces all children at once (containers renumbering entries).
  void setChildren(std::vector<std::pair<std::string, ModulePtr>> New);
  /// Throws unless Name is a valid, free slot name; What is "parameter",
  /// "buffer" or "module".
  void checkNewName(const std::string &Name, const char *What) const;

private:
  friend class detail::ModuleCallGuard;
  /// Stored as an M (a registration hook replaced it): throws when it is
  /// not one.
  template <typename M>
  std::shared_ptr<M> registeredAs(const std::string &Name,
                                  const ModulePtr &Stored) {
    if (!Stored)
      return nullptr;
    if (auto P = std::dynamic_pointer_cast<M>(Stored))
      return P;
    failRegisteredType(Name, *Stored, detail::demangleTypeName(typeid(M)));
  }
  [[noreturn]] void failRegisteredType(const std::string &Name,
                                       const ModuleBase &Stored,
                                       const std::string &Wanted) const;
  /// The global registration hooks' verdict on a new entry.
  ModulePtr registrationHooks(const std::string &Name, ModulePtr Module);
  Tensor registrationHooks(const std::string &Name, Tensor T, bool IsParam);
  static const std::vector<std::pair<std::string, ModulePtr>> &
  childSlots(const ModuleBase &M);
  /// state_dict() of this module into Destination (hooks included).
  void saveTree(StateDict &Destination, const std::string &Prefix,
                bool KeepVars) const;
  /// The load walk: pre-hooks and load_from_state_dict of this module,
  /// then its children; modules with post-hooks are appended to PostOrder
  /// children first.
  void loadTree(StateDict &SD, const std::string &Prefix,
                LoadStateDictContext &Ctx,
                std::vector<ModuleBase *> &PostOrder);
  /// What a RegisteredTensor of this module calls: binds Handle to Name
  /// when it lies inside this module's object.
  static void notifyHandle(void *Owner, const std::string &Name,
                           Tensor *Handle);
  /// Sets the member bound to Name (if any) to T.
  void updateMember(const std::string &Name, const Tensor &T);
  /// The other direction: a bound member that user code reassigned (the
  /// PyTorch idiom `self.mean = m * self.mean + ...` written as `mean =
  /// ...`) becomes the registered tensor, so state_dict(), the iterations,
  /// to() and the tracer see what forward sees. A buffer takes any tensor;
  /// a parameter takes a leaf that requires grad (PyTorch accepts only an
  /// nn.Parameter there) and anything else is an error naming it. Called
  /// by every read of the slots; logically const (the member is the truth).
  void adoptMembers() const;
  RegisteredTensor registered(const std::string &Name, Tensor T);
  /// The distinct impls of every parameter and buffer of the tree.
  std::vector<TensorImpl *> tensorImpls();
  [[noreturn]] void failMetaCopy(const std::string &Name, const char *What,
                                 Device D) const;
  RemovableHandle addForwardPreHook(ForwardPreHook H, bool Prepend);
  RemovableHandle addForwardHook(ForwardHook H, ForwardHookOptions Options);
  RemovableHandle addStateDictPreHook(StateDictPreHook H);
  RemovableHandle addStateDictHook(StateDictHook H);
  RemovableHandle addLoadPreHook(LoadStateDictPreHook H);
  RemovableHandle addLoadPostHook(LoadStateDictPostHook H);
  RemovableHandle addBackwardHook(BackwardHook H, bool Prepend);
  RemovableHandle addBackwardPreHook(BackwardPreHook H, bool Prepend);

  std::string TypeName;
  std::shared_ptr<detail::HookRegistry> Hooks;
  /// How many modules hold this one as a child (the loud check).
  int NumParents = 0;
  /// The name it was last registered under.
  std::string LastName;
  bool AllowUnregisteredCall = false;
  /// Member bindings: (name, member handle).
  std::vector<std::pair<std::string, Tensor *>> Members;
  const char *ObjectBegin = nullptr;
  size_t ObjectSize = 0;
};

/// Prints M like PyTorch's repr.
std::ostream &operator<<(std::ostream &OS, const ModuleBase &M);

namespace detail {

/// Scope of one module call: checks registration (the loud check), works
/// out the module's path, and pushes a dispatch::ModuleScope; pops on
/// destruction.
class ModuleCallGuard {
public:
  ModuleCallGuard(ModuleBase &M, bool InForward);
  ~ModuleCallGuard();
  ModuleCallGuard(const ModuleCallGuard &) = delete;
  ModuleCallGuard &operator=(const ModuleCallGuard &) = delete;
  /// Marks whether forward (rather than a hook) is running.
  void setInForward(bool InForward);
  /// Adds "in module PATH (Type)" to E unless already its last line.
  void addContext(Error &E) const;
  /// The path of this call.
  const std::string &path() const;
};

template <typename T> struct MemberFnTraits;
#define NNG_MEMBER_FN_TRAITS(QUALS)                                            \
  template <typename C, typename R, typename... A>                             \
  struct MemberFnTraits<R (C::*)(A...) QUALS> {                                \
    using Result = std::remove_cvref_t<R>;                                     \
    using Args = std::tuple<A...>;                                             \
    static constexpr size_t Arity = sizeof...(A);                              \
  };
NNG_MEMBER_FN_TRAITS()
NNG_MEMBER_FN_TRAITS(const)
NNG_MEMBER_FN_TRAITS(noexcept)
NNG_MEMBER_FN_TRAITS(const noexcept)
NNG_MEMBER_FN_TRAITS(&)
NNG_MEMBER_FN_TRAITS(const &)
#undef NNG_MEMBER_FN_TRAITS

/// True when D has exactly one public, non-template forward.
template <typename D>
concept HasUniqueForward = requires { &D::forward; };

template <typename D> using ForwardTraits = MemberFnTraits<decltype(&D::forward)>;
template <typename D, size_t I>
using ForwardArg = std::tuple_element_t<I, typename ForwardTraits<D>::Args>;

[[noreturn]] void failNoForward(const ModuleBase &M);
[[noreturn]] void failArity(const ModuleBase &M, size_t Given, size_t Arity);

/// Whether forward can be called with its first N parameters (the rest
/// defaulted).
template <typename D, size_t... I>
constexpr bool callableWithFirst(std::index_sequence<I...>) {
  return requires(D &S) { S.forward(std::declval<ForwardArg<D, I>>()...); };
}

template <typename D, size_t... I>
Value invokeExact(D &Self, const std::vector<Value> &In,
                  std::index_sequence<I...>) {
  if constexpr (std::is_void_v<typename ForwardTraits<D>::Result>) {
    Self.forward(fromValue<ForwardArg<D, I>>(In[I])...);
    return Value();
  } else {
    return toValue(Self.forward(fromValue<ForwardArg<D, I>>(In[I])...));
  }
}

/// Calls forward with In.size() arguments (N counts up to the arity).
template <typename D, size_t N>
Value invokeForward(D &Self, const std::vector<Value> &In) {
  if constexpr (N > ForwardTraits<D>::Arity) {
    failArity(Self, In.size(), ForwardTraits<D>::Arity);
  } else {
    if (In.size() == N) {
      if constexpr (callableWithFirst<D>(std::make_index_sequence<N>{}))
        return invokeExact(Self, In, std::make_index_sequence<N>{});
      else
        failArity(Self, In.size(), ForwardTraits<D>::Arity);
    }
    return invokeForward<D, N + 1>(Self, In);
  }
}

} // namespace detail

/// The base of user modules: `struct Net : nn::Module<Net> { ... }`.
template <typename Derived> class Module : public ModuleBase {
public:
  Module() : ModuleBase(detail::demangleTypeName(typeid(Derived))) {
    setObjectExtent(static_cast<Derived *>(this), sizeof(Derived));
  }

  /// Calls forward through the hooks (see the file comment). Returns
  /// forward's return type.
  template <typename... Args> auto operator()(Args &&...A) {
    static_assert(detail::HasUniqueForward<Derived>,
                  "nn::Module<Derived>::operator() needs one public, "
                  "non-template, non-overloaded Derived::forward");
    using R = typename detail::ForwardTraits<Derived>::Result;
    if (!needsValueCall()) {
      detail::ModuleCallGuard G(*this, true);
      try {
        if constexpr (std::is_void_v<R>)
          self().forward(std::forward<Args>(A)...);
        else
          return R(self().forward(std::forward<Args>(A)...));
      } catch (Error &E) {
        G.addContext(E);
        throw;
      }
      if constexpr (std::is_void_v<R>)
        return;
    }
    Value Out = call(std::vector<Value>{toValue(std::forward<Args>(A))...});
    if constexpr (!std::is_void_v<R>)
      return fromValue<R>(Out);
  }

  Value forwardValues(const std::vector<Value> &Inputs) override {
    if constexpr (detail::HasUniqueForward<Derived>)
      return detail::invokeForward<Derived, 0>(self(), Inputs);
    else
      detail::failNoForward(*this);
  }

private:
  Derived &self() { return static_cast<Derived &>(*this); }
};

/// std::make_shared<M>(args...): modules live in shared_ptrs.
template <typename M, typename... Args> std::shared_ptr<M> make(Args &&...A) {
  return std::make_shared<M>(std::forward<Args>(A)...);
}

} // namespace nng::nn
