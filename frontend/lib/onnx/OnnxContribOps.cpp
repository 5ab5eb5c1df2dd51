//===- OnnxContribOps.cpp - ONNX Runtime contrib ops on import -----------===//
//
// com.microsoft.MultiHeadAttention (ONNX Runtime's contrib op, opset 1 of
// its domain) with query [B, S, N*H], key [B, L, N*H] and value [B, L,
// N*Hv] (3-D, separate), num_heads N, optional bias [N*H + N*H + N*Hv]
// added to each, optional attention_bias (added to the scores, broadcast
// to [B, N, S, T]) and optional past_key / past_value [B, N, P, H]
// (concatenated before the new keys: T = P + L; present_key and
// present_value are the results) becomes
//
//   Qh = Transpose(Reshape(query + bq, [0, 0, N, -1]), [0, 2, 1, 3])
//   Kh = Concat(past_key, Transpose(Reshape(key + bk, ...)), axis 2)
//   Vh = Concat(past_value, Transpose(Reshape(value + bv, ...)), axis 2)
//   P  = Softmax(MatMul(Qh, Transpose(Kh, [0, 1, 3, 2])) * scale + bias)
//   Y  = Reshape(Transpose(MatMul(P, Vh), [0, 2, 1, 3]), [0, 0, -1])
//
// with scale the attribute, else 1 / sqrt(H) computed from Qh's shape
// (folded by -O2 when H is static): the pattern fuse-attention recognizes.
// Refused with the node named: packed QKV or KV (a 5-D query or key),
// head-split key/value (4-D), key_padding_mask, unidirectional = 1.
// The ranks are those the graph declares for graph inputs and value_info;
// a 3-D shape is assumed where no rank is declared, and a wrong one fails
// in the Reshape with its shapes named.
//
//===----------------------------------------------------------------------===//

#include "OnnxContribOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;

/// Builds the replacement's nodes, with names unique in the graph.
class Emitter {
public:
  Emitter(std::unordered_set<std::string> &Names, std::string Base)
      : Names(Names), Base(std::move(Base)) {}

  std::string fresh(const std::string &Hint) {
    std::string Name = Base + "/" + Hint;
    for (int I = 1; Names.count(Name); ++I)
      Name = Base + "/" + Hint + "_" + std::to_string(I);
    Names.insert(Name);
    return Name;
  }

  /// One node; Out empty: a fresh output named after Op.
  std::string node(const std::string &Op, std::vector<std::string> In,
                   std::string Out = "",
                   std::vector<AttributeProto> Attrs = {}) {
    NodeProto N;
    N.set_op_type(Op);
    N.set_name(fresh(Op + "_node"));
    for (std::string &I : In)
      N.add_input(I);
    if (Out.empty())
      Out = fresh(Op);
    N.add_output(Out);
    for (AttributeProto &A : Attrs)
      *N.add_attribute() = std::move(A);
    Nodes.push_back(std::move(N));
    return Out;
  }

  std::string ints(const std::vector<int64_t> &V, const std::string &Hint) {
    AttributeProto A;
    A.set_name("value");
    A.set_type(AttributeProto::TENSOR);
    ::onnx::TensorProto &T = *A.mutable_t();
    T.set_data_type(::onnx::TensorProto::INT64);
    T.add_dims(static_cast<int64_t>(V.size()));
    for (int64_t X : V)
      T.add_int64_data(X);
    return node("Constant", {}, fresh(Hint), {A});
  }

  static AttributeProto intsAttr(const std::string &Name,
                                 const std::vector<int64_t> &V) {
    AttributeProto A;
    A.set_name(Name);
    A.set_type(AttributeProto::INTS);
    for (int64_t X : V)
      A.add_ints(X);
    return A;
  }
  static AttributeProto intAttr(const std::string &Name, int64_t V) {
    AttributeProto A;
    A.set_name(Name);
    A.set_type(AttributeProto::INT);
    A.set_i(V);
    return A;
  }
  static AttributeProto floatAttr(const std::string &Name, float V) {
    AttributeProto A;
    A.set_name(Name);
    A.set_type(AttributeProto::FLOAT);
    A.set_f(V);
    return A;
  }

