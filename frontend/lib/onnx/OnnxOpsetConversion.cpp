//===- OnnxOpsetConversion.cpp - Old opsets through ONNX's converter -----===//
//
// Models older than opset 13 go through ONNX's version converter before
// import: ONNX shape inference first (several adapters need input shapes),
// initializer data kept out of the converter and restored by name, inputs
// the converter trusts checked first (it reads them unchecked), and two
// converter gaps patched (PRelu's per-channel slope before opset 7; Softmax
// before opset 13 on an input of unknown rank); and the defaults that
// changed after opset 13 made explicit (keepOpsetDefaults: RoiAlign's
// sampling before opset 16).
//
//===----------------------------------------------------------------------===//

#include "OnnxProto.h"
#include "nngraph/runtime/Error.h"

#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;

bool isDefaultDomain(const std::string &D) {
  return D.empty() || D == "ai.onnx";
}

/// The shapes ONNX's shape inference left in G (dims -1 where unknown), by
/// value name, and every name G uses.
struct GraphShapes {
  std::unordered_map<std::string, std::vector<int64_t>> Known;
  std::unordered_set<std::string> Names;

  explicit GraphShapes(const GraphProto &G) {
    auto NoteType = [&](const ::onnx::ValueInfoProto &V) {
      Names.insert(V.name());
      if (!V.type().has_tensor_type() || !V.type().tensor_type().has_shape())
        return;
      std::vector<int64_t> D;
      for (const auto &Dim : V.type().tensor_type().shape().dim())
        D.push_back(Dim.has_dim_value() ? Dim.dim_value() : -1);
      Known.emplace(V.name(), std::move(D));
    };
    for (const auto &V : G.input())
      NoteType(V);
    for (const auto &V : G.value_info())
      NoteType(V);
    for (const auto &V : G.output())
      NoteType(V);
    for (const auto &T : G.initializer()) {
      Names.insert(T.name());
      Known[T.name()] = std::vector<int64_t>(T.dims().begin(), T.dims().end());
    }
    for (const NodeProto &N : G.node())
      for (const std::string &O : N.output())
        Names.insert(O);
  }

  /// Base, or Base with "_" appended until no name in G is Base + a suffix.
  std::string fresh(std::string Base,
                    std::initializer_list<const char *> Suffixes) {
    auto Taken = [&] {
      for (const char *S : Suffixes)
        if (Names.count(Base + S))
          return true;
      return false;
    };
    while (Taken())
      Base += "_";
    for (const char *S : Suffixes)
      Names.insert(Base + S);
    return Base;
  }
};

/// PRelu before opset 7 applies a 1-D slope of C values along axis 1 (the
/// channels; PyTorch exports it so), while PRelu-7 broadcasts numpy-style,
/// along the last axis, and ONNX's converter calls the two compatible. So
/// such a slope is reshaped to [C, 1, ..., 1] before conversion. Uses the
/// shapes inferred on the model (ranks unknown: left alone).
void fixLegacyPRelu(ModelProto &M) {
  GraphProto &G = *M.mutable_graph();
  GraphShapes Shapes(G);
  auto &Known = Shapes.Known;
  auto &Names = Shapes.Names;
  google::protobuf::RepeatedPtrField<NodeProto> Nodes;
  for (NodeProto &N : *G.mutable_node()) {
    auto X = Known.find(N.input_size() == 2 ? N.input(0) : "");
    auto Slope = Known.find(N.input_size() == 2 ? N.input(1) : "");
    if (N.op_type() == "PRelu" && isDefaultDomain(N.domain()) &&
        X != Known.end() && Slope != Known.end() && X->second.size() > 2 &&
        Slope->second.size() == 1 && Slope->second[0] > 1 &&
        (X->second[1] == -1 || X->second[1] == Slope->second[0])) {
      std::string Base = N.input(1) + ".per_channel";
      while (Names.count(Base) || Names.count(Base + ".shape"))
        Base += "_";
      Names.insert(Base);
      NodeProto &C = *Nodes.Add();
      C.set_op_type("Constant");
      C.add_output(Base + ".shape");
      AttributeProto &A = *C.add_attribute();
      A.set_name("value");
      A.set_type(AttributeProto::TENSOR);
      ::onnx::TensorProto &T = *A.mutable_t();
      T.set_data_type(::onnx::TensorProto::INT64);
      T.add_dims(static_cast<int64_t>(X->second.size()) - 1);
      T.add_int64_data(Slope->second[0]);
      for (size_t I = 2; I < X->second.size(); ++I)
        T.add_int64_data(1);
      NodeProto &R = *Nodes.Add();
      R.set_op_type("Reshape");
      R.add_input(N.input(1));
      R.add_input(Base + ".shape");
      R.add_output(Base);
      N.set_input(1, Base);
    }
    *Nodes.Add() = std::move(N);
  }
  G.mutable_node()->Swap(&Nodes);
}

