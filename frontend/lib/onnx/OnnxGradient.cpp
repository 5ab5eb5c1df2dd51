//===- OnnxGradient.cpp - Expanding ONNX Gradient nodes on import ---------===//
//
// ai.onnx.preview.training.Gradient (version 1) computes d y / d xs for the
// graph it sits in; nngraph has no such operator, so the importer rewrites
// every Gradient node of the main graph into ordinary default-domain nodes
// before anything else reads the model (before the operator check and the
// opset conversion, so the new nodes are valid at the model's own opset).
//
// The rewrite is reverse-mode differentiation over the nodes on paths from
// xs to y: zs and the xs themselves are leaves (their producers are not
// differentiated), dy is seeded with ones of y's shape, contributions to a
// value used several times are added, and gradients of broadcast inputs are
// summed back to the input's shape: with static axes when ONNX shape
// inference (run on a copy) knows the shapes, otherwise with a shape-generic
// chain (Shape, Equal, NonZero, ReduceSum with axes as an input), which needs
// opset 13. Each op has one small rule in a table (OnnxGradientRules.cpp);
// an op without one is refused naming the Gradient node and the node it
// meets. xs that y does not depend on get zeros of their shape.
//
//===----------------------------------------------------------------------===//

#include "OnnxGradient.h"
#include "OnnxGradientRules.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <set>

namespace nng::frontend::onnxio {
namespace gradient {
namespace {

constexpr const char *TrainingDomain = "ai.onnx.preview.training";

bool isGradient(const NodeProto &N) {
  return N.domain() == TrainingDomain && N.op_type() == "Gradient";
}

/// The element type and shape a TypeProto gives.
ValueType typeOf(const ::onnx::TypeProto &T) {
  ValueType V;
  if (!T.has_tensor_type())
    return V;
  V.ElemType = T.tensor_type().elem_type();
  if (!T.tensor_type().has_shape())
    return V;
  V.RankKnown = true;
  for (const auto &D : T.tensor_type().shape().dim()) {
    DimInfo I;
    if (D.has_dim_value())
      I.Value = D.dim_value();
    else if (D.has_dim_param())
      I.Param = D.dim_param();
    V.Dims.push_back(I);
  }
  return V;
}

/// The types of every value ONNX shape inference can tell, from a copy of
/// M (best effort: what it cannot infer stays unknown).
std::unordered_map<std::string, ValueType> inferTypes(const ModelProto &M,
                                                      const ModelSource &Src) {
  ModelProto Copy = M;
  inferShapesGuarded(Copy, Src);
  std::unordered_map<std::string, ValueType> Types;
  const GraphProto &G = Copy.graph();
  for (const auto &T : G.initializer()) {
    ValueType V;
    V.ElemType = T.data_type();
    V.RankKnown = true;
    for (int64_t D : T.dims())
      V.Dims.push_back({D, ""});
    Types[T.name()] = V;
  }
  for (const auto *List : {&G.input(), &G.value_info(), &G.output()})
    for (const auto &VI : *List)
      if (VI.has_type() && !Types.count(VI.name()))
        Types[VI.name()] = typeOf(VI.type());
  return Types;
}

/// Raw bytes of the scalar V in ONNX type ElemType (floating point only);
/// empty when the type is not a floating-point one.
std::string scalarBytes(int ElemType, double V) {
  std::string B;
  auto Put = [&](const void *P, size_t N) {
    B.assign(static_cast<const char *>(P), N);
  };
  switch (ElemType) {
  case TensorProto::FLOAT: {
    float F = static_cast<float>(V);
    Put(&F, 4);
    break;
  }
  case TensorProto::DOUBLE:
    Put(&V, 8);
    break;
  case TensorProto::FLOAT16: {
    uint16_t H = V == 0 ? 0 : 0x3C00; // Only 0 and 1 are needed.
    Put(&H, 2);
    break;
  }
  case TensorProto::BFLOAT16: {
    uint16_t H = V == 0 ? 0 : 0x3F80;
    Put(&H, 2);
    break;
  }
  default:
    break;
  }
  return B;
}

/// Reorders M's nodes into dependency order (stable) when some node reads
/// a value a later node produces; leaves cycles to the importer.
void sortNodes(GraphProto &G) {
  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &O : G.node(I).output())
      if (!O.empty())
        Producer.emplace(O, I);
  std::vector<std::vector<int>> Users(G.node_size());
  std::vector<int> Pending(G.node_size(), 0);
  bool Sorted = true;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &In : G.node(I).input()) {
      auto It = Producer.find(In);
      if (In.empty() || It == Producer.end())
        continue;
      Sorted &= It->second < I;
      Users[It->second].push_back(I);
      ++Pending[I];
    }
  if (Sorted)
    return;
  std::vector<int> Order = stableTopologicalOrder(Users, Pending);
  if (Order.size() != static_cast<size_t>(G.node_size()))
    return;
  google::protobuf::RepeatedPtrField<NodeProto> Nodes;
  for (int I : Order)
    *Nodes.Add() = std::move(*G.mutable_node(I));
  G.mutable_node()->Swap(&Nodes);
}

} // namespace

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