  std::vector<NodeProto> Nodes;

private:
  std::unordered_set<std::string> &Names;
  std::string Base;
};

/// The declared rank of value Name (graph inputs, value_info, outputs), or
/// -1 when none is declared.
int declaredRank(const GraphProto &G, const std::string &Name) {
  auto Of = [&](const ::onnx::ValueInfoProto &V) -> int {
    if (V.name() != Name || !V.type().has_tensor_type() ||
        !V.type().tensor_type().has_shape())
      return -1;
    return V.type().tensor_type().shape().dim_size();
  };
  for (const auto &V : G.input())
    if (int R = Of(V); R >= 0)
      return R;
  for (const auto &V : G.value_info())
    if (int R = Of(V); R >= 0)
      return R;
  for (const auto &I : G.initializer())
    if (I.name() == Name)
      return I.dims_size();
  return -1;
}

bool present(const NodeProto &N, int I) {
  return N.input_size() > I && !N.input(I).empty();
}

[[noreturn]] void refuse(const NodeProto &N, const ModelSource &Src,
                         const std::string &Why) {
  modelError(ErrorKind::Unsupported, Src,
             "node '" + N.name() + "' (com.microsoft.MultiHeadAttention) " +
                 Why + "; supported: 3-D query, key and value, optional "
                 "bias, attention_bias, past_key/past_value (re-export the "
                 "model without ONNX Runtime's attention fusion to run it)");
}

