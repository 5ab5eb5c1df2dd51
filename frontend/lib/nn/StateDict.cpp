//===- StateDict.cpp - state_dict() and load_state_dict() ----------------===//
//
// nn::StateDict (an insertion-ordered name -> tensor map) and the two
// module methods over it. state_dict() walks the module tree like
// PyTorch's _save_to_state_dict (own parameters, own persistent buffers,
// then every child, with no deduplication, so tied weights appear under
// each name). load_state_dict() checks every key first (shapes always;
// missing and unexpected keys with strict) and throws one error listing
// them all before anything is copied, so a failed load changes nothing;
// then it copies in place under NoGradGuard, converting dtypes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/runtime/Error.h"

#include <sstream>
#include <unordered_set>

namespace nng::nn {

// --- StateDict ---------------------------------------------------------------

StateDict::StateDict(std::vector<Entry> In) {
  for (Entry &E : In) {
    if (!insertNew(std::move(E)))
      fail(ErrorKind::InvalidArgument, "StateDict: the key '", E.first,
           "' appears twice");
  }
}

StateDict::StateDict(std::initializer_list<Entry> In)
    : StateDict(std::vector<Entry>(In)) {}

namespace {
[[noreturn]] void missingKey(const std::string &Key,
                             const std::vector<StateDict::Entry> &Entries) {
  std::ostringstream OS;
  OS << "the state dict has no key '" << Key << "' (it has " << Entries.size()
     << " keys";
  for (size_t I = 0; I < Entries.size() && I < 8; ++I)
    OS << (I ? ", " : ": ") << Entries[I].first;
  if (Entries.size() > 8)
    OS << ", ...";
  OS << ")";
  fail(ErrorKind::InvalidArgument, OS.str());
}
} // namespace

const Tensor &StateDict::at(const std::string &Key) const {
  const Tensor *T = find(Key);
  if (!T)
    missingKey(Key, items());
  return *T;
}

Tensor &StateDict::at(const std::string &Key) {
  Tensor *T = find(Key);
  if (!T)
    missingKey(Key, items());
  return *T;
}

// --- Module::state_dict ------------------------------------------------------

void ModuleBase::stateEntries(
    const std::string &Prefix,
    std::vector<std::pair<std::string, Tensor>> &Out) const {
  adoptMembers();
  for (const auto &[N, T] : Params)
    if (T.defined())
      Out.emplace_back(Prefix + N, T);
  for (const BufferSlot &B : Buffers)
    if (B.Value.defined() && B.Persistent)
      Out.emplace_back(Prefix + B.Name, B.Value);
  for (const auto &[N, C] : Children)
    if (C)
      C->stateEntries(Prefix + N + ".", Out);
}

void ModuleBase::loadWalk(
    const std::string &Prefix,
    std::vector<std::pair<std::string, const ModuleBase *>> &Out) const {
  Out.emplace_back(Prefix, this);
  for (const auto &[N, C] : Children)
    if (C)
      C->loadWalk(Prefix + N + ".", Out);
}

StateDict ModuleBase::state_dict(const std::string &Prefix,
                                 bool KeepVars) const {
  std::vector<std::pair<std::string, Tensor>> Entries;
  stateEntries(Prefix.empty() || Prefix.back() == '.' ? Prefix : Prefix + ".",
               Entries);
  StateDict SD;
  for (auto &[Key, T] : Entries)
    SD.insert(Key, KeepVars ? T : T.detach());
  return SD;
}

LoadStateDictResult ModuleBase::load_state_dict(const StateDict &SD,
                                                bool Strict) {
  std::vector<std::pair<std::string, Tensor>> Expected;
  stateEntries("", Expected);

  LoadStateDictResult R;
  std::vector<std::string> Mismatches;
  std::vector<std::pair<Tensor, Tensor>> Copies; // (destination, source)
  std::unordered_set<std::string> ExpectedKeys;
  std::ostringstream MissingText, UnexpectedText;
  for (const auto &[Key, Dst] : Expected) {
    if (!ExpectedKeys.insert(Key).second)
      continue; // A module registered twice under one path: once is enough.
    if (!SD.contains(Key)) {
      R.missing_keys.push_back(Key);
      MissingText << (R.missing_keys.size() > 1 ? ", " : "") << '"' << Key
                  << "\" (shape " << Dst.shape().toString() << ")";
      continue;
    }
    const Tensor &Src = SD.at(Key);
    if (!Src.defined()) {
      Mismatches.push_back("the value for " + Key +
                           " is an undefined tensor; the model expects shape " +
                           Dst.shape().toString() + ".");
      continue;
    }
    if (Src.shape() != Dst.shape()) {
      Mismatches.push_back("size mismatch for " + Key +
                           ": copying a param with shape " +
                           Src.shape().toString() +
                           " from checkpoint, the shape in current model is " +
                           Dst.shape().toString() + ".");
      continue;
    }
    Copies.emplace_back(Dst, Src);
  }
  // PyTorch's rule and order: module by module (as state_dict walks
  // them), a key under the module's prefix whose next name component is
  // neither a child nor one of the module's own entries.
  std::vector<std::pair<std::string, const ModuleBase *>> Walk;
  loadWalk("", Walk);
  for (const auto &[Prefix, M] : Walk) {
    std::unordered_set<std::string> Known;
    M->adoptMembers();
    for (const auto &[N, T] : M->Params)
      if (T.defined())
        Known.insert(N);
    for (const BufferSlot &B : M->Buffers)
      if (B.Value.defined() && B.Persistent)
        Known.insert(B.Name);
    for (const auto &[N, C] : M->Children)
      Known.insert(N);
    for (const auto &[Key, T] : SD) {
      if (Key.compare(0, Prefix.size(), Prefix) != 0)
        continue;
      std::string First = Key.substr(Prefix.size());
      First = First.substr(0, First.find('.'));
      if (Known.count(First))
        continue;
      R.unexpected_keys.push_back(Key);
      UnexpectedText << (R.unexpected_keys.size() > 1 ? ", " : "") << '"' << Key
                     << "\" (shape "
                     << (T.defined() ? T.shape().toString() : "undefined")
                     << ")";
    }
  }

  bool KeyErrors =
      Strict && (!R.missing_keys.empty() || !R.unexpected_keys.empty());
  if (KeyErrors || !Mismatches.empty()) {
    std::ostringstream OS;
    OS << "Error(s) in loading state_dict for " << TypeName << ":";
    if (Strict && !R.missing_keys.empty())
      OS << "\n\tMissing key(s) in state_dict: " << MissingText.str() << ".";
    if (Strict && !R.unexpected_keys.empty())
      OS << "\n\tUnexpected key(s) in state_dict: " << UnexpectedText.str()
         << ".";
    for (const std::string &M : Mismatches)
      OS << "\n\t" << M;
    OS << "\nNothing was loaded: the module is unchanged. Check that the "
          "checkpoint comes from the same architecture";
    if (Strict && Mismatches.empty())
      OS << ", or pass strict=false to load the matching keys and get the "
            "missing and unexpected ones back";
    fail(Mismatches.empty() ? ErrorKind::InvalidArgument
                            : ErrorKind::ShapeMismatch,
         OS.str());
  }

  NoGradGuard NoGrad;
  for (auto &[Dst, Src] : Copies) {
    Tensor D = Dst;
    D.copy_(Src);
  }
  return R;
}

} // namespace nng::nn
