//===- OrderedMap.h - An insertion-ordered map with unique keys -*- C++ -*-===//
//
// The container behind state dicts (nn::StateDict of nng::Tensor,
// weights::TensorMap of rt::Tensor): (key, value) entries in insertion
// order, like PyTorch's OrderedDict, with a hash index for lookups.
// insert() replaces an existing key's value in place, keeping its position;
// erase() keeps the order of the rest. The owners add at() and
// construction, with their own messages for a missing or repeated key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nng {

template <typename V> class OrderedMap {
public:
  using Entry = std::pair<std::string, V>;
  using const_iterator = typename std::vector<Entry>::const_iterator;

  size_t size() const { return Entries.size(); }
  bool empty() const { return Entries.empty(); }
  bool contains(const std::string &Key) const { return Index.count(Key); }
  /// The value under Key, or null.
  const V *find(const std::string &Key) const {
    auto It = Index.find(Key);
    return It == Index.end() ? nullptr : &Entries[It->second].second;
  }
  V *find(const std::string &Key) {
    auto It = Index.find(Key);
    return It == Index.end() ? nullptr : &Entries[It->second].second;
  }
  /// Adds Key at the end, or replaces its value in place when present.
  void insert(const std::string &Key, V Value) {
    if (V *Old = find(Key)) {
      *Old = std::move(Value);
      return;
    }
    Index.emplace(Key, Entries.size());
    Entries.emplace_back(Key, std::move(Value));
  }
  /// Adds E at the end unless its key is present; returns whether it did
  /// (E is left as it was when not).
  bool insertNew(Entry &&E) {
    if (!Index.emplace(E.first, Entries.size()).second)
      return false;
    Entries.push_back(std::move(E));
    return true;
  }
  /// Removes Key; returns whether it was present.
  bool erase(const std::string &Key) {
    auto It = Index.find(Key);
    if (It == Index.end())
      return false;
    size_t Pos = It->second;
    Index.erase(It);
    Entries.erase(Entries.begin() + static_cast<std::ptrdiff_t>(Pos));
    for (size_t I = Pos; I < Entries.size(); ++I)
      Index[Entries[I].first] = I;
    return true;
  }
  /// The keys in order.
  std::vector<std::string> keys() const {
    std::vector<std::string> R;
    R.reserve(Entries.size());
    for (const Entry &E : Entries)
      R.push_back(E.first);
    return R;
  }
  /// The entries in order.
  const std::vector<Entry> &items() const { return Entries; }
  const_iterator begin() const { return Entries.begin(); }
  const_iterator end() const { return Entries.end(); }

private:
  std::vector<Entry> Entries;
  std::unordered_map<std::string, size_t> Index;
};

} // namespace nng
