//===- Containers.h - Sequential, ModuleList, ModuleDict, ... ----*- C++ -*-===//
//
// PyTorch's container modules. Each registers what it holds, so the
// entries appear in parameters(), state_dict() (keys "layers.0.weight"),
// train()/eval(), to() and printing, and calling them inside a forward
// passes the loud registration check:
//   Sequential    modules run in order, each output the next one's input;
//                 entries named "0", "1", ... or given names;
//   ModuleList    an indexable list of modules (not callable: iterate it);
//   ModuleDict    modules under string keys, insertion-ordered;
//   ParameterList / ParameterDict   parameters by index / by key.
// Indices may be negative (from the end). Removing an entry renumbers the
// remaining ones, as PyTorch does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"

#include <iterator>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace nng::nn {

/// (name, module) pairs, e.g. for Sequential's OrderedDict form.
using NamedModules = std::vector<std::pair<std::string, ModulePtr>>;
/// (name, tensor) pairs.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Iterates the values of a vector of (name, value) pairs.
template <typename It> class SecondIterator {
public:
  using value_type = std::remove_cvref_t<decltype(std::declval<It>()->second)>;
  using difference_type = std::ptrdiff_t;
  using reference = const value_type &;
  using pointer = const value_type *;
  using iterator_category = std::forward_iterator_tag;

  SecondIterator() = default;
  explicit SecondIterator(It I) : I(I) {}
  reference operator*() const { return I->second; }
  pointer operator->() const { return &I->second; }
  SecondIterator &operator++() {
    ++I;
    return *this;
  }
  SecondIterator operator++(int) {
    SecondIterator R = *this;
    ++I;
    return R;
  }
  bool operator==(const SecondIterator &O) const { return I == O.I; }

private:
  It I{};
};

using ModuleIterator = SecondIterator<NamedModules::const_iterator>;
using TensorIterator = SecondIterator<NamedTensors::const_iterator>;

namespace detail {
/// Throws: entry Where of Container is a Got, not a Want.
[[noreturn]] void failWrongType(const ModuleBase &Container,
                                const std::string &Where, const ModuleBase &Got,
                                const std::type_info &Want);
template <typename M>
std::shared_ptr<M> castEntry(const ModuleBase &Container,
                             const std::string &Where, const ModulePtr &P) {
  auto R = std::dynamic_pointer_cast<M>(P);
  if (!R)
    failWrongType(Container, Where, *P, typeid(M));
  return R;
}
} // namespace detail

/// Runs its modules in order: forward(x) = m_n(...m_1(x)). A module
/// returning a tuple passes the tuple as the next one's single input.
class Sequential : public Module<Sequential> {
public:
  Sequential() = default;
  /// Sequential(a, b, c): entries "0", "1", "2".
  template <typename... Ms>
  explicit Sequential(std::shared_ptr<Ms>... Modules) {
    (append(ModulePtr(std::move(Modules))), ...);
  }
  explicit Sequential(const std::vector<ModulePtr> &Modules);
  /// Named entries, in order (PyTorch's OrderedDict form).
  explicit Sequential(const NamedModules &Modules);

  Value forward(const Value &Input);

  /// Adds M as entry str(size()).
  Sequential &append(ModulePtr M);
  /// Adds M under Name.
  Sequential &append(const std::string &Name, ModulePtr M);
  Sequential &extend(const std::vector<ModulePtr> &Modules);
  /// Inserts M before Index (-size() <= Index <= size()); entries after it
  /// shift up by one (names "0".."n" as in PyTorch).
  Sequential &insert(int64_t Index, ModulePtr M);
  /// Removes entry Index and renumbers all entries "0".."n-1" (PyTorch's
  /// __delitem__); returns the removed module.
  ModulePtr pop(int64_t Index);
  /// Replaces entry Index, keeping its name.
  void set(int64_t Index, ModulePtr M);

  ModulePtr operator[](int64_t Index) const;
  ModulePtr operator[](const std::string &Name) const;
  /// Entry Index as an M; throws naming both types when it is not one.
  template <typename M> std::shared_ptr<M> at(int64_t Index) const {
    return detail::castEntry<M>(*this, std::to_string(Index), (*this)[Index]);
  }
  template <typename M> std::shared_ptr<M> at(const std::string &Name) const {
    return detail::castEntry<M>(*this, Name, (*this)[Name]);
  }
  /// Entries [Start, End) by Step (Python slice rules, negative indices
  /// allowed) in a new Sequential that keeps their names and shares them.
  std::shared_ptr<Sequential> slice(int64_t Start, int64_t End,
                                    int64_t Step = 1) const;

  size_t size() const { return Children.size(); }
  bool empty() const { return Children.empty(); }
  ModuleIterator begin() const { return ModuleIterator(Children.begin()); }
  ModuleIterator end() const { return ModuleIterator(Children.end()); }
};

