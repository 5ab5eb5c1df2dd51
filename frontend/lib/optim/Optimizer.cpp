//===- Optimizer.cpp - Parameter groups, state and state_dict -------------===//
//
// The optimizer-independent half of torch.optim.Optimizer: option values
// and dicts, add_param_group with PyTorch's checks, zero_grad, the step
// driver (checks everything, then runs the optimizer's update without
// autograd), and state_dict/load_state_dict with PyTorch's numbering of
// parameters across groups. load_state_dict builds the new groups and state
// completely before swapping them in, so an error leaves the optimizer as
// it was.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/Optimizer.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

namespace nng::optim {

// --- OptionValue
// ---------------------------------------------------------------

const char *OptionValue::kind_name() const {
  static const char *Names[] = {"None", "bool", "int", "float", "tuple"};
  return Names[V.index()];
}

std::string OptionValue::describe() const {
  return is_none() ? "None" : std::string(kind_name()) + " " + repr();
}

double OptionValue::to_double() const {
  if (const auto *I = std::get_if<int64_t>(&V))
    return static_cast<double>(*I);
  if (const auto *D = std::get_if<double>(&V))
    return *D;
  fail(ErrorKind::InvalidArgument, "expected a number, got ", describe());
}

int64_t OptionValue::to_int() const {
  if (const auto *I = std::get_if<int64_t>(&V))
    return *I;
  if (const auto *D = std::get_if<double>(&V))
    if (std::isfinite(*D) && std::trunc(*D) == *D && std::fabs(*D) < 9.0e18)
      return static_cast<int64_t>(*D);
  fail(ErrorKind::InvalidArgument, "expected an int, got ", describe());
}

bool OptionValue::to_bool() const {
  if (const auto *B = std::get_if<bool>(&V))
    return *B;
  fail(ErrorKind::InvalidArgument, "expected a bool, got ", describe());
}

const std::vector<double> &OptionValue::to_tuple() const {
  if (const auto *T = std::get_if<std::vector<double>>(&V))
    return *T;
  fail(ErrorKind::InvalidArgument, "expected a tuple of numbers, got ",
       describe());
}

namespace {

/// Python's repr of a float: the shortest text that reads back exactly,
/// with ".0" for integral values.
std::string floatRepr(double D) {
  if (std::isnan(D))
    return "nan";
  if (std::isinf(D))
    return D > 0 ? "inf" : "-inf";
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::ostringstream OS;
    OS.precision(Precision);
    OS << D;
    if (std::stod(OS.str()) == D) {
      std::string S = OS.str();
      if (S.find_first_of(".en") == std::string::npos)
        S += ".0";
      return S;
    }
  }
  return std::to_string(D);
}

} // namespace

std::string OptionValue::repr() const {
  switch (V.index()) {
  case 0:
    return "None";
  case 1:
    return std::get<bool>(V) ? "True" : "False";
  case 2:
    return std::to_string(std::get<int64_t>(V));
  case 3:
    return floatRepr(std::get<double>(V));
  default: {
    const std::vector<double> &T = std::get<std::vector<double>>(V);
    std::string S = "(";
    for (size_t I = 0; I < T.size(); ++I)
      S += (I ? ", " : "") + floatRepr(T[I]);
    return S + (T.size() == 1 ? ",)" : ")");
  }
  }
}

// --- OptionDict
// ------------------------------------------------------------------

OptionDict::OptionDict(std::initializer_list<Entry> List) {
  for (const Entry &E : List)
    set(E.first, E.second);
}

const OptionValue *OptionDict::find(std::string_view Key) const {
  for (const Entry &E : Entries)
    if (E.first == Key)
      return &E.second;
  return nullptr;
}

const OptionValue &OptionDict::at(std::string_view Key) const {
  if (const OptionValue *V = find(Key))
    return *V;
  std::string Keys;
  for (const Entry &E : Entries)
    Keys += (Keys.empty() ? "" : ", ") + E.first;
  fail(ErrorKind::InvalidArgument, "no option '", Key,
       "' (the keys are: ", Keys.empty() ? "none" : Keys, ")");
}