/// The default-domain nodes for MultiHeadAttention node N.
std::vector<NodeProto> expandMultiHeadAttention(
    const GraphProto &G, const NodeProto &N, const ModelSource &Src,
    std::unordered_set<std::string> &Names) {
  int64_t Heads = 0;
  float Scale = 0;
  for (const AttributeProto &A : N.attribute()) {
    if (A.name() == "num_heads")
      Heads = A.i();
    else if (A.name() == "scale")
      Scale = A.f();
    else if (A.name() == "unidirectional" && A.i() != 0)
      refuse(N, Src, "uses causal masking (unidirectional = 1)");
  }
  if (Heads <= 0)
    refuse(N, Src, "has no positive num_heads attribute");
  if (!present(N, 0) || !present(N, 1) || !present(N, 2))
    refuse(N, Src, "has no separate key and value (packed QKV or KV)");
  for (int I = 0; I < 3; ++I)
    if (int R = declaredRank(G, N.input(I)); R >= 0 && R != 3)
      refuse(N, Src, "takes a " + std::to_string(R) + "-D " +
                         (I == 0 ? "query" : I == 1 ? "key" : "value"));
  if (present(N, 4))
    refuse(N, Src, "uses a key_padding_mask");
  bool Past = present(N, 6) || present(N, 7);
  if (Past && !(present(N, 6) && present(N, 7)))
    refuse(N, Src, "has only one of past_key and past_value");
  if (N.input_size() > 8)
    refuse(N, Src, "has inputs past the eighth (past_sequence_length, "
                   "cache indirection)");

  Emitter E(Names, N.name().empty() ? N.output(0) : N.name());
  std::string Q = N.input(0), K = N.input(1), V = N.input(2);
  if (present(N, 3)) {
    AttributeProto Axis = Emitter::intAttr("axis", 0);
    NodeProto S;
    S.set_op_type("Split");
    S.set_name(E.fresh("Split_node"));
    S.add_input(N.input(3));
    std::string Parts[3] = {E.fresh("bias_q"), E.fresh("bias_k"),
                            E.fresh("bias_v")};
    for (const std::string &P : Parts)
      S.add_output(P);
    *S.add_attribute() = Axis;
    E.Nodes.push_back(std::move(S));
    Q = E.node("Add", {Q, Parts[0]});
    K = E.node("Add", {K, Parts[1]});
    V = E.node("Add", {V, Parts[2]});
  }
  std::string Split = E.ints({0, 0, Heads, -1}, "heads_shape");
  auto Heads4 = [&](const std::string &X) {
    std::string R = E.node("Reshape", {X, Split});
    return E.node("Transpose", {R}, "", {Emitter::intsAttr("perm", {0, 2, 1, 3})});
  };
  std::string Qh = Heads4(Q), Kh = Heads4(K), Vh = Heads4(V);
  if (Past) {
    Kh = E.node("Concat", {N.input(6), Kh}, "", {Emitter::intAttr("axis", 2)});
    Vh = E.node("Concat", {N.input(7), Vh}, "", {Emitter::intAttr("axis", 2)});
  }
  std::string Kt =
      E.node("Transpose", {Kh}, "", {Emitter::intsAttr("perm", {0, 1, 3, 2})});
  std::string Scores = E.node("MatMul", {Qh, Kt});
  std::string ScaleV;
  if (Scale != 0) {
    AttributeProto A;
    A.set_name("value");
    A.set_type(AttributeProto::TENSOR);
    A.mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
    A.mutable_t()->add_float_data(Scale);
    ScaleV = E.node("Constant", {}, E.fresh("scale"), {A});
  } else {
    // 1 / sqrt(H), H = Qh's last dim.
    std::string Shape = E.node("Shape", {Qh});
    std::string Last = E.ints({3}, "head_axis");
    std::string Dim = E.node("Gather", {Shape, Last});
    std::string H = E.node("Cast", {Dim}, "",
                           {Emitter::intAttr("to", ::onnx::TensorProto::FLOAT)});
    std::string Root = E.node("Sqrt", {H});
    AttributeProto One;
    One.set_name("value");
    One.set_type(AttributeProto::TENSOR);
    One.mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
    One.mutable_t()->add_float_data(1.0f);
    std::string OneV = E.node("Constant", {}, E.fresh("one"), {One});
    ScaleV = E.node("Div", {OneV, Root});
  }
  std::string Scaled = E.node("Mul", {Scores, ScaleV});
  if (present(N, 5))
    Scaled = E.node("Add", {Scaled, N.input(5)});
  std::string P =
      E.node("Softmax", {Scaled}, "", {Emitter::intAttr("axis", -1)});
  std::string Ctx = E.node("MatMul", {P, Vh});
  std::string Back =
      E.node("Transpose", {Ctx}, "", {Emitter::intsAttr("perm", {0, 2, 1, 3})});
  std::string Merge = E.ints({0, 0, -1}, "merged_shape");
  E.node("Reshape", {Back, Merge}, N.output(0));
  // present_key / present_value: the concatenated caches.
  for (int I = 1; I <= 2; ++I)
    if (N.output_size() > I && !N.output(I).empty())
      E.node("Identity", {I == 1 ? Kh : Vh}, N.output(I));
  if (N.output_size() > 3)
    refuse(N, Src, "has outputs past present_value");
  return std::move(E.Nodes);
}

} // namespace

void expandContribOps(::onnx::ModelProto &M, const ModelSource &Src) {
  GraphProto &G = *M.mutable_graph();
  bool Any = false;
  for (const NodeProto &N : G.node())
    Any = Any || (N.domain() == "com.microsoft" &&
                  N.op_type() == "MultiHeadAttention");
  if (!Any)
    return;
  std::unordered_set<std::string> Names;
  for (const auto &V : G.input())
    Names.insert(V.name());
  for (const auto &I : G.initializer())
    Names.insert(I.name());
  for (const NodeProto &N : G.node()) {
    Names.insert(N.name());
    for (const std::string &O : N.output())
      Names.insert(O);
  }
  google::protobuf::RepeatedPtrField<NodeProto> Out;
  for (NodeProto &N : *G.mutable_node()) {
    if (N.domain() != "com.microsoft" || N.op_type() != "MultiHeadAttention") {
      *Out.Add() = std::move(N);
      continue;
    }
    for (NodeProto &R : expandMultiHeadAttention(G, N, Src, Names))
      *Out.Add() = std::move(R);
  }
  G.mutable_node()->Swap(&Out);
}

} // namespace nng::frontend::onnxio