/// A list of registered modules, named "0", "1", ... Not callable.
class ModuleList : public Module<ModuleList> {
public:
  ModuleList() = default;
  template <typename... Ms>
  explicit ModuleList(std::shared_ptr<Ms>... Modules) {
    (append(ModulePtr(std::move(Modules))), ...);
  }
  explicit ModuleList(const std::vector<ModulePtr> &Modules);

  ModuleList &append(ModulePtr M);
  ModuleList &extend(const std::vector<ModulePtr> &Modules);
  /// Inserts M before Index (negative counts from the end); later entries
  /// shift up.
  ModuleList &insert(int64_t Index, ModulePtr M);
  /// Removes entry Index and renumbers; returns it.
  ModulePtr pop(int64_t Index);
  void set(int64_t Index, ModulePtr M);

  ModulePtr operator[](int64_t Index) const;
  template <typename M> std::shared_ptr<M> at(int64_t Index) const {
    return detail::castEntry<M>(*this, std::to_string(Index), (*this)[Index]);
  }
  /// Entries [Start, End) by Step in a new ModuleList (renumbered).
  std::shared_ptr<ModuleList> slice(int64_t Start, int64_t End,
                                    int64_t Step = 1) const;

  size_t size() const { return Children.size(); }
  bool empty() const { return Children.empty(); }
  ModuleIterator begin() const { return ModuleIterator(Children.begin()); }
  ModuleIterator end() const { return ModuleIterator(Children.end()); }
};

/// Modules under string keys, in insertion order. Not callable.
class ModuleDict : public Module<ModuleDict> {
public:
  ModuleDict() = default;
  explicit ModuleDict(const NamedModules &Modules);

  /// Adds M under Key, or replaces the module under Key (keeping its
  /// position), like d[key] = m.
  ModuleDict &insert(const std::string &Key, ModulePtr M);
  ModuleDict &update(const NamedModules &Modules);
  ModulePtr operator[](const std::string &Key) const;
  template <typename M> std::shared_ptr<M> at(const std::string &Key) const {
    return detail::castEntry<M>(*this, Key, (*this)[Key]);
  }
  bool contains(const std::string &Key) const;
  /// Removes Key; returns its module.
  ModulePtr pop(const std::string &Key);
  void clear();
  std::vector<std::string> keys() const;
  std::vector<ModulePtr> values() const;
  const NamedModules &items() const { return Children.items(); }

  size_t size() const { return Children.size(); }
  bool empty() const { return Children.empty(); }
  /// Iterates (key, module) pairs.
  NamedModules::const_iterator begin() const { return Children.begin(); }
  NamedModules::const_iterator end() const { return Children.end(); }
};

/// Parameters by index ("0", "1", ...). Tensors appended become
/// parameters (requires_grad set). Not callable.
class ParameterList : public Module<ParameterList> {
public:
  ParameterList() = default;
  explicit ParameterList(const std::vector<Tensor> &Params);

  ParameterList &append(Tensor P);
  ParameterList &extend(const std::vector<Tensor> &Ps);
  /// Replaces entry Index.
  void set(int64_t Index, Tensor P);
  Tensor operator[](int64_t Index) const;

  size_t size() const { return Params.size(); }
  bool empty() const { return Params.empty(); }
  TensorIterator begin() const { return TensorIterator(Params.begin()); }
  TensorIterator end() const { return TensorIterator(Params.end()); }

  /// "(0): Parameter containing: [torch.float32 of size 3x4]" per entry.
  std::string extra_repr() const override;
};

/// Parameters under string keys, insertion-ordered. Not callable.
class ParameterDict : public Module<ParameterDict> {
public:
  ParameterDict() = default;
  explicit ParameterDict(const NamedTensors &Params);

  /// Adds P under Key, or replaces the parameter under Key.
  ParameterDict &insert(const std::string &Key, Tensor P);
  ParameterDict &update(const NamedTensors &Ps);
  Tensor operator[](const std::string &Key) const;
  bool contains(const std::string &Key) const;
  Tensor pop(const std::string &Key);
  void clear();
  std::vector<std::string> keys() const;
  std::vector<Tensor> values() const;
  const NamedTensors &items() const { return Params.items(); }

  size_t size() const { return Params.size(); }
  bool empty() const { return Params.empty(); }
  /// Iterates (key, parameter) pairs.
  NamedTensors::const_iterator begin() const { return Params.begin(); }
  NamedTensors::const_iterator end() const { return Params.end(); }

  /// "(key): Parameter containing: [torch.FloatTensor of size 3x4]".
  std::string extra_repr() const override;
};

} // namespace nng::nn
