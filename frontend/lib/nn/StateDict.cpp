//===- StateDict.cpp - state_dict() and load_state_dict() ----------------===//
//
// nn::StateDict (an insertion-ordered name -> tensor map) and the module
// methods over it. state_dict() walks the module tree like PyTorch's
// (per module: state-dict pre-hooks, save_to_state_dict = own parameters,
// own persistent buffers, extra state; then every child, with no
// deduplication, so tied weights appear under each name; then the
// post-hooks). load_state_dict() walks it on a working copy of the dict
// (load pre-hooks, load_from_state_dict, children), which checks every key
// and only *plans* the writes; one error listing every offending key is
// thrown before anything is written, so a failed load changes nothing.
// Then the writes run (in-place copies under NoGradGuard converting
// dtypes, or with assign the tensors themselves), the load post-hooks run
// (children first), and the strict check sees what they left; a failure
// there undoes the writes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/runtime/Error.h"

#include <memory>
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

// --- LoadStateDictContext
// -------------------------------------------------------

void LoadStateDictContext::add_missing(const std::string &Key,
                                       std::string Note) {
  keys.missing_keys.push_back(Key);
  if (!Note.empty())
    key_notes[Key] = std::move(Note);
}

void LoadStateDictContext::add_unexpected(const std::string &Key) {
  keys.unexpected_keys.push_back(Key);
}

void LoadStateDictContext::copy(Tensor Dst, Tensor Src) {
  auto Saved = std::make_shared<Tensor>();
  defer(
      [this, Dst, Src, Saved]() mutable {
        NoGradGuard NoGrad;
        if (Undoable)
          *Saved = Dst.clone();
        Dst.copy_(Src);
      },
      [Dst, Saved]() mutable {
        NoGradGuard NoGrad;
        if (Saved->defined())
          Dst.copy_(*Saved);
      });
  Writes.back().MayThrow = false;
}

void LoadStateDictContext::defer(std::function<void()> Apply,
                                 std::function<void()> Undo) {
  Writes.push_back({std::move(Apply), std::move(Undo)});
}

void LoadStateDictContext::applyWrites(bool PostHooks) {
  // A write needs its undo when something that may fail comes after it.
  size_t LastThrowing = 0;
  for (size_t I = 0; I < Writes.size(); ++I)
    if (Writes[I].MayThrow)
      LastThrowing = I;
  try {
    for (; Applied < Writes.size(); ++Applied) {
      Undoable = PostHooks || Applied < LastThrowing;
      Writes[Applied].Apply();
    }
  } catch (...) {
    undoWrites();
    throw;
  }
}

void LoadStateDictContext::undoWrites() {
  // Writes that saved nothing (no later failure was possible) undo nothing.
  for (; Applied > 0; --Applied)
    if (const auto &Undo = Writes[Applied - 1].Undo)
      Undo();
}

// --- Module::state_dict ------------------------------------------------------

namespace {
const char *const ExtraStateSuffix = "_extra_state";
} // namespace

std::optional<Tensor> ModuleBase::get_extra_state() const {
  return std::nullopt;
}

void ModuleBase::set_extra_state(const Tensor &) {
  fail(ErrorKind::InvalidArgument, TypeName,
       ": load_state_dict found extra state ('_extra_state') for this module "
       "but its class does not override set_extra_state; override it together "
       "with get_extra_state");
}

void ModuleBase::save_to_state_dict(StateDict &Destination,
                                    const std::string &Prefix,
                                    bool KeepVars) const {
  adoptMembers();
  for (const auto &[N, T] : Params)
    if (T.defined())
      Destination.insert(Prefix + N, KeepVars ? T : T.detach());
  for (const auto &[N, B] : Buffers)
    if (B.Value.defined() && B.Persistent)
      Destination.insert(Prefix + N,
                         KeepVars ? B.Value : B.Value.detach());
  if (std::optional<Tensor> Extra = get_extra_state())
    Destination.insert(Prefix + ExtraStateSuffix, std::move(*Extra));
}

void ModuleBase::saveTree(StateDict &Destination, const std::string &Prefix,
                          bool KeepVars) const {
  auto &Self = const_cast<ModuleBase &>(*this);
  // Snapshots: a hook may remove itself.
  for (const auto &[Id, H] : std::vector(Hooks->StateDictPre))
    H(Self, Prefix, KeepVars);
  save_to_state_dict(Destination, Prefix, KeepVars);
  for (const auto &[N, C] : Children)
    if (C)
      C->saveTree(Destination, Prefix + N + ".", KeepVars);
  for (const auto &[Id, H] : std::vector(Hooks->StateDictPost))
    if (std::optional<StateDict> R = H(Self, Destination, Prefix))
      Destination = std::move(*R);
}

