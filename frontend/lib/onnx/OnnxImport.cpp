//===- OnnxImport.cpp - ONNX ModelProto -> ir::Graph ---------------------===//
//
// Model-level checks (ir_version, opset imports, the graph), one report of
// every unsupported operator, conversion of pre-13 opsets with ONNX's
// version converter, then the graph: initializers (graph inputs that are
// also initializers count as initializers), inputs, nodes in dependency
// order (inputs by name, empty names as absent optional inputs, attributes
// checked against the op table, Constant's value_* forms normalized to
// 'value'), declared value types and outputs; finally type inference and
// the verifier. If, Loop and Scan bring their subgraphs as regions: a nested
// builder makes each (block arguments, initializers, nodes, outputs), and a
// name it does not define is looked up in the enclosing graphs and becomes
// a capture (an implicit input of the node, ir/Regions.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxImport.h"
#include "OnnxContribOps.h"
#include "OnnxGradient.h"
#include "OnnxProto.h"
#include "OnnxSequences.h"
#include "nngraph/ir/Regions.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace nng::frontend {
namespace onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;

/// The oldest IR version we read (the first with opset imports).
constexpr int64_t MinIrVersion = 3;
/// The opset pre-13 models are converted to.
constexpr int ConvertTarget = MinExportOpset;

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

std::string qualifiedOpType(const NodeProto &N) {
  return isDefaultDomain(N.domain()) ? N.op_type()
                                     : N.domain() + "." + N.op_type();
}

/// "'conv1'", or "#3 -> 'y'" for an unnamed node (index and first output).
std::string nodeRef(const NodeProto &N, size_t Index) {
  if (!N.name().empty())
    return "'" + N.name() + "'";
  std::string S = "#" + std::to_string(Index);
  if (N.output_size() && !N.output(0).empty())
    S += " -> '" + N.output(0) + "'";
  return S;
}

/// "node 'conv1' (Conv)", or "node #3 -> 'y' (Conv)" when unnamed.
std::string nodeDesc(const NodeProto &N, size_t Index) {
  return "node " + nodeRef(N, Index) + " (" + qualifiedOpType(N) + ")";
}

bool hasSubgraph(const NodeProto &N) {
  for (const AttributeProto &A : N.attribute()) {
    int T = attrProtoType(A);
    if (T == AttributeProto::GRAPH || T == AttributeProto::GRAPHS)
      return true;
  }
  return false;
}

void collectOps(const GraphProto &G, std::set<std::string> &Ops) {
  for (const NodeProto &N : G.node()) {
    Ops.insert(qualifiedOpType(N));
    for (const AttributeProto &A : N.attribute()) {
      if (A.has_g())
        collectOps(A.g(), Ops);
      for (const GraphProto &Sub : A.graphs())
        collectOps(Sub, Ops);
    }
  }
}

