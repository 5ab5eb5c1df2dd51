//===- OnnxGradientRules.h - Gradient rules and emitter ---------*- C++ -*-===//
//
// Private to the ONNX frontend's Gradient expansion (OnnxGradient.cpp): the
// Expander that rewrites one ai.onnx.preview.training.Gradient node, the
// interface its derivative rules use to emit default-domain nodes, and the
// rule table (OnnxGradientRules.cpp, one small function per op).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OnnxProto.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nng::frontend::onnxio::gradient {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

/// One dim as ONNX shape inference knows it: a value, a name, or nothing.
struct DimInfo {
  int64_t Value = -1;
  std::string Param;
};

/// A value's element type and shape (RankKnown false: nothing is known).
struct ValueType {
  int ElemType = 0;
  bool RankKnown = false;
  std::vector<DimInfo> Dims;
};

/// True for "" and "ai.onnx".
bool isDefaultDomain(const std::string &D);

/// "node 'g' (ai.onnx.preview.training.Gradient)", or "node #3 -> 'y' (...)"
/// for an unnamed node (Index is its position in the graph).
std::string describeNode(const NodeProto &N, int Index);

/// N's attribute Name, or null.
const AttributeProto *findAttr(const NodeProto &N, const std::string &Name);

/// N's INT attribute Name, or Default when absent.
int64_t intAttr(const NodeProto &N, const std::string &Name, int64_t Default);

/// An INT attribute proto.
AttributeProto intAttrProto(const std::string &Name, int64_t V);

/// An INTS attribute proto.
AttributeProto intsAttrProto(const std::string &Name,
                             const std::vector<int64_t> &V);

/// Expands one Gradient node: reverse-mode differentiation of the nodes on
/// paths from xs to y, emitted as default-domain nodes valid at Opset.
class Expander {
public:
  /// Used holds every name of the model (fresh names are added to it).
  Expander(const ModelProto &M, const NodeProto &Grad, int GradIndex,
           const ModelSource &Src, int Opset,
           std::unordered_set<std::string> &Used);

  /// The nodes that replace the Gradient node. Throws Error(Parse) for a
  /// malformed Gradient node, Error(Unsupported) for what the expansion
  /// cannot differentiate.
  std::vector<NodeProto> run();

  // --- For the rules ------------------------------------------------------

  /// The model's default-domain opset (the form of emitted nodes).
  int opset() const { return Opset; }

  /// The graph being differentiated (for constant operands).
  const GraphProto &graph() const { return Graph; }

  /// True when N's input I needs a gradient (it depends on an x and y
  /// depends on it).
  bool wants(const NodeProto &N, int I) const;

  /// Emits Op(Ins) with one fresh output (named after Hint); returns the
  /// output's name.
  std::string op(const std::string &Op, const std::vector<std::string> &Ins,
                 const std::string &Hint,
                 const std::vector<AttributeProto> &Attrs = {});

  /// op() with the op type as the hint.
  std::string op(const std::string &Op, const std::vector<std::string> &Ins) {
    return op(Op, Ins, Op);
  }

  /// A Constant node holding the 1-D int64 tensor V.
  std::string constInts(const std::vector<int64_t> &V);

  /// The type of a forward value (unknown when ONNX shape inference could
  /// not tell).
  const ValueType &typeOf(const std::string &Name) const;

  /// A tensor of V's shape and element type filled with Fill (0 or 1).
  std::string filledLike(const std::string &V, double Fill);

  /// ReduceSum of X over Axes with keepdims=1, in the opset's form.
  std::string reduceSum(const std::string &X, const std::vector<int64_t> &Axes);

  /// Unsqueeze of X at Axes, in the opset's form.
  std::string unsqueeze(const std::string &X, const std::vector<int64_t> &Axes);

  /// G (a gradient of type GType, the shape X was broadcast to) summed back
  /// to X's shape: static axes when the shapes tell them, else found at run
  /// time (opset 13+).
  std::string sumToShapeOf(const std::string &G, const ValueType &GType,
                           const std::string &X);

  /// Throws Error(Unsupported) naming the model and the Gradient node.
  [[noreturn]] void fail(const std::string &Msg) const;

  /// Like fail(), naming the forward node N the problem is in.
  [[noreturn]] void failAt(const NodeProto &N, const std::string &Msg) const;

private:
  std::string fresh(const std::string &Hint);
  int nodeIndex(const NodeProto &N) const;
  void readAttributes();
  std::vector<int> topoOrder() const;
  void markNeeded(const std::vector<int> &Order);
  std::string gradientOf(const std::string &V);

  const ModelProto &M;
  const GraphProto &Graph;
  const NodeProto &Grad;
  const ModelSource &Src;
  int Opset;
  std::unordered_set<std::string> &Used;
  std::string Desc, Prefix;

  std::vector<std::string> Xs, Zs;
  std::string Y;
  std::unordered_map<std::string, ValueType> Types;
  /// Values whose gradient is needed (they depend on an x and y on them).
  std::unordered_set<std::string> Need;
  /// Nodes to differentiate, in reverse dependency order.
  std::vector<int> Active;
  /// Gradient contributions per value, summed when the value is read.
  std::unordered_map<std::string, std::vector<std::string>> Parts;
  std::vector<NodeProto> Out;
};

/// A derivative rule: given node N and G = d y / d N.output(0), sets
/// In[i] to d y / d N.input(i) for every input with E.wants(N, i).
using RuleFn = void (*)(Expander &E, const NodeProto &N, const std::string &G,
                        std::vector<std::string> &In);

/// One row of the rule table.
struct Rule {
  const char *Op;
  RuleFn Fn;
  /// How many leading inputs are differentiable (-1: all of them).
  int DiffInputs;
};

/// The rule for N (default domain only), or null.
const Rule *findRule(const NodeProto &N);

/// "Add, Sub, ...": the ops that have a rule, for messages.
std::string ruleList();

} // namespace nng::frontend::onnxio::gradient
