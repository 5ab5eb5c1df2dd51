//===- Graph.h - Graph, Node and Value ---------------------------*- C++ -*-===//
//
// The graph IR. A Graph owns its Values and Nodes. Values are graph inputs,
// initializers (named constant tensors: parameters and buffers, named by
// their state_dict key) or node outputs; each has a TensorType and a use
// list. Nodes are kept in topological order; each has an op from the op
// table, inputs (null for an absent optional input), outputs, attributes, a
// name and a scope (module path and module type it was traced from).
//
// A node may own regions (graph attributes: If's branches, Loop's body). A
// region reads values of enclosing scopes through captures: values of kind
// Capture, named like the outer value they stand for, each bound to one of
// the owning node's *implicit inputs* (inputs after the op's own ones).
// So a value read inside a region is used by the node that owns it, and
// everything that walks use lists (DCE, CSE, folding, scheduling) sees it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Attribute.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/Type.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nng::ir {

class Graph;
class Node;

/// One use of a value: a node and the input position.
struct Use {
  Node *User;
  unsigned Index;
  bool operator==(const Use &O) const = default;
};

/// An SSA value.
class Value {
public:
  enum class Kind : uint8_t { Input, Initializer, NodeOutput, Capture };

  const std::string &name() const { return Name; }
  const TensorType &type() const { return Ty; }
  void setType(TensorType T) { Ty = std::move(T); }
  Kind kind() const { return K; }
  bool isInput() const { return K == Kind::Input; }
  bool isInitializer() const { return K == Kind::Initializer; }
  /// A region's reference to a value of an enclosing scope.
  bool isCapture() const { return K == Kind::Capture; }
  /// For a capture: the index of the owning node's input it is bound to.
  unsigned captureIndex() const { return ProducerIndex; }
  /// The producing node, or null for inputs and initializers.
  Node *producer() const { return Producer; }
  unsigned producerIndex() const { return ProducerIndex; }
  const std::vector<Use> &uses() const { return Uses; }
  bool hasUses() const { return !Uses.empty(); }
  Graph *graph() const { return Parent; }

  /// An initializer's data (undefined when elided or not an initializer).
  const rt::Tensor &data() const { return Data; }
  void setData(rt::Tensor T) { Data = std::move(T); }
  /// For an initializer whose data was elided when printed and parsed back
  /// without it: the content hash that the text carried ("fnv1a64:...").
  const std::string &elidedHash() const { return ElidedHash; }
  void setElidedHash(std::string H) { ElidedHash = std::move(H); }

private:
  friend class Graph;
  friend class Node;
  std::string Name;
  TensorType Ty;
  Kind K = Kind::NodeOutput;
  Node *Producer = nullptr;
  unsigned ProducerIndex = 0;
  std::vector<Use> Uses;
  Graph *Parent = nullptr;
  rt::Tensor Data;
  std::string ElidedHash;
};

/// Where a node came from: the module path and module type it was traced
/// from ("layer1.0.conv1", "Conv2d"). Both empty when unknown.
struct Scope {
  std::string Path;
  std::string ModuleType;
  bool empty() const { return Path.empty() && ModuleType.empty(); }
  bool operator==(const Scope &O) const = default;
};

/// An operation.
class Node {
public:
  OpKind op() const { return Op; }
  const OpSchema &schema() const { return getOpSchema(Op); }
  /// True when running the node twice on the same inputs gives the same
  /// outputs and does nothing else, so it may be folded or merged: its op
  /// is neither impure nor random (a random_in_training op whose
  /// training_mode input is absent or a constant false is not random).
  bool isPure() const;
  const std::string &name() const { return Name; }
  void setName(std::string N) { Name = std::move(N); }
  const Scope &scope() const { return Sc; }
  void setScope(Scope S) { Sc = std::move(S); }
  Graph *graph() const { return Parent; }

  size_t numInputs() const { return Inputs.size(); }
  /// The inputs the op itself takes (the schema's); the rest are implicit:
  /// the outer values the node's regions read (their captures).
  size_t numExplicitInputs() const { return Inputs.size() - NumImplicit; }
  size_t numImplicitInputs() const { return NumImplicit; }
  bool isImplicitInput(size_t I) const { return I >= numExplicitInputs(); }
  /// Appends an implicit input (a value one of the regions captures) and
  /// returns its input index.
  unsigned addImplicitInput(Value *V);
  /// Marks the last N inputs implicit (a node copied with all its inputs).
  void setNumImplicitInputs(size_t N);
  /// The regions (graph attributes), in attribute-name order.
  std::vector<Graph *> regions() const;
  bool hasRegions() const;
  /// Input I; null when it is an absent optional input.
  Value *input(size_t I) const { return Inputs[I]; }
  const std::vector<Value *> &inputs() const { return Inputs; }
  /// Replaces input I (updating use lists); V may be null.
  void setInput(size_t I, Value *V);
  /// Appends an input.
  void addInput(Value *V);
  /// Drops trailing inputs beyond N.
  void truncateInputs(size_t N);
  /// True when input I exists and is not null.
  bool hasInput(size_t I) const { return I < Inputs.size() && Inputs[I]; }

  size_t numOutputs() const { return Outputs.size(); }
  Value *output(size_t I = 0) const { return Outputs[I]; }
  const std::vector<Value *> &outputs() const { return Outputs; }

