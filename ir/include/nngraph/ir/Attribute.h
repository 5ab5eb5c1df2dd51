//===- Attribute.h - Typed node attributes ----------------------*- C++ -*-===//
//
// An Attribute is one typed value (int, float, string, their lists, a
// tensor, or a graph: a region the node owns, ONNX's GRAPH attribute, such as
// If's branches and Loop's body); AttrMap holds a node's attributes sorted by
// name so printing is deterministic. Defaults come from the op table, not
// from here. Lookups by a literal name are checked against the op table at
// compile time (AttrName.h); the *ByName lookups take run-time names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/AttrName.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <string_view>
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

/// A node's attributes, kept sorted by name.
class AttrMap {
public:
  using Entry = std::pair<std::string, Attribute>;
  /// Sets (or replaces) Name.
  void set(std::string Name, Attribute A);
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