StateDict ModuleBase::state_dict(const std::string &Prefix,
                                 bool KeepVars) const {
  StateDict SD;
  saveTree(SD, Prefix.empty() || Prefix.back() == '.' ? Prefix : Prefix + ".",
           KeepVars);
  return SD;
}

// --- Module::load_state_dict -------------------------------------------------

void ModuleBase::load_from_state_dict(StateDict &SD, const std::string &Prefix,
                                      LoadStateDictContext &Ctx) {
  adoptMembers();
  std::unordered_set<std::string> Local;
  auto LoadOne = [&](const std::string &Name, const Tensor &Dst, bool IsParam) {
    Local.insert(Name);
    std::string Key = Prefix + Name;
    const Tensor *Src = SD.find(Key);
    if (!Src) {
      Ctx.add_missing(Key, "shape " + Dst.shape().toString());
      return;
    }
    if (!Src->defined()) {
      Ctx.error_msgs.push_back("the value for " + Key +
                               " is an undefined tensor; the model expects "
                               "shape " +
                               Dst.shape().toString() + ".");
      return;
    }
    if (Src->shape() != Dst.shape()) {
      Ctx.error_msgs.push_back(
          "size mismatch for " + Key + ": copying a param with shape " +
          Src->shape().toString() +
          " from checkpoint, the shape in current model is " +
          Dst.shape().toString() + ".");
      return;
    }
    if (!Ctx.assign) {
      if (Dst.is_meta()) {
        Ctx.error_msgs.push_back(
            "cannot copy " + Key + " into a tensor on the meta device (it "
            "has no memory): load with assign=true to make the checkpoint's "
            "tensors the parameters and buffers, or call "
            "to_empty(Device::cpu()) first.");
        return;
      }
      if (Src->is_meta()) {
        Ctx.error_msgs.push_back("the value for " + Key +
                                 " is on the meta device and has no data "
                                 "to copy.");
        return;
      }
      Ctx.copy(Dst, *Src);
      return;
    }
    // assign: the module takes the tensor itself (PyTorch 2), keeping the
    // old parameter's requires_grad.
    bool WantGrad = IsParam && Dst.requires_grad();
    if (WantGrad && !Src->is_floating_point()) {
      Ctx.error_msgs.push_back(
          "cannot assign " + Key + ": the checkpoint's tensor has dtype " +
          std::string(dtypeName(Src->dtype())) +
          " but the parameter requires grad (only floating-point tensors "
          "can); convert it, or load without assign to copy it into the "
          "parameter.");
      return;
    }
    Tensor New = *Src;
    if (IsParam && (New.grad_fn() || New.requires_grad() != WantGrad))
      New = New.detach(); // A new leaf sharing the data.
    Ctx.defer(
        [this, Name, New, IsParam, WantGrad] {
          if (IsParam)
            replace_parameter(Name, New, WantGrad);
          else
            replace_buffer(Name, New);
        },
        [this, Name, Old = Dst, IsParam] {
          if (IsParam)
            replace_parameter(Name, Old, Old.requires_grad());
          else
            replace_buffer(Name, Old);
        });
  };
  for (const auto &[N, T] : Params)
    if (T.defined())
      LoadOne(N, T, true);
  for (const auto &[N, B] : Buffers)
    if (B.Value.defined() && B.Persistent)
      LoadOne(N, B.Value, false);

  std::string ExtraKey = Prefix + ExtraStateSuffix;
  if (get_extra_state()) {
    if (const Tensor *Extra = SD.find(ExtraKey)) {
      auto Saved = std::make_shared<std::optional<Tensor>>();
      Ctx.defer(
          [this, &Ctx, State = *Extra, Saved] {
            if (Ctx.undoable())
              *Saved = get_extra_state();
            set_extra_state(State);
          },
          [this, Saved] {
            if (*Saved)
              set_extra_state(**Saved);
          });
    } else {
      Ctx.add_missing(ExtraKey, "extra state");
    }
  } else if (SD.contains(ExtraKey)) {
    Ctx.add_unexpected(ExtraKey);
  }

  // PyTorch's rule: a key under the prefix whose next name component is
  // neither a child nor one of the module's own entries.
  for (const auto &[Key, T] : SD) {
    if (Key.compare(0, Prefix.size(), Prefix) != 0 || Key == ExtraKey)
      continue;
    std::string First = Key.substr(Prefix.size());
    First = First.substr(0, First.find('.'));
    if (Local.count(First))
      continue;
    bool Child = false;
    for (const auto &[N, C] : Children)
      Child = Child || N == First;
    if (!Child)
      Ctx.add_unexpected(Key);
  }
}