std::string describeNode(const NodeProto &N, int Index) {
  std::string Op = isDefaultDomain(N.domain()) ? N.op_type()
                                               : N.domain() + "." + N.op_type();
  std::string Ref = "'" + N.name() + "'";
  if (N.name().empty()) {
    Ref = "#" + std::to_string(Index);
    if (N.output_size() && !N.output(0).empty())
      Ref += " -> '" + N.output(0) + "'";
  }
  return "node " + Ref + " (" + Op + ")";
}

const AttributeProto *findAttr(const NodeProto &N, const std::string &Name) {
  for (const AttributeProto &A : N.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

int64_t intAttr(const NodeProto &N, const std::string &Name, int64_t Default) {
  const AttributeProto *A = findAttr(N, Name);
  return A ? A->i() : Default;
}

AttributeProto intAttrProto(const std::string &Name, int64_t V) {
  AttributeProto A;
  A.set_name(Name);
  A.set_type(AttributeProto::INT);
  A.set_i(V);
  return A;
}

AttributeProto intsAttrProto(const std::string &Name,
                             const std::vector<int64_t> &V) {
  AttributeProto A;
  A.set_name(Name);
  A.set_type(AttributeProto::INTS);
  for (int64_t X : V)
    A.add_ints(X);
  return A;
}

Expander::Expander(const ModelProto &M, const NodeProto &Grad, int GradIndex,
                   const ModelSource &Src, int Opset,
                   std::unordered_set<std::string> &Used)
    : M(M), Graph(M.graph()), Grad(Grad), Src(Src), Opset(Opset), Used(Used),
      Desc(describeNode(Grad, GradIndex)),
      Prefix(Grad.name().empty() ? "Gradient" + std::to_string(GradIndex)
                                 : Grad.name()) {}

bool Expander::wants(const NodeProto &N, int I) const {
  return I < N.input_size() && !N.input(I).empty() && Need.count(N.input(I));
}

std::string Expander::op(const std::string &Op,
                         const std::vector<std::string> &Ins,
                         const std::string &Hint,
                         const std::vector<AttributeProto> &Attrs) {
  NodeProto &N = Out.emplace_back();
  N.set_op_type(Op);
  std::string Name = fresh(Hint);
  N.set_name(Name);
  for (const std::string &I : Ins)
    N.add_input(I);
  N.add_output(Name);
  for (const AttributeProto &A : Attrs)
    *N.add_attribute() = A;
  return Name;
}

std::string Expander::constInts(const std::vector<int64_t> &V) {
  AttributeProto A;
  A.set_name("value");
  A.set_type(AttributeProto::TENSOR);
  TensorProto &T = *A.mutable_t();
  T.set_data_type(TensorProto::INT64);
  T.add_dims(static_cast<int64_t>(V.size()));
  T.set_raw_data(V.data(), V.size() * sizeof(int64_t));
  return op("Constant", {}, "axes", {A});
}

const ValueType &Expander::typeOf(const std::string &Name) const {
  static const ValueType Unknown;
  auto It = Types.find(Name);
  return It == Types.end() ? Unknown : It->second;
}

std::string Expander::filledLike(const std::string &V, double Fill) {
  int ET = typeOf(V).ElemType;
  std::string Bytes = scalarBytes(ET, Fill);
  if (Bytes.empty())
    fail("'" + V + "' has " +
         (ET ? "element type " + onnxDataTypeName(ET)
             : std::string("an element type ONNX shape inference cannot "
                           "tell")) +
         "; gradients are computed for floating-point values only "
         "(declare the value's type in value_info if it is one)");
  AttributeProto A;
  A.set_name("value");
  A.set_type(AttributeProto::TENSOR);
  TensorProto &T = *A.mutable_t();
  T.set_data_type(ET);
  T.add_dims(1);
  T.set_raw_data(Bytes);
  std::string S = op("Shape", {V}, V + "_shape");
  return op("ConstantOfShape", {S}, Fill == 0 ? "zeros" : "ones", {A});
}

std::string Expander::reduceSum(const std::string &X,
                                const std::vector<int64_t> &Axes) {
  std::vector<AttributeProto> Attrs = {intAttrProto("keepdims", 1)};
  if (Opset < 13) {
    Attrs.push_back(intsAttrProto("axes", Axes));
    return op("ReduceSum", {X}, "reduce_sum", Attrs);
  }
  return op("ReduceSum", {X, constInts(Axes)}, "reduce_sum", Attrs);
}

std::string Expander::unsqueeze(const std::string &X,
                                const std::vector<int64_t> &Axes) {
  if (Opset < 13)
    return op("Unsqueeze", {X}, "unsqueeze", {intsAttrProto("axes", Axes)});
  return op("Unsqueeze", {X, constInts(Axes)}, "unsqueeze");
}

void Expander::fail(const std::string &Msg) const {
  modelError(ErrorKind::Unsupported, Src, Desc + ": " + Msg);
}

void Expander::failAt(const NodeProto &N, const std::string &Msg) const {
  fail("cannot differentiate " + describeNode(N, nodeIndex(N)) + ": " + Msg);
}

std::string Expander::fresh(const std::string &Hint) {
  std::string Base = Prefix + "/" + Hint;
  std::string Name = Base;
  for (int K = 1; Used.count(Name); ++K)
    Name = Base + "." + std::to_string(K);
  Used.insert(Name);
  return Name;
}

int Expander::nodeIndex(const NodeProto &N) const {
  for (int I = 0; I < Graph.node_size(); ++I)
    if (&Graph.node(I) == &N)
      return I;
  return -1;
}

void Expander::readAttributes() {
  auto Strings = [&](const char *Name, bool Required) {
    std::vector<std::string> V;
    const AttributeProto *A = findAttr(Grad, Name);
    if (!A) {
      if (Required)
        modelError(ErrorKind::Parse, Src,
                   Desc + ": required attribute '" + Name + "' is missing");
      return V;
    }
    if (A->type() != AttributeProto::STRINGS && A->type() != 0)
      modelError(ErrorKind::Parse, Src,
                 Desc + ": attribute '" + Name + "' must be STRINGS");
    V.assign(A->strings().begin(), A->strings().end());
    return V;
  };
  Xs = Strings("xs", true);
  Zs = Strings("zs", false);
  const AttributeProto *YA = findAttr(Grad, "y");
  if (!YA || YA->s().empty())
    modelError(ErrorKind::Parse, Src,
               Desc + ": required attribute 'y' (the differentiated value) "
                      "is missing");
  Y = YA->s();
  if (Xs.empty())
    modelError(ErrorKind::Parse, Src, Desc + ": attribute 'xs' is empty");
  if (Grad.output_size() != static_cast<int>(Xs.size()))
    modelError(ErrorKind::Parse, Src,
               Desc + " has " + std::to_string(Grad.output_size()) +
                   " outputs but 'xs' names " + std::to_string(Xs.size()) +
                   " values (one gradient per x)");
  if (Grad.input_size() != static_cast<int>(Xs.size() + Zs.size()))
    modelError(ErrorKind::Parse, Src,
               Desc + " has " + std::to_string(Grad.input_size()) +
                   " inputs; it takes the values of 'xs' then 'zs' (" +
                   std::to_string(Xs.size() + Zs.size()) + ")");
  // Every value the graph defines.
  std::unordered_set<std::string> Defined;
  for (const auto &T : Graph.initializer())
    Defined.insert(T.name());
  for (const auto &V : Graph.input())
    Defined.insert(V.name());
  for (const NodeProto &N : Graph.node())
    if (!isGradient(N))
      for (const std::string &O : N.output())
        Defined.insert(O);
  for (size_t I = 0; I < Xs.size() + Zs.size(); ++I) {
    bool IsX = I < Xs.size();
    const std::string &Name = IsX ? Xs[I] : Zs[I - Xs.size()];
    std::string What = std::string(IsX ? "xs" : "zs") + " value '" + Name + "'";
    if (!Defined.count(Name))
      modelError(ErrorKind::Parse, Src,
                 Desc + ": " + What +
                     " is not a graph input, initializer or node output");
    if (Grad.input(static_cast<int>(I)) != Name)
      modelError(ErrorKind::Unsupported, Src,
                 Desc + ": input " + std::to_string(I) + " is '" +
                     Grad.input(static_cast<int>(I)) + "' but the " + What +
                     " it stands for is another tensor; nngraph expands "
                     "Gradient only when its inputs are the tensors named "
                     "by 'xs' and 'zs'");
  }
  for (const std::string &Z : Zs)
    if (std::find(Xs.begin(), Xs.end(), Z) != Xs.end())
      modelError(ErrorKind::Parse, Src,
                 Desc + ": '" + Z + "' is in both 'xs' and 'zs'");
  if (!Defined.count(Y))
    modelError(ErrorKind::Parse, Src,
               Desc + ": y '" + Y +
                   "' is not a graph input, initializer or node output");
}

/// The graph's non-Gradient nodes in dependency order (stable; nodes on a
/// cycle are left out: the importer reports the cycle).
std::vector<int> Expander::topoOrder() const {
  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < Graph.node_size(); ++I)
    if (!isGradient(Graph.node(I)))
      for (const std::string &O : Graph.node(I).output())
        if (!O.empty())
          Producer.emplace(O, I);
  std::vector<std::vector<int>> Users(Graph.node_size());
  std::vector<int> Pending(Graph.node_size(), 0);
  for (int I = 0; I < Graph.node_size(); ++I) {
    if (isGradient(Graph.node(I)))
      continue;
    for (const std::string &In : Graph.node(I).input()) {
      auto It = Producer.find(In);
      if (It == Producer.end() || In.empty())
        continue;
      Users[It->second].push_back(I);
      ++Pending[I];
    }
  }
  // Gradient nodes neither produce nor read here: drop them from the order.
  std::vector<int> Order;
  for (int I : stableTopologicalOrder(Users, Pending))
    if (!isGradient(Graph.node(I)))
      Order.push_back(I);
  return Order;
}

/// Finds the values on paths from xs to y (Need) and the nodes to
/// differentiate (Active, last first). xs and zs are leaves.
void Expander::markNeeded(const std::vector<int> &Order) {
  std::unordered_set<std::string> Leaves(Xs.begin(), Xs.end());
  Leaves.insert(Zs.begin(), Zs.end());
  std::unordered_set<std::string> Dep(Xs.begin(), Xs.end());
  for (int I : Order) {
    const NodeProto &N = Graph.node(I);
    bool Any = false;
    for (const std::string &In : N.input())
      Any |= !In.empty() && Dep.count(In);
    if (Any)
      for (const std::string &O : N.output())
        if (!O.empty() && !Leaves.count(O))
          Dep.insert(O);
  }
  if (!Dep.count(Y))
    return;
  Need.insert(Y);
  for (auto It = Order.rbegin(); It != Order.rend(); ++It) {
    const NodeProto &N = Graph.node(*It);
    bool Needed = false;
    for (const std::string &O : N.output())
      Needed |= !O.empty() && Need.count(O) && !Leaves.count(O);
    if (!Needed)
      continue;
    const Rule *R = findRule(N);
    if (!R)
      fail("cannot differentiate " + describeNode(N, *It) +
           ", which lies between xs and y '" + Y +
           "': nngraph's Gradient expansion differentiates " + ruleList() +
           " (to hold the node's output constant, list it in 'zs')");
    if (N.output_size() != 1)
      failAt(N, "only its first output is differentiable");
    Active.push_back(*It);
    for (int I = 0; I < N.input_size(); ++I)
      if ((R->DiffInputs < 0 || I < R->DiffInputs) && Dep.count(N.input(I)))
        Need.insert(N.input(I));
  }
}

/// The summed gradient of V (its contributions added up), or "" if none.
std::string Expander::gradientOf(const std::string &V) {
  auto It = Parts.find(V);
  if (It == Parts.end() || It->second.empty())
    return "";
  std::vector<std::string> &P = It->second;
  while (P.size() > 1) {
    std::string S = op("Add", {P[0], P[1]}, "accumulate");
    P.erase(P.begin());
    P[0] = S;
  }
  return P[0];
}

std::vector<NodeProto> Expander::run() {
  readAttributes();
  Types = inferTypes(M, Src);
  if (Opset < 9)
    fail("expanding Gradient needs default-domain opset 9 or newer (the "
         "model imports opset " +
         std::to_string(Opset) + "); convert the model to a newer opset first");
  markNeeded(topoOrder());
  if (Need.count(Y))
    Parts[Y].push_back(filledLike(Y, 1.0));
  for (int I : Active) {
    const NodeProto &N = Graph.node(I);
    std::string G = gradientOf(N.output(0));
    if (G.empty())
      continue;
    std::vector<std::string> In(N.input_size());
    findRule(N)->Fn(*this, N, G, In);
    for (int K = 0; K < N.input_size(); ++K)
      if (wants(N, K) && !In[K].empty())
        Parts[N.input(K)].push_back(In[K]);
  }
  for (size_t I = 0; I < Xs.size(); ++I) {
    const std::string &O = Grad.output(static_cast<int>(I));
    if (O.empty())
      continue;
    std::string G = gradientOf(Xs[I]);
    if (G.empty())
      G = filledLike(Xs[I], 0.0);
    NodeProto &N = Out.emplace_back();
    N.set_op_type("Identity");
    N.set_name(fresh("d_" + Xs[I]));
    N.add_input(G);
    N.add_output(O);
  }
  return std::move(Out);
}

std::string Expander::sumToShapeOf(const std::string &G, const ValueType &GT,
                                   const std::string &X) {
  const ValueType &XT = typeOf(X);
  if (GT.RankKnown && XT.RankKnown && XT.Dims.size() <= GT.Dims.size()) {
    size_t R = GT.Dims.size(), Lead = R - XT.Dims.size();
    std::vector<int64_t> Axes;
    bool Known = true;
    for (size_t I = 0; I < R && Known; ++I) {
      if (I < Lead) {
        Axes.push_back(static_cast<int64_t>(I));
        continue;
      }
      const DimInfo &XD = XT.Dims[I - Lead], &GD = GT.Dims[I];
      if (XD.Value == 1) {
        if (GD.Value != 1)
          Axes.push_back(static_cast<int64_t>(I));
      } else if (XD.Value < 0 && GD.Value < 0 &&
                 (XD.Param.empty() || XD.Param != GD.Param)) {
        Known = false; // Either could be 1.
      }
    }
    if (Known) {
      if (Axes.empty())
        return G;
      std::string S = reduceSum(G, Axes);
      if (Lead)
        S = op("Reshape", {S, op("Shape", {X}, X + "_shape")}, "reshape");
      return S;
    }
  }
  if (Opset < 13)
    fail("cannot tell from the shapes whether '" + X +
         "' is broadcast (ONNX shape inference gives " +
         (XT.RankKnown ? "no static dims" : "no shape") +
         "); below opset 13 the expansion needs static shapes: give the "
         "graph inputs static shapes, or convert the model to opset 13+");
  // Shape-generic: reduce over the axes where X's shape, padded with
  // leading ones to G's rank, differs from G's.
  std::string SG = op("Shape", {G}, "grad_shape");
  std::string SX = op("Shape", {X}, X + "_shape");
  std::string Lead = op(
      "Sub", {op("Shape", {SG}, "grad_rank"), op("Shape", {SX}, X + "_rank")},
      "lead");
  AttributeProto One;
  One.set_name("value");
  One.set_type(AttributeProto::TENSOR);
  One.mutable_t()->set_data_type(TensorProto::INT64);
  One.mutable_t()->add_dims(1);
  int64_t OneV = 1;
  One.mutable_t()->set_raw_data(&OneV, sizeof OneV);
  std::string Ones = op("ConstantOfShape", {Lead}, "lead_ones", {One});
  std::string Padded =
      op("Concat", {Ones, SX}, "padded_shape", {intAttrProto("axis", 0)});
  std::string Diff =
      op("Not", {op("Equal", {Padded, SG}, "same_dims")}, "broadcast_dims");
  std::string Axes =
      op("Reshape", {op("NonZero", {Diff}, "nonzero"), constInts({-1})},
         "broadcast_axes");
  std::string S = op(
      "ReduceSum", {G, Axes}, "reduce_sum",
      {intAttrProto("keepdims", 1), intAttrProto("noop_with_empty_axes", 1)});
  return op("Reshape", {S, SX}, "reshape");
}

} // namespace gradient

