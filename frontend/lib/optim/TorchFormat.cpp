//===- TorchFormat.cpp - Optimizer state as torch.save writes it ----------===//
//
// OptimizerStateDict and SchedulerStateDict to and from weights::Object in
// torch.optim's structure (TorchFormat.h). The two sides differ only in
// representation: option values are Python scalars, tuples (Adam's betas)
// or lists (a scheduler's base_lrs, _last_lr); a parameter's state holds
// tensors, None (SGD's momentum_buffer without momentum) or numbers.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/TorchFormat.h"

#include "nngraph/runtime/Error.h"

#include <variant>

namespace nng::optim {

using weights::Object;

namespace {

/// The scheduler fields PyTorch keeps as lists (the others are tuples).
bool isListField(const std::string &Key) {
  return Key == "base_lrs" || Key == "_last_lr";
}

Object valueObject(const std::string &Key, const OptionValue &V) {
  const OptionValue::Storage &S = V.storage();
  if (std::holds_alternative<std::monostate>(S))
    return Object();
  if (const bool *B = std::get_if<bool>(&S))
    return Object::boolean(*B);
  if (const int64_t *I = std::get_if<int64_t>(&S))
    return Object::integer(*I);
  if (const double *D = std::get_if<double>(&S))
    return Object::floating(*D);
  std::vector<Object> Elements;
  for (double D : std::get<std::vector<double>>(S))
    Elements.push_back(Object::floating(D));
  return isListField(Key) ? Object::list(std::move(Elements))
                          : Object::tuple(std::move(Elements));
}

Object dictObject(const OptionDict &D) {
  std::vector<Object::DictEntry> Entries;
  for (const auto &[Key, V] : D)
    Entries.emplace_back(Object::string(Key), valueObject(Key, V));
  return Object::dict(std::move(Entries));
}

/// The option value O holds (Where and Key name it in errors).
OptionValue optionValue(const Object &O, const std::string &Where,
                        const std::string &Key) {
  switch (O.kind()) {
  case Object::Kind::None:
    return OptionValue();
  case Object::Kind::Bool:
    return OptionValue(O.toBool());
  case Object::Kind::Int:
    return OptionValue(O.toInt());
  case Object::Kind::Float:
    return OptionValue(O.toDouble());
  case Object::Kind::List:
  case Object::Kind::Tuple: {
    std::vector<double> T;
    for (const Object &E : O.elements()) {
      if (E.kind() != Object::Kind::Float && E.kind() != Object::Kind::Int)
        fail(ErrorKind::Parse, Where, ": option '", Key, "' holds a ",
             Object::kindName(O.kind()), " with a ", Object::kindName(E.kind()),
             "; only numbers are expected there");
      T.push_back(E.toDouble());
    }
    return OptionValue(std::move(T));
  }
  default:
    fail(ErrorKind::Parse, Where, ": option '", Key, "' is a ",
         Object::kindName(O.kind()),
         "; expected None, a bool, a number or a tuple of numbers");
  }
}

/// The string key of a dict entry.
const std::string &stringKey(const Object &K, const std::string &Where) {
  if (K.kind() != Object::Kind::String)
    fail(ErrorKind::Parse, Where, ": a key is a ", Object::kindName(K.kind()),
         ", expected a string");
  return K.toStringRef();
}

/// O as a dict, or an error saying what it is instead.
const std::vector<Object::DictEntry> &dictEntries(const Object &O,
                                                  const std::string &Where) {
  if (!O.isDict())
    fail(ErrorKind::Parse, Where, ": expected a dict, found ", O.summary(1));
  return O.entries();
}

OptionDict optionDict(const Object &O, const std::string &Where,
                      const char *Skip = nullptr) {
  OptionDict D;
  for (const auto &[K, V] : dictEntries(O, Where)) {
    const std::string &Key = stringKey(K, Where);
    if (Skip && Key == Skip)
      continue;
    D.set(Key, optionValue(V, Where, Key));
  }
  return D;
}

} // namespace

Object to_object(const OptimizerStateDict &SD) {
  std::vector<Object::DictEntry> State;
  for (const auto &[Index, S] : SD.state) {
    std::vector<Object::DictEntry> Entries;
    for (const auto &[Name, V] : S) {
      Object Value;
      if (const Tensor *T = std::get_if<Tensor>(&V))
        Value = Object::tensor(T->data().contiguous());
      else if (const double *D = std::get_if<double>(&V))
        Value = Object::floating(*D);
      Entries.emplace_back(Object::string(Name), std::move(Value));
    }
    State.emplace_back(Object::integer(Index), Object::dict(std::move(Entries)));
  }
  std::vector<Object> Groups;
  for (const OptimizerStateDict::Group &G : SD.param_groups) {
    Object D = dictObject(G.options);
    std::vector<Object> Params;
    for (int64_t P : G.params)
      Params.push_back(Object::integer(P));
    D.entries().emplace_back(Object::string("params"),
                             Object::list(std::move(Params)));
    Groups.push_back(std::move(D));
  }
  return Object::dict(
      {{Object::string("state"), Object::dict(std::move(State))},
       {Object::string("param_groups"), Object::list(std::move(Groups))}});
}

Object to_object(const SchedulerStateDict &SD) { return dictObject(SD); }

OptimizerStateDict optimizer_state_dict_from_object(const Object &O,
                                                    const std::string &Where) {
  const Object *State = O.isDict() ? O.find("state") : nullptr;
  const Object *Groups = O.isDict() ? O.find("param_groups") : nullptr;
  if (!State || !Groups)
    fail(ErrorKind::Parse, Where,
         ": not an optimizer state_dict (a dict with 'state' and "
         "'param_groups'): found ",
         O.summary(1));
  OptimizerStateDict SD;
  if (!Groups->isSequence())
    fail(ErrorKind::Parse, Where, ": 'param_groups' is a ",
         Object::kindName(Groups->kind()), ", expected a list");
  for (size_t I = 0; I < Groups->elements().size(); ++I) {
    std::string At = Where + ": param group " + std::to_string(I);
    const Object &G = Groups->elements()[I];
    OptimizerStateDict::Group Group;
    Group.options = optionDict(G, At, "params");
    const Object *Params = G.find("params");
    if (!Params || !Params->isSequence())
      fail(ErrorKind::Parse, At, ": it has no 'params' list");
    for (const Object &P : Params->elements()) {
      if (P.kind() != Object::Kind::Int)
        fail(ErrorKind::Parse, At, ": a parameter index is a ",
             Object::kindName(P.kind()), ", expected an int");
      Group.params.push_back(P.toInt());
    }
    SD.param_groups.push_back(std::move(Group));
  }
  for (const auto &[K, V] : dictEntries(*State, Where + ": 'state'")) {
    if (K.kind() != Object::Kind::Int)
      fail(ErrorKind::Parse, Where, ": a 'state' key is a ",
           Object::kindName(K.kind()), ", expected a parameter index");
    std::string At = Where + ": state of parameter " + std::to_string(K.toInt());
    ParamState S;
    for (const auto &[NameObj, Value] : dictEntries(V, At)) {
      const std::string &Name = stringKey(NameObj, At);
      switch (Value.kind()) {
      case Object::Kind::None:
        S.emplace(Name, std::monostate());
        break;
      case Object::Kind::Tensor:
        S.emplace(Name, Tensor(Value.toTensor()));
        break;
      case Object::Kind::Int:
      case Object::Kind::Float:
        S.emplace(Name, Value.toDouble());
        break;
      default:
        fail(ErrorKind::Parse, At, ": '", Name, "' is a ",
             Object::kindName(Value.kind()),
             "; expected a tensor, a number or None");
      }
    }
    SD.state.emplace(K.toInt(), std::move(S));
  }
  return SD;
}

SchedulerStateDict scheduler_state_dict_from_object(const Object &O,
                                                    const std::string &Where) {
  return optionDict(O, Where);
}

} // namespace nng::optim