std::string readWholeFile(const std::string &Path) {
  std::error_code Ec;
  if (std::filesystem::is_directory(Path, Ec))
    fail(ErrorKind::IO, "cannot read ONNX model '", Path,
         "': it is a directory");
  std::ifstream In(Path, std::ios::binary | std::ios::ate);
  if (!In)
    fail(ErrorKind::IO, "cannot open ONNX model '", Path,
         "': ", std::strerror(errno));
  // Read into one string of the file's size (no second copy).
  std::string Bytes(static_cast<size_t>(std::max<std::streamoff>(
                        In.tellg(), 0)),
                    '\0');
  In.seekg(0);
  In.read(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
  if (In.bad() || In.gcount() != static_cast<std::streamsize>(Bytes.size()))
    fail(ErrorKind::IO, "cannot read ONNX model '", Path,
         "': ", std::strerror(errno));
  return Bytes;
}

/// Checks ir_version and the graph; returns the default domain's opset.
int checkHeader(const ModelProto &M, const ModelSource &Src) {
  if (!M.has_ir_version() || M.ir_version() <= 0)
    modelError(ErrorKind::Parse, Src,
               "ir_version is missing (is this an ONNX model?)");
  if (M.ir_version() > ::onnx::IR_VERSION)
    modelError(ErrorKind::Unsupported, Src,
               "ir_version " + std::to_string(M.ir_version()) +
                   " is newer than nngraph reads (up to " +
                   std::to_string(::onnx::IR_VERSION) + ")");
  if (M.ir_version() < MinIrVersion)
    modelError(ErrorKind::Unsupported, Src,
               "ir_version " + std::to_string(M.ir_version()) +
                   " is too old (nngraph reads " +
                   std::to_string(MinIrVersion) + " to " +
                   std::to_string(::onnx::IR_VERSION) +
                   "); re-export the model with a newer exporter");
  if (!M.has_graph())
    modelError(ErrorKind::Parse, Src, "the model has no graph");
  int Opset = -1;
  for (const auto &Imp : M.opset_import()) {
    if (!isDefaultDomain(Imp.domain()))
      continue;
    if (Opset != -1)
      modelError(ErrorKind::Parse, Src,
                 "the default ONNX domain is imported twice");
    if (Imp.version() < 1)
      modelError(ErrorKind::Parse, Src,
                 "invalid opset version " + std::to_string(Imp.version()));
    Opset = static_cast<int>(Imp.version());
  }
  if (Opset == -1) {
    // Legal when no node uses the default domain (checked after the
    // operators, so that unsupported domains are reported as such).
    for (const NodeProto &N : M.graph().node())
      if (isDefaultDomain(N.domain()))
        modelError(ErrorKind::Parse, Src,
                   "node '" + N.name() + "' (" + N.op_type() +
                       ") is in the default ONNX domain but the model does "
                       "not import it (opset_import has no entry for domain "
                       "'')");
    return MaxOpset;
  }
  if (Opset > MaxOpset)
    modelError(ErrorKind::Unsupported, Src,
               "the model uses opset " + std::to_string(Opset) +
                   "; nngraph reads opsets up to " + std::to_string(MaxOpset));
  return Opset;
}

/// Throws one Error listing every operator of the graph that nngraph cannot
/// import (op type, count, the first node names).
/// True when op S takes graph attributes (If, Loop).
bool takesRegions(const ir::OpSchema *S) {
  if (!S)
    return false;
  for (const ir::AttrSchema &A : S->Attrs)
    if (A.Type == ir::AttrType::Graph)
      return true;
  return false;
}

/// The nodes of G and of its subgraphs, depth first; InRegion tells which
/// lie in a subgraph.
void collectNodes(const GraphProto &G, bool InRegion,
                  std::vector<std::pair<const NodeProto *, bool>> &Out) {
  for (const NodeProto &N : G.node()) {
    Out.push_back({&N, InRegion});
    for (const AttributeProto &A : N.attribute()) {
      if (A.has_g())
        collectNodes(A.g(), true, Out);
      for (const GraphProto &Sub : A.graphs())
        collectNodes(Sub, true, Out);
    }
  }
}

void checkOperators(const GraphProto &G, const ModelSource &Src) {
  struct Entry {
    size_t Count = 0;
    std::vector<std::string> Names;
    bool Subgraph = false;
  };
  std::map<std::string, Entry> Bad;
  std::vector<std::string> Order;
  std::vector<std::pair<const NodeProto *, bool>> All;
  collectNodes(G, false, All);
  for (size_t I = 0; I < All.size(); ++I) {
    const NodeProto &N = *All[I].first;
    const ir::OpSchema *S = ir::lookupOp(
        isDefaultDomain(N.domain()) ? "" : N.domain(), N.op_type());
    bool Value = isOnnxValueOp(N.domain(), N.op_type());
    bool Sub = hasSubgraph(N) && !takesRegions(S) && !Value;
    if ((S || Value) && !Sub)
      continue;
    std::string Key = qualifiedOpType(N);
    auto [It, New] = Bad.try_emplace(Key);
    if (New)
      Order.push_back(Key);
    Entry &E = It->second;
    ++E.Count;
    E.Subgraph |= Sub;
    if (E.Names.size() < 3)
      E.Names.push_back(nodeRef(N, I));
  }
  if (Bad.empty())
    return;
  size_t Nodes = 0;
  for (auto &[K, E] : Bad)
    Nodes += E.Count;
  std::string Msg = std::to_string(Bad.size()) + " operator type" +
                    (Bad.size() == 1 ? "" : "s") + " (" +
                    std::to_string(Nodes) + " node" + (Nodes == 1 ? "" : "s") +
                    ") not supported by nngraph: ";
  for (size_t I = 0; I < Order.size(); ++I) {
    const Entry &E = Bad[Order[I]];
    if (I)
      Msg += "; ";
    Msg += Order[I] + " x" + std::to_string(E.Count) + " (node" +
           (E.Count == 1 ? " " : "s ");
    for (size_t J = 0; J < E.Names.size(); ++J)
      Msg += (J ? ", " : "") + E.Names[J];
    if (E.Count > E.Names.size())
      Msg += ", ...";
    Msg += ")";
    if (E.Subgraph)
      Msg += " [of the operators with subgraphs, nngraph supports If, Loop "
             "and Scan]";
    if (Order[I].rfind("ai.nngraph.module.", 0) == 0)
      Msg += " [a leaf-module call of a traced model, which runs only in the "
             "process that traced it: graphs with nng.ModuleCall cannot run "
             "after being saved and reloaded: trace without leaf modules]";
  }
  modelError(ErrorKind::Unsupported, Src, Msg);
}

/// Builds the ir::Graph of a checked, opset >= 13 model.
class GraphBuilder {
public:
  /// Builds G from GP; each initializer's data is released from GP once
  /// converted (a model's weights are then never held twice).
  GraphBuilder(GraphProto &GP, const ModelSource &Src, ir::Graph &G)
      : GP(GP), Src(Src), G(G) {}
  /// The builder of a region of node Owner of Parent's graph; ArgTypes, when
  /// given, types block arguments the subgraph leaves untyped.
  GraphBuilder(GraphProto &GP, const ModelSource &Src, ir::Graph &G,
               GraphBuilder *Parent, ir::Node *Owner,
               std::vector<ir::TensorType> ArgTypes)
      : GP(GP), Src(Src), G(G), Parent(Parent), Owner(Owner),
        ArgTypes(std::move(ArgTypes)) {}

  void build() {
    G.setName(GP.name());
    collectNames();
    addInitializers();
    addInputs();
    std::vector<int> Order = nodeOrder();
    for (int I : Order)
      addNode(GP.node(I), static_cast<size_t>(I));
    applyValueInfo();
    setOutputs();
  }

private:
  [[noreturn]] void error(ErrorKind K, const std::string &Msg) const {
    modelError(K, Src, Parent ? "subgraph '" + GP.name() + "': " + Msg : Msg);
  }

  /// The value Name of this graph or, through a capture, of an enclosing
  /// one; null when none defines it (yet).
  ir::Value *lookupScoped(const std::string &Name) {
    if (ir::Value *V = G.lookup(Name))
      return V;
    if (!Parent)
      return nullptr;
    ir::Value *Outer = Parent->lookupScoped(Name);
    return Outer ? ir::captureValue(*Owner, G, Outer) : nullptr;
  }

  /// True when an enclosing graph defines Name by now.
  bool definedOutside(const std::string &Name) const {
    return Parent && (Parent->G.lookup(Name) || Parent->definedOutside(Name));
  }

  void collectNames() {
    for (const auto &T : GP.initializer())
      AllNames.insert(T.name());
    for (const auto &V : GP.input())
      AllNames.insert(V.name());
    for (const NodeProto &N : GP.node())
      for (const std::string &O : N.output())
        AllNames.insert(O);
    if (GP.sparse_initializer_size())
      error(ErrorKind::Unsupported,
            "sparse initializers ('" +
                GP.sparse_initializer(0).values().name() +
                "') are not supported");
  }

  void addInitializers() {
    for (int I = 0; I < GP.initializer_size(); ++I) {
      const auto &T = GP.initializer(I);
      if (T.name().empty())
        error(ErrorKind::Parse,
              "initializer #" + std::to_string(I) + " has no name");
      if (G.lookup(T.name()))
        error(ErrorKind::Parse,
              "initializer '" + T.name() + "' is defined twice");
      G.addInitializer(
          T.name(), tensorFromProto(T, Src, "initializer '" + T.name() + "'"));
      std::string().swap(*GP.mutable_initializer(I)->mutable_raw_data());
    }
  }

  void addInputs() {
    for (const auto &V : GP.input()) {
      std::string What = "graph input '" + V.name() + "'";
      if (V.name().empty())
        error(ErrorKind::Parse, "a graph input has no name");
      if (ir::Value *Existing = G.lookup(V.name())) {
        // IR < 4 lists initializers among the inputs; IR >= 4 allows it to
        // give a default. Either way the initializer's data is used.
        if (Existing->isInitializer())
          continue;
        error(ErrorKind::Parse, What + " is listed twice");
      }
      size_t Arg = G.inputs().size();
      bool Untyped =
          !V.has_type() ||
          V.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET ||
          (V.type().has_tensor_type() && !V.type().tensor_type().elem_type());
      if (Untyped && Arg < ArgTypes.size()) {
        G.addInput(V.name(), ArgTypes[Arg]);
        continue;
      }
      if (!V.has_type())
        error(ErrorKind::Parse, What + " has no type");
      G.addInput(V.name(), typeFromProto(V.type(), Src, What));
    }
  }

  /// The nodes in dependency order (the file's order when it already is
  /// one, as ONNX requires); checks every input is defined and every value
  /// defined once.
  std::vector<int> nodeOrder() {
    std::unordered_map<std::string, int> Producer;
    for (int I = 0; I < GP.node_size(); ++I) {
      const NodeProto &N = GP.node(I);
      for (const std::string &O : N.output()) {
        if (O.empty())
          continue;
        if (ir::Value *V = G.lookup(O))
          error(ErrorKind::Parse,
                nodeDesc(N, I) + " output '" + O + "' redefines the graph " +
                    (V->isInput() ? "input" : "initializer") + " '" + O + "'");
        auto [It, New] = Producer.try_emplace(O, I);
        if (!New)
          error(ErrorKind::Parse,
                "value '" + O + "' is produced twice: by " +
                    nodeDesc(GP.node(It->second), It->second) + " and by " +
                    nodeDesc(N, I));
      }
    }
    std::vector<std::vector<int>> Users(GP.node_size());
    std::vector<int> Pending(GP.node_size(), 0);
    bool Sorted = true;
    for (int I = 0; I < GP.node_size(); ++I) {
      const NodeProto &N = GP.node(I);
      for (const std::string &In : N.input()) {
        if (In.empty() || G.lookup(In))
          continue;
        if (!Producer.count(In) && definedOutside(In))
          continue; // An enclosing graph's value.
        auto It = Producer.find(In);
        if (It == Producer.end())
          error(ErrorKind::Parse,
                nodeDesc(N, I) + " reads '" + In +
                    "', which no graph input, initializer or node defines");
        if (It->second >= I)
          Sorted = false;
        Users[It->second].push_back(I);
        ++Pending[I];
      }
    }
    std::vector<int> Order;
    if (Sorted) {
      for (int I = 0; I < GP.node_size(); ++I)
        Order.push_back(I);
      return Order;
    }
    Order = stableTopologicalOrder(Users, Pending);
    if (Order.size() != static_cast<size_t>(GP.node_size()))
      for (int I = 0; I < GP.node_size(); ++I)
        if (Pending[I])
          error(ErrorKind::Parse,
                "the graph has a cycle through " + nodeDesc(GP.node(I), I));
    return Order;
  }

  /// A fresh name for an unnamed optional output in the middle.
  std::string placeholderName(const NodeProto &N, size_t Index) {
    std::string Base = (N.name().empty() ? N.op_type() : N.name()) + ".unused" +
                       std::to_string(Index);
    std::string Name = Base;
    for (int K = 1; AllNames.count(Name) || G.lookup(Name); ++K)
      Name = Base + "." + std::to_string(K);
    AllNames.insert(Name);
    return Name;
  }

  ir::AttrMap convertAttributes(const NodeProto &N, const ir::OpSchema &S,
                                const std::string &Desc) {
    ir::AttrMap Attrs;
    for (const AttributeProto &A : N.attribute()) {
      if (A.name().empty())
        error(ErrorKind::Parse, Desc + " has an attribute without a name");
      if (Attrs.hasByName(A.name()))
        error(ErrorKind::Parse,
              Desc + ": attribute '" + A.name() + "' is given twice");
      if (S.Kind == ir::OpKind::Constant) {
        Attrs.setByName(A.name(), constantAttribute(A, Desc));
        continue;
      }
      const ir::AttrSchema *AS = S.findAttr(A.name());
      if (!AS) {
        std::string Known;
        for (const ir::AttrSchema &K : S.Attrs)
          Known += (Known.empty() ? "" : ", ") + K.Name;
        error(
            ErrorKind::Parse,
            Desc + ": '" + A.name() + "' is not an attribute of " +
                S.qualifiedName() +
                (Known.empty() ? " (it has none)" : " (known: " + Known + ")"));
      }
      if (AS->Type == ir::AttrType::Graph && attrProtoType(A) ==
                                                   AttributeProto::GRAPH) {
        Attrs.setByName(A.name(), ir::Attribute(std::shared_ptr<ir::Graph>()));
        continue; // Built by buildRegions once the node exists.
      }
      Attrs.setByName(A.name(), attributeFromProto(A, *AS, Src, Desc));
    }
    if (S.Kind == ir::OpKind::Constant)
      normalizeConstant(Attrs, Desc);
    else
      for (const ir::AttrSchema &AS : S.Attrs)
        if (AS.Required && !Attrs.hasByName(AS.Name))
          error(ErrorKind::Parse,
                Desc + ": required attribute '" + AS.Name + "' is missing");
    return Attrs;
  }

  /// One attribute of a Constant node, before normalization.
  ir::Attribute constantAttribute(const AttributeProto &A,
                                  const std::string &Desc) {
    const std::string &Name = A.name();
    if (Name == "sparse_value")
      error(ErrorKind::Unsupported,
            Desc + ": sparse constants ('sparse_value') are not supported");
    if (Name == "value_string" && A.type() == AttributeProto::STRING)
      return ir::Attribute(rt::Tensor::fromStrings({A.s()}, Shape{}));
    if (Name == "value_strings" && A.type() == AttributeProto::STRINGS)
      return ir::Attribute(rt::Tensor::fromStrings(
          {A.strings().begin(), A.strings().end()},
          Shape{static_cast<int64_t>(A.strings_size())}));
    const ir::OpSchema &S = ir::getOpSchema(ir::OpKind::Constant);
    const ir::AttrSchema *AS = S.findAttr(Name);
    if (!AS)
      error(ErrorKind::Parse,
            Desc + ": '" + Name + "' is not an attribute of Constant");
    return attributeFromProto(A, *AS, Src, Desc);
  }

  /// Rewrites value_float / value_floats / value_int / value_ints into the
  /// one 'value' tensor, so every Constant carries its data the same way.
  void normalizeConstant(ir::AttrMap &Attrs, const std::string &Desc) {
    if (Attrs.size() != 1)
      error(ErrorKind::Parse,
            Desc + " must have exactly one value attribute (it has " +
                std::to_string(Attrs.size()) + ")");
    auto [Name, A] = *Attrs.begin();
    rt::Tensor T;
    if (Name == "value")
      return;
    if (Name == "value_string" || Name == "value_strings")
      T = A.t(); // Made a str tensor by constantAttribute.
    else if (Name == "value_float")
      T = rt::Tensor::scalar<float>(A.f());
    else if (Name == "value_int")
      T = rt::Tensor::scalar<int64_t>(A.i());
    else if (Name == "value_floats")
      T = rt::Tensor::fromVector<float>(
          A.floats(), Shape{static_cast<int64_t>(A.floats().size())});
    else if (Name == "value_ints")
      T = rt::Tensor::fromVector<int64_t>(
          A.ints(), Shape{static_cast<int64_t>(A.ints().size())});
    ir::AttrMap Out;
    Out.set("value", ir::Attribute(std::move(T)));
    Attrs = std::move(Out);
  }

  void addNode(const NodeProto &N, size_t Index) {
    std::string Desc = nodeDesc(N, Index);
    const ir::OpSchema *S = ir::lookupOp(
        isDefaultDomain(N.domain()) ? "" : N.domain(), N.op_type());
    if (!S)
      error(ErrorKind::Unsupported, Desc + " is not supported");
    // Inputs: empty names are absent optional inputs; trailing ones drop.
    std::vector<ir::Value *> Ins;
    for (const std::string &In : N.input())
      Ins.push_back(In.empty() ? nullptr : lookupScoped(In));
    while (!Ins.empty() && !Ins.back())
      Ins.pop_back();
    if (Ins.size() < S->minInputs() || Ins.size() > S->maxInputs())
      error(ErrorKind::Parse, Desc + " has " + std::to_string(Ins.size()) +
                                  " input" + (Ins.size() == 1 ? "" : "s") +
                                  "; " + S->qualifiedName() + " takes " +
                                  arity(S->minInputs(), S->maxInputs()));
    for (size_t I = 0; I < Ins.size(); ++I)
      if (!Ins[I] && I < S->Inputs.size() && !S->Inputs[I].Optional &&
          !S->Inputs[I].Variadic)
        error(ErrorKind::Parse, Desc + ": input " + std::to_string(I) + " ('" +
                                    S->Inputs[I].Name +
                                    "') is required but empty");
    std::vector<std::string> Outs(N.output().begin(), N.output().end());
    while (!Outs.empty() && Outs.back().empty())
      Outs.pop_back();
    if (Outs.size() < std::max<size_t>(S->minOutputs(), 1) ||
        Outs.size() > S->maxOutputs())
      error(ErrorKind::Parse,
            Desc + " has " + std::to_string(Outs.size()) + " output" +
                (Outs.size() == 1 ? "" : "s") + "; " + S->qualifiedName() +
                " produces " +
                arity(std::max<size_t>(S->minOutputs(), 1), S->maxOutputs()));
    for (size_t I = 0; I < Outs.size(); ++I)
      if (Outs[I].empty())
        Outs[I] = placeholderName(N, I);
    ir::AttrMap Attrs = convertAttributes(N, *S, Desc);
    ir::Node *Node = G.addNode(S->Kind, std::move(Ins), Outs, std::move(Attrs));
    Node->setName(N.name());
    buildRegions(*GP.mutable_node(static_cast<int>(Index)), *Node, Desc);
    for (size_t I = 0; I < Outs.size(); ++I)
      if (Node->output(I)->name() != Outs[I])
        error(ErrorKind::Internal,
              Desc + ": output '" + Outs[I] + "' could not keep its name");
  }

  /// Builds the regions of Node from the graph attributes of N.
  void buildRegions(NodeProto &N, ir::Node &Node, const std::string &Desc) {
    for (AttributeProto &A : *N.mutable_attribute()) {
      if (attrProtoType(A) != AttributeProto::GRAPH)
        continue;
      std::vector<ir::TensorType> Args;
      if (Node.op() == ir::OpKind::Loop) {
        Args = {ir::TensorType(DType::I64, std::vector<ir::Dim>{}),
                ir::TensorType(DType::Bool, std::vector<ir::Dim>{})};
        for (size_t I = 2; I < Node.numExplicitInputs(); ++I)
          Args.push_back(Node.input(I) ? Node.input(I)->type()
                                       : ir::TensorType());
      } else if (Node.op() == ir::OpKind::Scan) {
        // Retyped (slices lose their scan axis) by ir::inferRegionTypes.
        for (size_t I = 0; I < Node.numExplicitInputs(); ++I)
          Args.push_back(Node.input(I) ? Node.input(I)->type()
                                       : ir::TensorType());
      }
      auto Body = std::make_shared<ir::Graph>();
      try {
        GraphBuilder(*A.mutable_g(), Src, *Body, this, &Node, std::move(Args))
            .build();
      } catch (Error &E) {
        E.addContext("in attribute '" + A.name() + "' of " + Desc);
        throw;
      }
      if (Body->name().empty())
        Body->setName(A.name());
      Node.setAttrByName(A.name(), ir::Attribute(std::move(Body)));
    }
  }

  static std::string arity(size_t Min, size_t Max) {
    if (Max == SIZE_MAX)
      return "at least " + std::to_string(Min);
    if (Min == Max)
      return std::to_string(Min);
    return std::to_string(Min) + " to " + std::to_string(Max);
  }

  /// Declared types of intermediate values (value_info). Entries that are
  /// not dense tensors of a known dtype are left out: they are hints.
  void applyValueInfo() {
    for (const auto &VI : GP.value_info()) {
      ir::Value *V = G.lookup(VI.name());
      if (!V || !V->producer() || !VI.has_type() ||
          !VI.type().has_tensor_type() ||
          !dtypeFromOnnx(VI.type().tensor_type().elem_type()))
        continue;
      V->setType(
          typeFromProto(VI.type(), Src, "value_info '" + VI.name() + "'"));
    }
  }

  void setOutputs() {
    std::unordered_set<std::string> Seen;
    std::vector<ir::Value *> Outs;
    for (const auto &VI : GP.output()) {
      std::string What = "graph output '" + VI.name() + "'";
      if (VI.name().empty())
        error(ErrorKind::Parse, "a graph output has no name");
      if (!Seen.insert(VI.name()).second)
        error(ErrorKind::Parse, What + " is listed twice");
      ir::Value *V = lookupScoped(VI.name());
      if (!V)
        error(ErrorKind::Parse,
              What + " is not produced by any node, input or initializer");
      // A type with nothing set (`type {}`, as exporters write for the
      // outputs of If branches) says nothing: inference types the value.
      bool Untyped = !VI.has_type() ||
                     VI.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET;
      if (!Untyped && V->producer()) {
        if (!VI.type().has_tensor_type())
          typeFromProto(VI.type(), Src, What); // Throws: not a tensor.
        if (VI.type().tensor_type().elem_type() != 0)
          V->setType(typeFromProto(VI.type(), Src, What));
      }
      Outs.push_back(V);
    }
    if (Outs.empty())
      error(ErrorKind::Parse, "the graph has no outputs");
    G.setOutputs(std::move(Outs));
  }

  GraphProto &GP;
  const ModelSource &Src;
  ir::Graph &G;
  GraphBuilder *Parent = nullptr;
  ir::Node *Owner = nullptr;
  std::vector<ir::TensorType> ArgTypes;
  std::unordered_set<std::string> AllNames;
};

std::unique_ptr<ir::Graph> importChecked(ModelProto &M, const ModelSource &Src,
                                         const OnnxImportOptions &O) {
  // Unsupported operators are reported all at once, before anything else.
  // An old model may use ops that the version converter rewrites into ours
  // (Upsample -> Resize): those are checked again after the conversion.
  std::exception_ptr Unsupported;
  if (M.has_graph()) {
    expandGradients(M, Src);
    expandContribOps(M, Src);
    expandTrainingOps(M, Src);
    try {
      checkOperators(M.graph(), Src);
    } catch (const Error &) {
      Unsupported = std::current_exception();
    }
  }
  int Opset = checkHeader(M, Src);
  if (Unsupported && Opset >= ConvertTarget)
    std::rethrow_exception(Unsupported);
  if (Opset < ConvertTarget) {
    try {
      convertOpset(M, Opset, ConvertTarget, Src);
    } catch (const Error &) {
      if (Unsupported)
        std::rethrow_exception(Unsupported);
      throw;
    }
    if (Unsupported)
      checkOperators(M.graph(), Src);
  }
  keepOpsetDefaults(M, Opset);
  OnnxGraphSignature Sig = lowerOnnxComposites(*M.mutable_graph(), Src);
  if (O.Signature)
    *O.Signature = std::move(Sig);
  auto G = std::make_unique<ir::Graph>();
  GraphBuilder(*M.mutable_graph(), Src, *G).build();
  try {
    if (O.InferTypes)
      ir::inferTypes(*G);
    if (O.Verify)
      ir::verifyOrThrow(*G);
  } catch (Error &E) {
    E.addContext("while importing ONNX model '" + Src.Name + "'");
    throw;
  }
  return G;
}

/// importChecked(), with anything that is not an nng::Error (a bug, or
/// memory exhaustion on a hostile model) turned into one naming the model.
std::unique_ptr<ir::Graph> importModel(ModelProto &M, const ModelSource &Src,
                                       const OnnxImportOptions &O) {
  try {
    return importChecked(M, Src, O);
  } catch (const Error &) {
    throw;
  } catch (const std::bad_alloc &) {
    modelError(ErrorKind::InvalidArgument, Src,
               "out of memory while importing (are the tensor shapes sane?)");
  } catch (const std::exception &E) {
    modelError(ErrorKind::Internal, Src,
               std::string("unexpected failure while importing: ") + E.what());
  }
}

} // namespace
} // namespace onnxio

