//===- Attribute.h - Typed node attributes ----------------------*- C++ -*-===//
//
// An Attribute is one typed value (int, float, string, their lists, a
// tensor, or a graph: a region the node owns, ONNX's GRAPH attribute, such as
// If's branches and Loop's body); AttrMap holds a node's attributes sorted by
// name so printing is deterministic. Defaults come from the op table, not
// from here. Lookups and settings by a literal name are checked against the
// op table at compile time (AttrName.h), a setting also for the type of its
// value; the *ByName lookups and setByName take run-time names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/AttrName.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace nng::ir {

/// This layer names the runtime's data tensor plainly.
using rt::Tensor;

class Graph;

/// Name used in the op table and in messages: "int", "floats", "tensor"...
std::string_view attrTypeName(AttrType T);
std::optional<AttrType> parseAttrType(std::string_view S);

/// A typed attribute value.
class Attribute {
public:
  using Storage = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>,
                               rt::Tensor, std::shared_ptr<Graph>>;
  Attribute() = default;
  Attribute(int64_t V) : V(V) {}
  Attribute(int V) : V(static_cast<int64_t>(V)) {}
  Attribute(float V) : V(V) {}
  Attribute(std::string V) : V(std::move(V)) {}
  Attribute(const char *V) : V(std::string(V)) {}
  Attribute(std::vector<int64_t> V) : V(std::move(V)) {}
  Attribute(std::vector<float> V) : V(std::move(V)) {}
  Attribute(std::vector<std::string> V) : V(std::move(V)) {}
  Attribute(rt::Tensor V) : V(std::move(V)) {}
  /// A region. Copies of the attribute share the graph; Graph::clone copies
  /// it deeply.
  Attribute(std::shared_ptr<Graph> V) : V(std::move(V)) {}

  AttrType type() const { return static_cast<AttrType>(V.index()); }
  int64_t i() const { return std::get<int64_t>(V); }
  float f() const { return std::get<float>(V); }
  const std::string &s() const { return std::get<std::string>(V); }
  const std::vector<int64_t> &ints() const {
    return std::get<std::vector<int64_t>>(V);
  }
  const std::vector<float> &floats() const {
    return std::get<std::vector<float>>(V);
  }
  const std::vector<std::string> &strings() const {
    return std::get<std::vector<std::string>>(V);
  }
  const rt::Tensor &t() const { return std::get<rt::Tensor>(V); }
  /// The region of a graph attribute.
  Graph &g() const { return *std::get<std::shared_ptr<Graph>>(V); }
  const std::shared_ptr<Graph> &graphPtr() const {
    return std::get<std::shared_ptr<Graph>>(V);
  }
  /// Structural equality (tensors compared by value, graphs by identity: two
  /// nodes with regions are equal only when they share them).
  bool operator==(const Attribute &O) const;

private:
  Storage V;
};

namespace attr_check {

/// The attribute type a value of C++ type T makes (Attribute's
/// constructors); Attribute itself, of a type known only at run time, has
/// none.
template <typename T> constexpr bool HasAttrTypeOf =
    !std::is_same_v<std::remove_cvref_t<T>, Attribute>;
template <typename T> consteval AttrType attrTypeOf() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_integral_v<U>)
    return AttrType::Int;
  else if constexpr (std::is_floating_point_v<U>)
    return AttrType::Float;
  else if constexpr (std::is_convertible_v<U, std::string_view>)
    return AttrType::String;
  else if constexpr (std::is_same_v<U, std::vector<int64_t>>)
    return AttrType::Ints;
  else if constexpr (std::is_same_v<U, std::vector<float>>)
    return AttrType::Floats;
  else if constexpr (std::is_same_v<U, std::vector<std::string>>)
    return AttrType::Strings;
  else if constexpr (std::is_same_v<U, rt::Tensor>)
    return AttrType::Tensor;
  else
    return AttrType::Graph;
}

} // namespace attr_check

/// The name of an attribute set to a value of C++ type T: checked at compile
/// time to be declared by some op with T's attribute type.
template <typename T>
using AttrNameFor = AttrName<attr_check::attrTypeOf<T>()>;

/// A node's attributes, kept sorted by name.
class AttrMap {
public:
  using Entry = std::pair<std::string, Attribute>;
  /// Sets (or replaces) Name to V. Name is a string literal checked against
  /// Ops.def at compile time: some op declares it with V's type (AttrName.h).
  template <typename T>
  requires attr_check::HasAttrTypeOf<T>
  void set(AttrNameFor<T> Name, T &&V) {
    setByName(std::string(Name.str()), Attribute(std::forward<T>(V)));
  }
  /// Sets Name to A, a value whose type is known at run time; Name is
  /// checked against Ops.def at compile time.
  void set(AnyAttrName Name, Attribute A) {
    setByName(std::string(Name.str()), std::move(A));
  }
  /// Sets (or replaces) Name, a name known only at run time.
  void setByName(std::string Name, Attribute A);
  /// The attribute, or null. Name is checked against Ops.def at compile
  /// time (AttrName.h); findByName takes a name known only at run time.
  const Attribute *find(AnyAttrName Name) const { return findByName(Name); }
  const Attribute *findByName(std::string_view Name) const;
  bool has(AnyAttrName Name) const { return findByName(Name) != nullptr; }
  bool hasByName(std::string_view Name) const {
    return findByName(Name) != nullptr;
  }
  bool erase(AnyAttrName Name) { return eraseByName(Name); }
  bool eraseByName(std::string_view Name);
  auto begin() const { return Entries.begin(); }
  auto end() const { return Entries.end(); }
  size_t size() const { return Entries.size(); }
  bool empty() const { return Entries.empty(); }
  bool operator==(const AttrMap &O) const { return Entries == O.Entries; }

private:
  std::vector<Entry> Entries;
};

} // namespace nng::ir