/// Softmax, LogSoftmax and Hardmax before opset 13 work on their input
/// flattened to 2-D at `axis`; ONNX's converter rewrites them for opset 13
/// from the input's rank and stops when shape inference did not find it
/// (a Reshape to a computed shape: PaddleOCR's recognizer). Such a node of
/// the main graph is given that flattening explicitly, Flatten(axis) ->
/// op(axis=1) -> Reshape(Shape(X)), with the Flatten's output declared
/// rank 2 (value_info), which is all the converter needs.
void flattenUnrankedSoftmax(ModelProto &M) {
  GraphProto &G = *M.mutable_graph();
  GraphShapes Shapes(G);
  std::unordered_map<std::string, int32_t> ElemType;
  for (const auto *L : {&G.input(), &G.value_info(), &G.output()})
    for (const auto &V : *L)
      if (V.type().has_tensor_type() && V.type().tensor_type().elem_type())
        ElemType[V.name()] = V.type().tensor_type().elem_type();
  google::protobuf::RepeatedPtrField<NodeProto> Nodes;
  for (NodeProto &N : *G.mutable_node()) {
    bool Softmax = N.op_type() == "Softmax" || N.op_type() == "LogSoftmax" ||
                   N.op_type() == "Hardmax";
    if (!Softmax || !isDefaultDomain(N.domain()) || N.input_size() != 1 ||
        N.output_size() != 1 || Shapes.Known.count(N.input(0))) {
      *Nodes.Add() = std::move(N);
      continue;
    }
    int64_t Axis = 1;
    for (const AttributeProto &A : N.attribute())
      if (A.name() == "axis")
        Axis = A.i();
    std::string X = N.input(0), Y = N.output(0);
    std::string Base = Shapes.fresh(Y, {".flat", ".flat_out", ".shape"});
    NodeProto &F = *Nodes.Add();
    F.set_op_type("Flatten");
    F.add_input(X);
    F.add_output(Base + ".flat");
    AttributeProto &FA = *F.add_attribute();
    FA.set_name("axis");
    FA.set_type(AttributeProto::INT);
    FA.set_i(Axis);
    ::onnx::ValueInfoProto &VI = *G.add_value_info();
    VI.set_name(Base + ".flat");
    auto &TT = *VI.mutable_type()->mutable_tensor_type();
    auto It = ElemType.find(X);
    TT.set_elem_type(It != ElemType.end() ? It->second
                                          : ::onnx::TensorProto::FLOAT);
    TT.mutable_shape()->add_dim();
    TT.mutable_shape()->add_dim();
    NodeProto &S = *Nodes.Add();
    S.set_op_type("Shape");
    S.add_input(X);
    S.add_output(Base + ".shape");
    N.set_input(0, Base + ".flat");
    N.set_output(0, Base + ".flat_out");
    for (AttributeProto &A : *N.mutable_attribute())
      if (A.name() == "axis")
        A.set_i(1);
    NodeProto R;
    R.set_op_type("Reshape");
    R.add_input(Base + ".flat_out");
    R.add_input(Base + ".shape");
    R.add_output(Y);
    *Nodes.Add() = std::move(N);
    *Nodes.Add() = std::move(R);
  }
  G.mutable_node()->Swap(&Nodes);
}