  const AttrMap &attrs() const { return Attrs; }
  AttrMap &attrs() { return Attrs; }
  /// Sets attribute N to V; N is a string literal that some op of Ops.def
  /// declares with V's type (checked at compile time, AttrName.h), or, for
  /// an Attribute, with any type.
  template <typename T>
  requires attr_check::HasAttrTypeOf<T>
  void setAttr(AttrNameFor<T> N, T &&V) { Attrs.set<T>(N, std::forward<T>(V)); }
  void setAttr(AnyAttrName N, Attribute A) { Attrs.set(N, std::move(A)); }
  /// Sets attribute N, a name known only at run time.
  void setAttrByName(std::string N, Attribute A) {
    Attrs.setByName(std::move(N), std::move(A));
  }
  /// Attribute N or its default from the op table; throws Error(Verify)
  /// naming the node when it is absent and has no default. N is a string
  /// literal checked against Ops.def at compile time (AttrName.h): some op
  /// declares it, with the type the typed getters read.
  const Attribute &attr(AnyAttrName N) const { return attrByName(N); }
  int64_t attrInt(IntAttrName N) const { return attrByName(N).i(); }
  float attrFloat(FloatAttrName N) const { return attrByName(N).f(); }
  const std::string &attrString(StringAttrName N) const {
    return attrByName(N).s();
  }
  /// An ints attribute, or an empty list when absent without default.
  std::vector<int64_t> attrInts(IntsAttrName N) const {
    return attrIntsByName(N);
  }
  /// attr and attrInts for a name known only at run time (read from a file,
  /// or from the op table).
  const Attribute &attrByName(std::string_view N) const;
  std::vector<int64_t> attrIntsByName(std::string_view N) const;

  /// "%y = Conv (node 'conv_0')": used in messages.
  std::string describe() const;

private:
  friend class Graph;
  static void removeUse(Value *V, Node *N, unsigned I);
  /// Renames the captures bound to input I after the value it now holds.
  void syncCaptureNames(size_t I);
  size_t NumImplicit = 0;
  OpKind Op = OpKind::Identity;
  std::string Name;
  Scope Sc;
  std::vector<Value *> Inputs;
  std::vector<Value *> Outputs;
  AttrMap Attrs;
  Graph *Parent = nullptr;
};

/// A dataflow graph: inputs, initializers, nodes in topological order and
/// outputs. Value names are unique within the graph.
class Graph {
public:
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph();

  const std::string &name() const { return Name; }
  void setName(std::string N) { Name = std::move(N); }

  /// Adds a graph input; throws Error(InvalidArgument) if the name is taken.
  Value *addInput(std::string Name, TensorType T);
  /// Adds an initializer holding Data; its type is Data's (static) type.
  Value *addInitializer(std::string Name, rt::Tensor Data);
  /// Adds an initializer with a type but no data (elided).
  Value *addElidedInitializer(std::string Name, TensorType T, std::string Hash);
  /// Creates a node at the end (or before InsertBefore), with one output per
  /// entry of OutputNames (a name is uniquified when taken). Output types
  /// start unknown; run inferTypes() or set them.
  Node *addNode(OpKind Op, std::vector<Value *> Inputs,
                std::vector<std::string> OutputNames, AttrMap Attrs = {},
                Node *InsertBefore = nullptr);
  /// Removes N, which must have no used outputs (graph outputs count as
  /// uses).
  void eraseNode(Node *N);
  /// Adds a capture to this region graph: a reference to an enclosing
  /// scope's value, bound to its owning node's input InputIndex.
  Value *addCapture(std::string Name, TensorType T, unsigned InputIndex);
  /// Removes an unused initializer, input or capture.
  void eraseValue(Value *V);
  /// Points every use of From (and graph outputs) at To.
  void replaceAllUsesWith(Value *From, Value *To);

  void setOutputs(std::vector<Value *> Outs) { Outputs = std::move(Outs); }
  void addOutput(Value *V) { Outputs.push_back(V); }
  void setOutput(size_t I, Value *V) { Outputs[I] = V; }

  const std::vector<Value *> &inputs() const { return Inputs; }
  const std::vector<Value *> &initializers() const { return Initializers; }
  /// A region's captures, in the order they were added.
  const std::vector<Value *> &captures() const { return Captures; }
  const std::vector<Value *> &outputs() const { return Outputs; }
  /// Nodes in topological order.
  const std::vector<std::unique_ptr<Node>> &nodes() const { return Nodes; }
  size_t numNodes() const { return Nodes.size(); }
  /// True when V is one of the graph outputs.
  bool isOutput(const Value *V) const;

  /// The value with Name, or null.
  Value *lookup(std::string_view Name) const;
  /// Renames V; throws if NewName is taken.
  void rename(Value *V, std::string NewName);
  /// A name not yet used, based on Base ("x" -> "x", "x.1", ...).
  std::string uniqueName(std::string_view Base) const;

  /// Reorders nodes topologically (stable); throws Error(Verify) on a cycle.
  void topologicalSort();
  /// Makes every capture a graph input, after the inputs (liftRegion).
  void liftCaptures();
  /// A deep copy (initializer data is shared, not copied; regions are
  /// copied too).
  std::unique_ptr<Graph> clone() const;

private:
  Value *newValue(std::string Name, Value::Kind K);
  std::string Name;
  std::vector<Value *> Inputs, Initializers, Outputs, Captures;
  std::vector<std::unique_ptr<Node>> Nodes;
  std::vector<std::unique_ptr<Value>> Values;
  std::unordered_map<std::string, Value *> ByName;
};

/// The constant value of V when it is an initializer with data or the output
/// of a Constant node; else null.
const rt::Tensor *constantValue(const Value *V);

} // namespace nng::ir
