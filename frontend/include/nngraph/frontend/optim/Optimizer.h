//===- Optimizer.h - The base of the optimizers ---------------------------===//
//
// nng::optim::Optimizer is torch.optim.Optimizer in C++: parameter groups
// (each with its own options, e.g. its own lr), per-parameter state, step()
// and zero_grad(), and state_dict()/load_state_dict() in PyTorch's
// structure, {"state": {index: {name: value}}, "param_groups": [{option:
// value, ..., "params": [indices]}]}, so that a .pt writer can turn it into
// exactly what torch's optimizer.state_dict() holds. Options and state
// values are the few Python value kinds they take there (None, bool, int,
// float, a tuple of floats; tensors in the state). SGD.h and Adam.h hold
// the optimizers, LRScheduler.h the schedulers, OptimizerCheckpoint.h a file
// format for checkpoints.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace nng::optim {

/// A Python value of an option or a scheduler field: None, a bool, an int,
/// a float or a tuple of floats (Adam's betas, a scheduler's base_lrs).
class OptionValue {
public:
  using Storage =
      std::variant<std::monostate, bool, int64_t, double, std::vector<double>>;

  /// None.
  OptionValue() = default;
  OptionValue(std::nullptr_t) {}
  OptionValue(bool B) : V(B) {}
  OptionValue(int I) : V(static_cast<int64_t>(I)) {}
  OptionValue(long I) : V(static_cast<int64_t>(I)) {}
  OptionValue(long long I) : V(static_cast<int64_t>(I)) {}
  OptionValue(double D) : V(D) {}
  OptionValue(std::vector<double> T) : V(std::move(T)) {}
  OptionValue(std::initializer_list<double> T) : V(std::vector<double>(T)) {}
  OptionValue(std::pair<double, double> P)
      : V(std::vector<double>{P.first, P.second}) {}
  /// Strings are no option values (this stops "0.1" becoming true).
  OptionValue(const char *) = delete;

  bool is_none() const { return std::holds_alternative<std::monostate>(V); }
  bool is_bool() const { return std::holds_alternative<bool>(V); }
  bool is_int() const { return std::holds_alternative<int64_t>(V); }
  bool is_double() const { return std::holds_alternative<double>(V); }
  /// An int or a float (not a bool).
  bool is_number() const { return is_int() || is_double(); }
  bool is_tuple() const {
    return std::holds_alternative<std::vector<double>>(V);
  }

  /// The number as a double; throws unless is_number().
  double to_double() const;
  /// The int (or a float with an integral value); throws otherwise.
  int64_t to_int() const;
  bool to_bool() const;
  const std::vector<double> &to_tuple() const;
  /// Python's repr: None, True, 3, 0.1, (0.9, 0.999).
  std::string repr() const;
  /// "None", "bool", "int", "float", "tuple".
  const char *kind_name() const;
  /// Kind and value for messages: "float 0.1", "bool True", "None".
  std::string describe() const;

  const Storage &storage() const { return V; }
  bool operator==(const OptionValue &O) const = default;

private:
  Storage V;
};

/// An insertion-ordered dict of named values (Python's dict order matters
/// for the state_dict a .pt writer produces).
class OptionDict {
public:
  using Entry = std::pair<std::string, OptionValue>;

  OptionDict() = default;
  OptionDict(std::initializer_list<Entry> Entries);

  bool contains(std::string_view Key) const { return find(Key) != nullptr; }
  /// The value, or null.
  const OptionValue *find(std::string_view Key) const;
  /// The value; throws an Error naming the key when it is absent.
  const OptionValue &at(std::string_view Key) const;
  /// Replaces the value of Key, or appends it.
  void set(const std::string &Key, OptionValue V);
  /// Appends Key = V unless Key is present (Python's setdefault).
  void set_default(const std::string &Key, OptionValue V);
  /// at(Key).to_double() / to_bool(), with the key in the error.
  double number(std::string_view Key) const;
  bool flag(std::string_view Key) const;

  size_t size() const { return Entries.size(); }
  bool empty() const { return Entries.empty(); }
  auto begin() const { return Entries.begin(); }
  auto end() const { return Entries.end(); }
  bool operator==(const OptionDict &O) const = default;

private:
  std::vector<Entry> Entries;
};

/// A parameter group: parameters and their options. Given to an optimizer,
/// options holds per-group overrides of the optimizer's defaults (like
/// {'params': ..., 'lr': 0.01} in Python); add_param_group completes it
/// with the defaults it lacks (in PyTorch's order: its own keys first).
struct ParamGroup {
  std::vector<Tensor> params;
  OptionDict options;

  ParamGroup() = default;
  ParamGroup(std::vector<Tensor> Params, OptionDict Overrides = {})
      : params(std::move(Params)), options(std::move(Overrides)) {}