std::unique_ptr<ir::Graph> importOnnx(const std::string &Path,
                                      const OnnxImportOptions &O) {
  onnxio::ModelSource Src{Path, O.BaseDir};
  if (Src.BaseDir.empty()) {
    std::filesystem::path P(Path);
    Src.BaseDir =
        P.has_parent_path() ? P.parent_path().string() : std::string(".");
  }
  ::onnx::ModelProto M;
  onnxio::parseModelFile(Path, M, Src);
  return onnxio::importModel(M, Src, O);
}

std::unique_ptr<ir::Graph> importOnnxFromBytes(std::string_view Bytes,
                                               std::string_view ModelName,
                                               const OnnxImportOptions &O) {
  onnxio::ModelSource Src{std::string(ModelName), O.BaseDir};
  ::onnx::ModelProto M;
  onnxio::parseModel(Bytes, M, Src);
  return onnxio::importModel(M, Src, O);
}

std::vector<std::string> onnxModelOperators(const std::string &Path) {
  onnxio::ModelSource Src{Path, ""};
  ::onnx::ModelProto M;
  onnxio::parseModel(onnxio::readWholeFile(Path), M, Src);
  std::set<std::string> Ops;
  onnxio::collectOps(M.graph(), Ops);
  return {Ops.begin(), Ops.end()};
}

std::vector<std::string> onnxModelFeatures(const std::string &Path) {
  onnxio::ModelSource Src{Path, ""};
  ::onnx::ModelProto M;
  onnxio::parseModel(onnxio::readWholeFile(Path), M, Src);
  return {}; // Sequence-typed graph I/O ("sequence-io") imports now.
}

std::vector<std::string> onnxRefusedFeatures() { return {}; }

bool onnxOperatorSupported(std::string_view Domain, std::string_view OpType) {
  bool Default = Domain.empty() || Domain == "ai.onnx";
  return ir::lookupOp(Default ? "" : Domain, OpType) ||
         onnxio::isOnnxValueOp(Domain, OpType) ||
         onnxio::isOnnxTrainingOp(Domain, OpType);
}

} // namespace nng::frontend
