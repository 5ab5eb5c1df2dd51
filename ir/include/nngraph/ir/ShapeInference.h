//===- ShapeInference.h - Type and shape inference --------------*- C++ -*-===//
//
// Each op's inference function (named in Ops.def) computes output types from
// input types, attributes and, when known, input values. InferContext is
// what it sees; it is built either from a graph node (static inference, where
// constant inputs are known) or from concrete tensors (the reference backend
// computes output shapes at run time with the same functions).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <sstream>

namespace nng::ir {

/// What an inference function sees of one node.
class InferContext {
public:
  /// InTypes[i] / InValues[i] may be null: absent optional input / unknown
  /// value.
  InferContext(const OpSchema &Schema, const AttrMap &Attrs,
               std::vector<const TensorType *> InTypes,
               std::vector<const rt::Tensor *> InValues, size_t NumOutputs,
               std::string NodeDesc);

  const OpSchema &schema() const { return Schema; }
  size_t numInputs() const { return InTypes.size(); }
  bool hasInput(size_t I) const { return I < InTypes.size() && InTypes[I]; }
  /// Type of input I; throws if absent.
  const TensorType &inputType(size_t I) const;
  /// Known value of input I (a constant, or any input at run time), or null.
  const rt::Tensor *inputValue(size_t I) const {
    return I < InValues.size() ? InValues[I] : nullptr;
  }

  /// Attribute getters with the op table's defaults; names are string
  /// literals checked against Ops.def at compile time (AttrName.h).
  bool hasAttr(AnyAttrName N) const { return Attrs.has(N); }
  const Attribute &attr(AnyAttrName N) const { return attrByName(N); }
  int64_t attrInt(IntAttrName N) const { return attrByName(N).i(); }
  float attrFloat(FloatAttrName N) const { return attrByName(N).f(); }
  const std::string &attrString(StringAttrName N) const {
    return attrByName(N).s();
  }
  std::vector<int64_t> attrInts(IntsAttrName N) const {
    return attrIntsByName(N);
  }
  /// The same for a name known only at run time.
  bool hasAttrByName(std::string_view N) const { return Attrs.hasByName(N); }
  const Attribute &attrByName(std::string_view N) const;
  std::vector<int64_t> attrIntsByName(std::string_view N) const;

  size_t numOutputs() const { return Outputs.size(); }
  void setOutputType(size_t I, TensorType T);
  /// The types the node's outputs declare, when inference runs on a graph
  /// node (inferNodeTypes, the verifier); none at run time. Only ops whose
  /// output types come from outside the graph (nng.ModuleCall) read them.
  void setDeclaredOutputTypes(std::vector<const TensorType *> T) {
    Declared = std::move(T);
  }
  /// Declared type of output I, or null when unknown.
  const TensorType *declaredOutputType(size_t I) const {
    return I < Declared.size() ? Declared[I] : nullptr;
  }
  const std::vector<TensorType> &outputTypes() const { return Outputs; }

  /// Throws Error(ShapeMismatch) with the node description appended.
  template <typename... Args> [[noreturn]] void fail(const Args &...A) const {
    std::ostringstream OS;
    (OS << ... << A);
    throwError(OS.str());
  }

private:
  [[noreturn]] void throwError(const std::string &Msg) const;
  const OpSchema &Schema;
  const AttrMap &Attrs;
  std::vector<const TensorType *> InTypes;
  std::vector<const rt::Tensor *> InValues;
  std::vector<TensorType> Outputs;
  std::vector<const TensorType *> Declared;
  std::string NodeDesc;
};

/// Runs N's inference function with the types of its inputs (and the data
/// of inputs that are initializers or Constant outputs) and returns the
/// output types. Throws Error(ShapeMismatch) naming the node on bad input.
std::vector<TensorType> inferNodeTypes(const Node &N);

/// Infers every node's output types in order, merging with what the values
/// already declare (a declared static dim refines an inferred unknown one).
/// The regions of If and Loop nodes are typed again first, from their
/// node's inputs (inferRegionTypes). Throws Error(ShapeMismatch) naming the node on a contradiction.
void inferTypes(Graph &G);

} // namespace nng::ir
