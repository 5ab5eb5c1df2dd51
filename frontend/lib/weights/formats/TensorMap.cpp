//===- TensorMap.cpp - Ordered state dicts and picking them from trees ----===//
//
// TensorMap (an insertion-ordered key -> rt::Tensor map with unique keys),
// selectTensors (walks a '/'-separated key path into a checkpoint tree and
// flattens the dict found there into dotted keys, skipping non-tensor
// leaves) and toObject (the map as a dict Object for the .pt writer).
// Runtime only: no nng::Tensor, no nn::.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/TensorMap.h"
#include "nngraph/runtime/Error.h"

#include <sstream>

namespace nng::weights {

TensorMap::TensorMap(std::vector<Entry> Init) {
  for (Entry &E : Init) {
    if (!insertNew(std::move(E)))
      fail(ErrorKind::InvalidArgument, "state dict: key '", E.first,
           "' appears twice; keys of a state dict must be unique");
  }
}

const rt::Tensor &TensorMap::at(const std::string &Key) const {
  const rt::Tensor *T = find(Key);
  if (!T)
    fail(ErrorKind::InvalidArgument, "state dict: no tensor under key '", Key,
         "' (", size(), " keys present)");
  return *T;
}

namespace {

/// A dict key as text: strings as they are, integers as digits.
std::string keyText(const Object &K) {
  if (K.kind() == Object::Kind::String)
    return K.toStringRef();
  if (K.kind() == Object::Kind::Int)
    return std::to_string(K.toInt());
  fail(ErrorKind::Parse, "checkpoint: a dict key is a ",
       Object::kindName(K.kind()),
       "; only string and integer keys are "
       "supported");
}

/// "a dict", "an int", "None" for messages.
std::string kindWithArticle(Object::Kind K) {
  std::string N = Object::kindName(K);
  if (K == Object::Kind::None)
    return N;
  bool Vowel = std::string("aeiou").find(N[0]) != std::string::npos;
  return (Vowel ? "an " : "a ") + N;
}

/// "'a', 'b', 3 more" style listing of a dict's keys for messages.
std::string listKeys(const Object &Dict, size_t Max = 20) {
  std::ostringstream OS;
  const auto &Es = Dict.entries();
  if (Es.empty())
    return "(the dict is empty)";
  size_t N = 0;
  for (const auto &E : Es) {
    if (N == Max) {
      OS << ", ... " << (Es.size() - Max) << " more";
      break;
    }
    if (N++)
      OS << ", ";
    OS << "'" << keyText(E.first) << "' (" << Object::kindName(E.second.kind())
       << ")";
  }
  return OS.str();
}

void flatten(const Object &Dict, const std::string &Prefix, TensorMap &Out,
             std::vector<std::string> *Skipped) {
  for (const auto &E : Dict.entries()) {
    std::string Key = Prefix + keyText(E.first);
    const Object &V = E.second;
    if (V.isTensor()) {
      if (Out.contains(Key))
        fail(ErrorKind::Parse, "checkpoint: key '", Key,
             "' occurs twice after flattening nested dicts to dotted keys");
      Out.insert(Key, V.toTensor());
    } else if (V.isDict()) {
      flatten(V, Key + ".", Out, Skipped);
    } else if (Skipped) {
      Skipped->push_back(Key);
    }
  }
}

} // namespace

TensorMap selectTensors(const Object &Root, const std::string &KeyPath,
                        std::vector<std::string> *Skipped) {
  const Object *Cur = &Root;
  std::string Walked; // The components consumed so far, for messages.
  size_t Pos = 0;
  while (Pos < KeyPath.size()) {
    size_t Slash = KeyPath.find('/', Pos);
    std::string Comp = KeyPath.substr(
        Pos, Slash == std::string::npos ? std::string::npos : Slash - Pos);
    Pos = Slash == std::string::npos ? KeyPath.size() : Slash + 1;
    if (Comp.empty())
      continue; // Tolerate "a//b", a leading or a trailing '/'.
    std::string Where = Walked.empty() ? "the root" : "'" + Walked + "'";
    if (!Cur->isDict())
      fail(ErrorKind::InvalidArgument, "key path '", KeyPath, "': ", Where,
           " is ", kindWithArticle(Cur->kind()),
           ", not a dict, so it has no key '", Comp, "'");
    const Object *Next = nullptr;
    for (const auto &E : Cur->entries()) {
      if ((E.first.kind() == Object::Kind::String ||
           E.first.kind() == Object::Kind::Int) &&
          keyText(E.first) == Comp) {
        Next = &E.second;
        break;
      }
    }
    if (!Next)
      fail(ErrorKind::InvalidArgument, "key path '", KeyPath, "': ", Where,
           " has no key '", Comp, "'; keys there: ", listKeys(*Cur),
           ". Pick one of them (separate nested keys with '/')");
    Walked += (Walked.empty() ? "" : "/") + Comp;
    Cur = Next;
  }
  if (!Cur->isDict())
    fail(ErrorKind::InvalidArgument, "key path '", KeyPath,
         "': ", Walked.empty() ? std::string("the root") : "'" + Walked + "'",
         " is ", kindWithArticle(Cur->kind()),
         ", not a dict of tensors; a state dict must be a dict");
  TensorMap Out;
  flatten(*Cur, "", Out, Skipped);
  return Out;
}

Object toObject(const TensorMap &M) {
  std::vector<Object::DictEntry> Es;
  Es.reserve(M.size());
  for (const auto &[K, T] : M)
    Es.emplace_back(Object::string(K), Object::tensor(T));
  return Object::dict(std::move(Es));
}

} // namespace nng::weights