  /// The learning rate (schedulers change it).
  double lr() const { return options.number("lr"); }
  void set_lr(double Lr) { options.set("lr", Lr); }
};

/// A value of a parameter's optimizer state: None (SGD's momentum_buffer
/// without momentum), a tensor, or a number.
using StateValue = std::variant<std::monostate, Tensor, double>;
/// The optimizer state of one parameter ("step", "exp_avg", ...).
using ParamState = std::map<std::string, StateValue>;

/// What torch's optimizer.state_dict() holds. Parameters are numbered in
/// group order from 0. Like PyTorch's, the state tensors are shared with
/// the optimizer: clone them to keep a snapshot across later steps.
struct OptimizerStateDict {
  struct Group {
    /// Every option of the group, in PyTorch's key order ("params" last
    /// in Python: it is the field below).
    OptionDict options;
    std::vector<int64_t> params;
  };
  /// "state": parameter index -> state; parameters never stepped are absent.
  std::map<int64_t, ParamState> state;
  /// "param_groups".
  std::vector<Group> param_groups;
};

/// The base of all optimizers.
class Optimizer {
public:
  virtual ~Optimizer();
  Optimizer(const Optimizer &) = delete;
  Optimizer &operator=(const Optimizer &) = delete;

  /// The class name: "SGD", "Adam", "AdamW".
  const std::string &name() const { return Name; }
  /// The defaults a group's missing options take.
  const OptionDict &defaults() const { return Defaults; }
  /// The groups; options (lr above all) may be changed between steps.
  std::vector<ParamGroup> &param_groups() { return Groups; }
  const std::vector<ParamGroup> &param_groups() const { return Groups; }

  /// Adds a group (PyTorch's checks: no parameter in two groups, only
  /// leaves, known option names with valid values); the optimizer is
  /// unchanged when it throws.
  void add_param_group(ParamGroup Group);

  /// Clears the gradients of all parameters: drops them (set_to_none, the
  /// default here as in PyTorch 2) or fills them with zeros.
  void zero_grad(bool set_to_none = true);

  /// One update of every parameter that has a gradient (the others are
  /// skipped, their state untouched). Runs without recording autograd.
  /// Gradients and options are checked first, so a bad one throws before
  /// anything changes.
  void step();
  /// Evaluates Closure with grad mode on (it should zero the gradients,
  /// compute the loss and call backward), steps, and returns the loss.
  Tensor step(const std::function<Tensor()> &Closure);

  /// The state of P (empty if it was never stepped).
  const ParamState &state(const Tensor &P) const;

  /// The optimizer state in PyTorch's structure.
  OptimizerStateDict state_dict() const;
  /// Restores a state_dict: the group count and sizes must match; state
  /// tensors must fit their parameter (floating ones are converted to the
  /// parameter's dtype) and are copied. On error the optimizer is left
  /// unchanged.
  void load_state_dict(const OptimizerStateDict &StateDict);

  /// Like Python's repr: "SGD (\nParameter Group 0\n    lr: 0.1\n...)".
  std::string toString() const;

protected:
  Optimizer(std::string Name, OptionDict Defaults);

  /// One group of Params without overrides; none when Params is empty (so
  /// that addInitialGroups refuses it, as PyTorch does).
  static std::vector<ParamGroup> groupsFromParams(std::vector<Tensor> Params);
  /// Adds the construction's groups ("got an empty parameter list" when
  /// there are none); derived constructors call it.
  void addInitialGroups(std::vector<ParamGroup> Groups);
  /// Throws an Error saying what is wrong with the complete options O of a
  /// group; Where names it ("param group 1").
  virtual void checkOptions(const OptionDict &O,
                            const std::string &Where) const = 0;
  /// Updates the parameters of Group (index Index) that have gradients.
  virtual void updateGroup(ParamGroup &Group, size_t Index) = 0;
  /// Fixes a state loaded from a state_dict (e.g. a number "step" becomes
  /// a tensor); the default does nothing.
  virtual void normalizeLoadedState(ParamState &S) const {}
  /// The mutable state of P, created empty.
  ParamState &mutableState(const Tensor &P);

private:
  /// Checks options and gradients of every group before a step.
  void checkBeforeStep() const;

  std::string Name;
  OptionDict Defaults;
  std::vector<ParamGroup> Groups;
  /// Per parameter: the parameter (kept alive, like Python's dict key) and
  /// its state.
  std::unordered_map<const TensorImpl *, std::pair<Tensor, ParamState>> State;
};

/// The tensor named Key in S, or an undefined tensor when absent or None.
Tensor stateTensor(const ParamState &S, const std::string &Key);

} // namespace nng::optim
