//===- StateDict.h - An ordered name -> tensor map ---------------*- C++ -*-===//
//
// nn::StateDict is what Module::state_dict() returns and load_state_dict()
// takes: tensors under dotted keys ("layer1.0.conv1.weight"), in insertion
// order (PyTorch's OrderedDict). Keys are unique; insert() replaces an
// existing key's tensor in place, keeping its position. Lookups are by
// hash; iteration yields (key, tensor) pairs in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nng::nn {

/// An insertion-ordered map from dotted names to tensors.
class StateDict {
public:
  using Entry = std::pair<std::string, Tensor>;
  using const_iterator = std::vector<Entry>::const_iterator;

  StateDict() = default;
  /// From (key, tensor) pairs; a repeated key is an error.
  StateDict(std::vector<Entry> Entries);
  StateDict(std::initializer_list<Entry> Entries);

  size_t size() const { return Entries.size(); }
  bool empty() const { return Entries.empty(); }
  bool contains(const std::string &Key) const { return Index.count(Key); }
  /// The tensor under Key; throws nng::Error naming the key (and a few
  /// present keys) when absent.
  const Tensor &at(const std::string &Key) const;
  Tensor &at(const std::string &Key);
  /// The keys in order.
  std::vector<std::string> keys() const;
  /// Adds Key at the end, or replaces its tensor in place when present.
  void insert(const std::string &Key, Tensor T);
  /// Removes Key; returns whether it was present.
  bool erase(const std::string &Key);
  /// The entries in order.
  const std::vector<Entry> &items() const { return Entries; }

  const_iterator begin() const { return Entries.begin(); }
  const_iterator end() const { return Entries.end(); }

private:
  std::vector<Entry> Entries;
  std::unordered_map<std::string, size_t> Index;
};

} // namespace nng::nn