void expandGradients(::onnx::ModelProto &M, const ModelSource &Src) {
  using namespace gradient;
  GraphProto &G = *M.mutable_graph();
  if (std::none_of(G.node().begin(), G.node().end(), isGradient))
    return;
  int Opset = -1;
  for (const auto &Imp : M.opset_import())
    if (isDefaultDomain(Imp.domain()))
      Opset = static_cast<int>(Imp.version());
  if (Opset < 1)
    return; // The importer reports the missing or invalid opset.
  std::unordered_set<std::string> Used = namesIn(G);
  for (int I = 0; I < G.node_size();) {
    if (!isGradient(G.node(I))) {
      ++I;
      continue;
    }
    std::vector<NodeProto> New =
        Expander(M, G.node(I), I, Src, Opset, Used).run();
    // Replace node I by New, in place.
    google::protobuf::RepeatedPtrField<NodeProto> Nodes;
    for (int K = 0; K < G.node_size(); ++K) {
      if (K != I) {
        *Nodes.Add() = std::move(*G.mutable_node(K));
        continue;
      }
      for (NodeProto &N : New)
        *Nodes.Add() = std::move(N);
    }
    G.mutable_node()->Swap(&Nodes);
    I += static_cast<int>(New.size());
  }
  sortNodes(G);
  bool DomainUsed =
      std::any_of(G.node().begin(), G.node().end(), [](const NodeProto &N) {
        return N.domain() == TrainingDomain;
      });
  if (!DomainUsed) {
    auto *Imports = M.mutable_opset_import();
    for (int I = Imports->size() - 1; I >= 0; --I)
      if (Imports->Get(I).domain() == TrainingDomain)
        Imports->DeleteSubrange(I, 1);
  }
}

} // namespace nng::frontend::onnxio