void OptionDict::set(const std::string &Key, OptionValue V) {
  for (Entry &E : Entries)
    if (E.first == Key) {
      E.second = std::move(V);
      return;
    }
  Entries.emplace_back(Key, std::move(V));
}

void OptionDict::set_default(const std::string &Key, OptionValue V) {
  if (!contains(Key))
    Entries.emplace_back(Key, std::move(V));
}

double OptionDict::number(std::string_view Key) const {
  const OptionValue &V = at(Key);
  if (!V.is_number())
    fail(ErrorKind::InvalidArgument, "option '", Key, "' is ", V.describe(),
         "; it must be a number");
  return V.to_double();
}

bool OptionDict::flag(std::string_view Key) const {
  const OptionValue &V = at(Key);
  if (!V.is_bool())
    fail(ErrorKind::InvalidArgument, "option '", Key, "' is ", V.describe(),
         "; it must be a bool");
  return V.to_bool();
}

// --- Optimizer
// -------------------------------------------------------------------

Tensor stateTensor(const ParamState &S, const std::string &Key) {
  auto It = S.find(Key);
  if (It == S.end())
    return Tensor();
  if (const Tensor *T = std::get_if<Tensor>(&It->second))
    return *T;
  return Tensor();
}

Optimizer::Optimizer(std::string Name, OptionDict Defaults)
    : Name(std::move(Name)), Defaults(std::move(Defaults)) {}

Optimizer::~Optimizer() = default;

std::vector<ParamGroup>
Optimizer::groupsFromParams(std::vector<Tensor> Params) {
  std::vector<ParamGroup> Groups;
  if (!Params.empty())
    Groups.emplace_back(std::move(Params));
  return Groups;
}

void Optimizer::addInitialGroups(std::vector<ParamGroup> Initial) {
  if (Initial.empty())
    fail(ErrorKind::InvalidArgument, Name,
         ": got an empty parameter list; pass the parameters to optimize "
         "(e.g. model.parameters()) or at least one parameter group");
  for (ParamGroup &G : Initial)
    add_param_group(std::move(G));
}

void Optimizer::add_param_group(ParamGroup Group) {
  std::string Where = Name + ": param group " + std::to_string(Groups.size());
  // Options: only known names (the defaults', and "initial_lr" that the LR
  // schedulers add); the group's own options keep their order and the
  // missing defaults follow in the defaults' order, as in PyTorch's dict.
  // An absent default (SGD's lr) is required.
  for (const auto &[Key, Value] : Group.options)
    if (!Defaults.contains(Key) && Key != "initial_lr") {
      std::string Known;
      for (const auto &D : Defaults)
        Known += (Known.empty() ? "" : ", ") + D.first;
      fail(ErrorKind::InvalidArgument, Where, ": unknown option '", Key, "'; ",
           Name, " takes ", Known, " (and initial_lr)");
    }
  for (const auto &[Key, Value] : Defaults) {
    if (Value.is_none() && Key == "lr" && !Group.options.contains(Key))
      fail(ErrorKind::InvalidArgument, Where,
           ": didn't specify a value of required optimization parameter lr; "
           "give the optimizer a default lr or give this group its own");
    Group.options.set_default(Key, Value);
  }
  checkOptions(Group.options, Where);

  std::unordered_set<const TensorImpl *> Seen;
  for (size_t I = 0; I < Group.params.size(); ++I) {
    const Tensor &P = Group.params[I];
    if (!P.defined())
      fail(ErrorKind::InvalidArgument, Where, ": parameter ", I,
           " is an undefined tensor");
    if (!P.is_leaf() && !P.retains_grad())
      fail(ErrorKind::InvalidArgument, Where,
           ": can't optimize a non-leaf tensor (parameter ", I,
           "); optimize the leaf it was computed from, or detach() it and "
           "set requires_grad_()");
    if (!P.is_floating_point())
      fail(ErrorKind::InvalidArgument, Where, ": parameter ", I, " is ",
           dtypeName(P.dtype()),
           "; only floating-point tensors can be optimized");
    if (!Seen.insert(P.impl().get()).second)
      fail(ErrorKind::InvalidArgument, Where, ": parameter ", I,
           " appears twice in the group; list each parameter once");
  }
  for (size_t G = 0; G < Groups.size(); ++G)
    for (const Tensor &P : Groups[G].params)
      if (Seen.count(P.impl().get()))
        fail(ErrorKind::InvalidArgument, Where,
             ": some parameters appear in more than one parameter group (one "
             "is already in param group ",
             G, ")");
  Groups.push_back(std::move(Group));
}