void ModuleBase::loadTree(StateDict &SD, const std::string &Prefix,
                          LoadStateDictContext &Ctx,
                          std::vector<ModuleBase *> &PostOrder) {
  for (const auto &[Id, H] : std::vector(Hooks->LoadPre))
    H(*this, SD, Prefix, Ctx);
  load_from_state_dict(SD, Prefix, Ctx);
  for (const auto &[N, C] : Children)
    if (C)
      C->loadTree(SD, Prefix + N + ".", Ctx, PostOrder);
  if (!Hooks->LoadPost.empty())
    PostOrder.push_back(this);
}

namespace {
/// The one error of a failed load.
[[noreturn]] void failLoad(const std::string &TypeName,
                           const LoadStateDictContext &Ctx, const StateDict &SD,
                           bool AfterHooks) {
  const LoadStateDictResult &R = Ctx.keys;
  auto List = [&](const std::vector<std::string> &Keys, bool Missing) {
    std::ostringstream OS;
    for (size_t I = 0; I < Keys.size(); ++I) {
      const std::string &K = Keys[I];
      OS << (I ? ", " : "") << '"' << K << '"';
      if (Missing) {
        auto It = Ctx.key_notes.find(K);
        if (It != Ctx.key_notes.end())
          OS << " (" << It->second << ")";
      } else if (const Tensor *T = SD.find(K)) {
        OS << " (shape " << (T->defined() ? T->shape().toString() : "undefined")
           << ")";
      }
    }
    return OS.str();
  };
  std::ostringstream OS;
  OS << "Error(s) in loading state_dict for " << TypeName << ":";
  if (Ctx.strict && !R.missing_keys.empty())
    OS << "\n\tMissing key(s) in state_dict: " << List(R.missing_keys, true)
       << ".";
  if (Ctx.strict && !R.unexpected_keys.empty())
    OS << "\n\tUnexpected key(s) in state_dict: "
       << List(R.unexpected_keys, false) << ".";
  for (const std::string &M : Ctx.error_msgs)
    OS << "\n\t" << M;
  OS << "\nNothing was loaded: the module is unchanged. Check that the "
        "checkpoint comes from the same architecture";
  if (Ctx.strict && Ctx.error_msgs.empty())
    OS << ", or pass strict=false to load the matching keys and get the "
          "missing and unexpected ones back";
  if (AfterHooks)
    OS << " (the keys are as the load_state_dict post-hooks left them)";
  bool Shapes = false;
  for (const std::string &M : Ctx.error_msgs)
    Shapes = Shapes || M.rfind("size mismatch", 0) == 0;
  fail(Shapes ? ErrorKind::ShapeMismatch : ErrorKind::InvalidArgument,
       OS.str());
}

bool keyErrors(const LoadStateDictContext &Ctx) {
  return Ctx.strict &&
         (!Ctx.keys.missing_keys.empty() || !Ctx.keys.unexpected_keys.empty());
}
} // namespace

LoadStateDictResult ModuleBase::load_state_dict(const StateDict &In,
                                                bool Strict, bool Assign) {
  // A working copy (tensor handles): hooks and load_from_state_dict may
  // rename, add or drop keys.
  StateDict SD = In;
  LoadStateDictContext Ctx;
  Ctx.strict = Strict;
  Ctx.assign = Assign;
  std::vector<ModuleBase *> PostOrder;
  loadTree(SD, "", Ctx, PostOrder);
  // Without post-hooks the keys are final: fail before writing anything.
  if (!Ctx.error_msgs.empty() || (PostOrder.empty() && keyErrors(Ctx)))
    failLoad(TypeName, Ctx, SD, false);
  Ctx.applyWrites(/*PostHooks=*/!PostOrder.empty());
  if (PostOrder.empty())
    return Ctx.keys;
  try {
    for (ModuleBase *M : PostOrder)
      for (const auto &[Id, H] : std::vector(M->Hooks->LoadPost))
        H(*M, Ctx.keys);
    if (keyErrors(Ctx))
      failLoad(TypeName, Ctx, SD, true);
  } catch (...) {
    Ctx.undoWrites();
    throw;
  }
  return Ctx.keys;
}

} // namespace nng::nn
