//===- StateDict.h - An ordered name -> tensor map ---------------*- C++
//-*-===//
//
// nn::StateDict is what Module::state_dict() returns and load_state_dict()
// takes: tensors under dotted keys ("layer1.0.conv1.weight"), in insertion
// order (PyTorch's OrderedDict). Keys are unique; insert() replaces an
// existing key's tensor in place, keeping its position. Lookups are by
// hash; iteration yields (key, tensor) pairs in order. Also what a load
// reports (LoadStateDictResult) and the state of one load that
// ModuleBase::load_from_state_dict and the load hooks see
// (LoadStateDictContext).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/runtime/OrderedMap.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace nng::nn {

/// An insertion-ordered map from dotted names to tensors (the container is
/// nng::OrderedMap, as for weights::TensorMap).
class StateDict : public OrderedMap<Tensor> {
public:
  StateDict() = default;
  /// From (key, tensor) pairs; a repeated key is an error.
  StateDict(std::vector<Entry> Entries);
  StateDict(std::initializer_list<Entry> Entries);

  /// The tensor under Key; throws nng::Error naming the key (and a few
  /// present keys) when absent.
  const Tensor &at(const std::string &Key) const;
  Tensor &at(const std::string &Key);
};

/// What load_state_dict() reports (PyTorch's _IncompatibleKeys); load
/// post-hooks may edit it.
struct LoadStateDictResult {
  /// Keys the module expects that the state dict lacks.
  std::vector<std::string> missing_keys;
  /// Keys of the state dict the module does not have.
  std::vector<std::string> unexpected_keys;
};

class ModuleBase;

/// One load_state_dict() call, as ModuleBase::load_from_state_dict and the
/// load pre-hooks see it: PyTorch's strict, missing_keys, unexpected_keys
/// and error_msgs arguments, plus the writes planned so far. A load is
/// all-or-nothing: load_from_state_dict checks and *plans* its writes
/// (copy(), defer()); they run only once every module has been checked
/// without an error message, and are undone if a deferred write throws, a
/// load post-hook throws, or the strict check after the post-hooks fails.
/// A copy saves the old values (a clone) only when something that may fail
/// comes after it.
class LoadStateDictContext {
public:
  /// load_state_dict's arguments. Keys are collected whatever strict says
  /// (PyTorch passes strict=True to every _load_from_state_dict).
  bool strict = true;
  bool assign = false;
  /// The keys reported so far, for the whole load.
  LoadStateDictResult keys;
  /// Errors (a shape mismatch, an undefined value): any entry fails the
  /// load, with all of them in the message.
  std::vector<std::string> error_msgs;
  /// What the error message prints after a key ("shape [3]").
  std::map<std::string, std::string> key_notes;

  /// Reports Key as missing (Note: printed after it in errors).
  void add_missing(const std::string &Key, std::string Note = "");
  /// Reports Key as unexpected.
  void add_unexpected(const std::string &Key);
  /// Plans Dst.copy_(Src) (no autograd, dtype converted).
  void copy(Tensor Dst, Tensor Src);
  /// Plans Apply, which may throw (the load then fails, undoing the writes
  /// before it); Undo (may be empty) reverts it when a later step fails.
  void defer(std::function<void()> Apply, std::function<void()> Undo = {});
  /// Whether the write being applied may have to be undone; a deferred
  /// Apply may read it to save only then what its Undo needs.
  bool undoable() const { return Undoable; }

private:
  friend class ModuleBase;
  struct Write {
    std::function<void()> Apply, Undo;
    /// A deferred write (user code) rather than a copy.
    bool MayThrow = true;
  };
  /// Runs the planned writes in order; PostHooks: something may fail after
  /// all of them, so every write keeps its undo. A throwing write undoes
  /// the ones before it.
  void applyWrites(bool PostHooks);
  /// Reverts the applied writes, last first.
  void undoWrites();

  std::vector<Write> Writes;
  size_t Applied = 0;
  bool Undoable = false;
};

} // namespace nng::nn