/// The first line of an exception message (ONNX appends context lines).
std::string firstLine(const char *What) {
  std::string S = What;
  if (size_t NL = S.find('\n'); NL != std::string::npos)
    S.resize(NL);
  return S;
}

/// ONNX's version converter (1.12) trusts its input: a graph output that
/// nothing defines is a null dereference in its graphProtoToGraph, and its
/// adapters index node inputs and attributes without checking. So the model
/// is checked first, as ONNX's checker checks nodes: every graph output and
/// node input is defined, every node is in the default domain and matches
/// its schema at opset From (input and output counts, attribute names and
/// types).
void checkBeforeConversion(const ModelProto &M, int From,
                           const ModelSource &Src) {
  const GraphProto &G = M.graph();
  std::unordered_set<std::string> Defined;
  for (const auto &V : G.input())
    Defined.insert(V.name());
  // Before IR version 4 every initializer is also a graph input (the
  // converter drops those that are not).
  for (const auto &T : G.initializer())
    if (M.ir_version() >= 4 || Defined.count(T.name()))
      Defined.insert(T.name());
    else
      modelError(ErrorKind::Parse, Src,
                 "initializer '" + T.name() +
                     "' is not a graph input, which IR version " +
                     std::to_string(M.ir_version()) + " requires");
  for (const NodeProto &N : G.node())
    for (const std::string &O : N.output())
      Defined.insert(O);
  for (const auto &V : G.output())
    if (V.name().empty() || !Defined.count(V.name()))
      modelError(ErrorKind::Parse, Src,
                 "graph output '" + V.name() +
                     "' is not produced by any node, input or initializer");
  for (int I = 0; I < G.node_size(); ++I) {
    const NodeProto &N = G.node(I);
    std::string Desc = "node ";
    if (N.name().empty())
      Desc += '#' + std::to_string(I);
    else
      Desc += "'" + N.name() + "'";
    Desc += " (" + N.op_type() + ")";
    for (const std::string &In : N.input())
      if (!In.empty() && !Defined.count(In))
        modelError(ErrorKind::Parse, Src,
                   Desc + ": input '" + In +
                       "' is not produced by any node, input or initializer");
    // ONNX 1.12's converter adapts every node by op_type, whatever its
    // domain.
    if (!isDefaultDomain(N.domain()))
      modelError(ErrorKind::Unsupported, Src,
                 Desc + ": operators outside the default domain ('" +
                     N.domain() +
                     "') cannot go through ONNX's version converter");
    const ::onnx::OpSchema *S =
        ::onnx::OpSchemaRegistry::Schema(N.op_type(), From, "");
    if (!S)
      modelError(ErrorKind::Parse, Src,
                 Desc + ": ONNX has no operator '" + N.op_type() +
                     "' at opset " + std::to_string(From));
    try {
      S->Verify(N);
    } catch (const std::exception &E) {
      modelError(ErrorKind::Parse, Src,
                 Desc + ": does not match ONNX's schema at opset " +
                     std::to_string(From) + ": " + firstLine(E.what()));
    }
  }
}

/// ONNX 1.12's Gemm adapter (opset 6 to 7) reads dims 0 and 1 of A's and
/// B's shapes without checking their rank (an out-of-bounds read, found by
/// fuzzing). Gemm's inputs are matrices at every opset, so a known shape of
/// another rank is refused here, after shape inference and before the
/// adapter runs.
void checkGemmRanks(const ModelProto &M, const ModelSource &Src) {
  const GraphProto &G = M.graph();
  const GraphShapes Shapes(G);
  for (int I = 0; I < G.node_size(); ++I) {
    const NodeProto &N = G.node(I);
    if (N.op_type() != "Gemm" || !isDefaultDomain(N.domain()))
      continue;
    for (int In = 0; In < std::min(N.input_size(), 2); ++In) {
      auto It = Shapes.Known.find(N.input(In));
      if (It == Shapes.Known.end() || It->second.size() == 2)
        continue;
      std::string Desc =
          N.name().empty() ? "#" + std::to_string(I) : "'" + N.name() + "'";
      modelError(ErrorKind::Parse, Src,
                 "node " + Desc + " (Gemm): input " + std::to_string(In) +
                     " ('" + N.input(In) + "') has rank " +
                     std::to_string(It->second.size()) +
                     "; Gemm multiplies matrices (rank 2)");
    }
  }
}

} // namespace