void Optimizer::zero_grad(bool SetToNone) {
  NoGradGuard NoGrad;
  for (ParamGroup &G : Groups)
    for (Tensor &P : G.params) {
      Tensor Grad = P.grad();
      if (!Grad.defined())
        continue;
      if (SetToNone) {
        P.set_grad(Tensor());
      } else {
        // Like PyTorch: the zeroed gradient has no history.
        Tensor Zero = Grad.grad_fn() ? Grad.detach() : Grad;
        if (Zero.requires_grad())
          Zero.requires_grad_(false);
        Zero.zero_();
        P.set_grad(Zero);
      }
    }
}

void Optimizer::checkBeforeStep() const {
  for (size_t G = 0; G < Groups.size(); ++G) {
    std::string Where = Name + ": param group " + std::to_string(G);
    checkOptions(Groups[G].options, Where);
    for (size_t I = 0; I < Groups[G].params.size(); ++I) {
      const Tensor &P = Groups[G].params[I];
      if (!P.defined())
        fail(ErrorKind::InvalidArgument, Where, ": parameter ", I,
             " is an undefined tensor");
      Tensor Grad = P.grad();
      if (!Grad.defined())
        continue;
      if (Grad.shape() != P.shape() || Grad.dtype() != P.dtype())
        fail(ErrorKind::ShapeMismatch, Where, ": parameter ", I, " is ",
             dtypeName(P.dtype()), P.shape().toString(),
             " but its gradient is ", dtypeName(Grad.dtype()),
             Grad.shape().toString(),
             "; set a gradient of the same shape and dtype");
    }
  }
}

void Optimizer::step() {
  checkBeforeStep();
  NoGradGuard NoGrad;
  for (size_t G = 0; G < Groups.size(); ++G)
    updateGroup(Groups[G], G);
}

Tensor Optimizer::step(const std::function<Tensor()> &Closure) {
  Tensor Loss;
  {
    EnableGradGuard Grad;
    Loss = Closure();
  }
  step();
  return Loss;
}

const ParamState &Optimizer::state(const Tensor &P) const {
  static const ParamState Empty;
  if (!P.defined())
    return Empty;
  auto It = State.find(P.impl().get());
  return It == State.end() ? Empty : It->second.second;
}

ParamState &Optimizer::mutableState(const Tensor &P) {
  auto [It, New] = State.try_emplace(P.impl().get());
  if (New)
    It->second.first = P;
  return It->second.second;
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict SD;
  int64_t Index = 0;
  for (const ParamGroup &G : Groups) {
    OptimizerStateDict::Group Packed;
    Packed.options = G.options;
    for (const Tensor &P : G.params) {
      auto It = State.find(P.impl().get());
      if (It != State.end())
        SD.state.emplace(Index, It->second.second);
      Packed.params.push_back(Index++);
    }
    SD.param_groups.push_back(std::move(Packed));
  }
  return SD;
}

