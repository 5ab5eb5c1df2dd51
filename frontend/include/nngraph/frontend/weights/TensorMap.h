//===- TensorMap.h - An ordered name -> data tensor map ----------*- C++ -*-===//
//
// weights::TensorMap is a state dict at the data level: rt::Tensors under
// dotted keys, in insertion order, keys unique. It is what the flat formats
// (safetensors, .npz) read and write, what selectTensors() takes out of a
// .pt checkpoint, what the key remapping works on, and what converts to and
// from nn::StateDict (Load.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Object.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nng::weights {

class TensorMap {
public:
  using Entry = std::pair<std::string, rt::Tensor>;

  TensorMap() = default;
  /// From (key, tensor) pairs; a repeated key is an error naming it.
  explicit TensorMap(std::vector<Entry> Entries);

  size_t size() const { return Entries.size(); }
  bool empty() const { return Entries.empty(); }
  bool contains(const std::string &Key) const { return Index.count(Key); }
  /// The tensor under Key; throws nng::Error naming the key when absent.
  const rt::Tensor &at(const std::string &Key) const;
  /// Adds Key at the end, or replaces its tensor in place when present.
  void insert(const std::string &Key, rt::Tensor T);
  bool erase(const std::string &Key);
  std::vector<std::string> keys() const;
  const std::vector<Entry> &items() const { return Entries; }
  std::vector<Entry>::const_iterator begin() const { return Entries.begin(); }
  std::vector<Entry>::const_iterator end() const { return Entries.end(); }

private:
  std::vector<Entry> Entries;
  std::unordered_map<std::string, size_t> Index;
};

/// The tensors of a checkpoint tree as a state dict. KeyPath picks a
/// sub-dict first: keys separated by '/', e.g. "model_state_dict" or
/// "ema/model" (an integer key is written as its digits). The selected
/// value must be a dict; nested dicts flatten to dotted keys
/// ("a" -> {"b": t} gives "a.b"); non-tensor leaves (epoch counters, None)
/// are skipped and listed in *Skipped when given. An empty KeyPath takes the
/// root. Errors name the path component that is missing and the keys that
/// exist there.
TensorMap selectTensors(const Object &Root, const std::string &KeyPath = "",
                        std::vector<std::string> *Skipped = nullptr);

/// The map as a dict Object (what the .pt writer writes for a state dict).
Object toObject(const TensorMap &M);

} // namespace nng::weights