namespace {
void keepGraphDefaults(GraphProto &G, int Opset) {
  for (NodeProto &N : *G.mutable_node()) {
    for (AttributeProto &A : *N.mutable_attribute()) {
      if (A.has_g())
        keepGraphDefaults(*A.mutable_g(), Opset);
      for (GraphProto &Sub : *A.mutable_graphs())
        keepGraphDefaults(Sub, Opset);
    }
    if (Opset >= 16 || N.op_type() != "RoiAlign" ||
        !isDefaultDomain(N.domain()))
      continue;
    bool Has = false;
    for (const AttributeProto &A : N.attribute())
      Has = Has || A.name() == "coordinate_transformation_mode";
    if (Has)
      continue;
    AttributeProto &A = *N.add_attribute();
    A.set_name("coordinate_transformation_mode");
    A.set_type(AttributeProto::STRING);
    A.set_s("output_half_pixel");
  }
}
} // namespace

void keepOpsetDefaults(ModelProto &M, int Opset) {
  if (M.has_graph())
    keepGraphDefaults(*M.mutable_graph(), Opset);
}

/// Converts a model to opset Target with ONNX's version converter.
/// Initializer data is kept out of the converter (it copies every tensor
/// through its own IR, which does not know external data) and put back
/// afterwards by name, as are the types of sequence- and optional-typed
/// graph inputs and outputs, which the converter drops.
void convertOpset(ModelProto &M, int From, int Target, const ModelSource &Src) {
  checkBeforeConversion(M, From, Src);
  // Several adapters need input shapes (as ONNX's Python convert_version
  // provides): infer them first, while the initializers still hold data.
  // (Best effort: the converter says what it lacks.)
  inferShapesGuarded(M, Src);
  checkGemmRanks(M, Src);
  if (From < 7)
    fixLegacyPRelu(M);
  flattenUnrankedSoftmax(M);
  std::unordered_map<std::string, ::onnx::TensorProto> Saved;
  for (auto &T : *M.mutable_graph()->mutable_initializer()) {
    ::onnx::TensorProto Stub;
    Stub.set_name(T.name());
    Stub.set_data_type(T.data_type());
    *Stub.mutable_dims() = T.dims();
    std::string Name = T.name();
    Saved[Name] = std::move(T);
    T = std::move(Stub);
  }
  // The converter's IR keeps only tensor types: the main graph's sequence-
  // and optional-typed inputs and outputs lose theirs, so they are put back
  // by name too.
  std::unordered_map<std::string, ::onnx::TypeProto> IoTypes;
  for (const auto *L : {&M.graph().input(), &M.graph().output()})
    for (const auto &V : *L)
      if (V.type().has_sequence_type() || V.type().has_optional_type())
        IoTypes[V.name()] = V.type();
  ModelProto Out;
  try {
    Out = ::onnx::version_conversion::ConvertVersion(M, Target);
  } catch (const std::exception &E) {
    std::string Why = E.what();
    if (size_t NL = Why.find('\n'); NL != std::string::npos)
      Why.resize(NL);
    modelError(ErrorKind::Unsupported, Src,
               "opset " + std::to_string(From) +
                   " cannot be converted to opset " + std::to_string(Target) +
                   " by ONNX's version converter: " + Why);
  }
  for (auto &T : *Out.mutable_graph()->mutable_initializer()) {
    auto It = Saved.find(T.name());
    if (It != Saved.end())
      T = std::move(It->second);
  }
  for (auto *L : {Out.mutable_graph()->mutable_input(),
                  Out.mutable_graph()->mutable_output()})
    for (auto &V : *L)
      if (auto It = IoTypes.find(V.name());
          It != IoTypes.end() && !V.type().has_tensor_type())
        *V.mutable_type() = It->second;
  M = std::move(Out);
}

} // namespace nng::frontend::onnxio