void Optimizer::load_state_dict(const OptimizerStateDict &SD) {
  const std::string Where = Name + ".load_state_dict";
  if (SD.param_groups.size() != Groups.size())
    fail(ErrorKind::InvalidArgument, Where, ": the state dict has ",
         SD.param_groups.size(), " parameter groups, the optimizer has ",
         Groups.size(),
         "; load a state saved from an optimizer built the same way");
  // Saved index -> parameter, in group order (PyTorch's id_map).
  std::map<int64_t, Tensor> IdMap;
  std::vector<ParamGroup> NewGroups;
  for (size_t G = 0; G < Groups.size(); ++G) {
    const OptimizerStateDict::Group &Saved = SD.param_groups[G];
    if (Saved.params.size() != Groups[G].params.size())
      fail(ErrorKind::InvalidArgument, Where, ": param group ", G,
           " of the state dict has ", Saved.params.size(),
           " parameters, the optimizer's has ", Groups[G].params.size(),
           "; the groups must match in size");
    for (size_t I = 0; I < Saved.params.size(); ++I)
      if (!IdMap.emplace(Saved.params[I], Groups[G].params[I]).second)
        fail(ErrorKind::InvalidArgument, Where, ": parameter index ",
             Saved.params[I], " appears twice in the state dict's groups");
    // Every option the optimizer uses must be there, with a valid value;
    // extra keys (a scheduler's initial_lr, ...) are kept.
    for (const auto &D : Defaults)
      if (!Saved.options.contains(D.first))
        fail(ErrorKind::InvalidArgument, Where, ": param group ", G,
             " of the state dict lacks option '", D.first,
             "' (was it saved by a different optimizer than ", Name, "?)");
    checkOptions(Saved.options, Where + ": param group " + std::to_string(G));
    NewGroups.emplace_back(Groups[G].params, Saved.options);
  }

  std::unordered_map<const TensorImpl *, std::pair<Tensor, ParamState>>
      NewState;
  for (const auto &[Index, Saved] : SD.state) {
    auto P = IdMap.find(Index);
    if (P == IdMap.end())
      fail(ErrorKind::InvalidArgument, Where,
           ": the state dict has state for parameter index ", Index,
           ", which none of its param groups lists");
    const Tensor &Param = P->second;
    ParamState S;
    for (const auto &[Key, Value] : Saved) {
      const Tensor *T = std::get_if<Tensor>(&Value);
      if (!T) {
        S.emplace(Key, Value);
        continue;
      }
      if (!T->defined())
        fail(ErrorKind::InvalidArgument, Where, ": state '", Key,
             "' of parameter ", Index, " is an undefined tensor");
      // A deep copy, cast to the parameter's dtype (not "step").
      rt::Tensor Data = T->data();
      if (Key != "step") {
        if (Data.shape() != Param.shape())
          fail(ErrorKind::ShapeMismatch, Where, ": state '", Key,
               "' of parameter ", Index, " has shape ", Data.shape().toString(),
               " but the parameter has shape ", Param.shape().toString());
        if (Param.is_floating_point() && Data.dtype() != Param.dtype())
          Data = Data.to(Param.dtype());
      }
      S.emplace(Key, Tensor(Data.clone()));
    }
    normalizeLoadedState(S);
    NewState[Param.impl().get()] = {Param, std::move(S)};
  }
  // Nothing can fail from here on.
  Groups = std::move(NewGroups);
  State = std::move(NewState);
}

std::string Optimizer::toString() const {
  std::ostringstream OS;
  OS << Name << " (";
  for (size_t G = 0; G < Groups.size(); ++G) {
    OS << "\nParameter Group " << G << "\n";
    std::vector<const OptionDict::Entry *> Sorted;
    for (const auto &E : Groups[G].options)
      Sorted.push_back(&E);
    std::sort(Sorted.begin(), Sorted.end(),
              [](const auto *A, const auto *B) { return A->first < B->first; });
    for (const auto *E : Sorted)
      OS << "    " << E->first << ": " << E->second.repr() << "\n";
  }
  OS << ")";
  return OS.str();
}

} // namespace nng::optim
