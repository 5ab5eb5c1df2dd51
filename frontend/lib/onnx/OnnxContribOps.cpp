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
// com.microsoft.Attention (BERT's fused form: input [B, S, D] times weights
// [D, 3 * N * H] plus bias, split in three) becomes the same after its one
// product; a 2-D 0/1 mask_index [B, T] adds (1 - mask) * mask_filter_value
// to the scores, as ONNX Runtime does. Refused with the node named:
// packed QKV or KV (a 5-D query or key), head-split key/value (4-D),
// key_padding_mask, unidirectional = 1, Attention's caches (past/present),
// rotary embeddings, unequal qkv_hidden_sizes, a 1-D mask_index (sequence
// lengths). The ranks are those the graph declares for graph inputs and
// value_info; a 3-D shape is assumed where no rank is declared, and a wrong
// one fails in the Reshape with its shapes named.
//
//===----------------------------------------------------------------------===//

#include "OnnxContribOps.h"
#include "OnnxGradientRules.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
// The attribute makers the Gradient expansion defined first.
using gradient::intAttrProto;
using gradient::intsAttrProto;

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
  bool Mha = N.op_type() == "MultiHeadAttention";
  modelError(ErrorKind::Unsupported, Src,
             "node '" + N.name() + "' (com.microsoft." + N.op_type() + ") " +
                 Why + "; supported: " +
                 (Mha ? "3-D query, key and value, optional bias, "
                        "attention_bias, past_key/past_value"
                      : "a 3-D input with weights and bias, a 2-D 0/1 "
                        "mask_index, attention_bias") +
                 " (re-export the model without ONNX Runtime's attention "
                 "fusion to run it)");
}

/// The float scalar constant V.
std::string floatConstant(Emitter &E, float V, const std::string &Hint) {
  AttributeProto A;
  A.set_name("value");
  A.set_type(AttributeProto::TENSOR);
  A.mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
  A.mutable_t()->add_float_data(V);
  return E.node("Constant", {}, E.fresh(Hint), {A});
}

/// What the attention core takes: Q, K, V as [B, S or L, heads * H],
/// optional caches [B, heads, P, H], an additive bias of the scores
/// (broadcast to [B, heads, S, T]) or two, the scale (0: 1/sqrt(H)).
struct CoreArgs {
  std::string Q, K, V;
  int64_t Heads = 0;
  float Scale = 0;
  std::vector<std::string> ScoreBias;
  std::string PastK, PastV;
  std::string Out, PresentK, PresentV; ///< Output names ("" none).
};

/// The standard ops of attention (the file comment's formulas).
void attentionCore(Emitter &E, const CoreArgs &A) {
  std::string Split = E.ints({0, 0, A.Heads, -1}, "heads_shape");
  auto Heads4 = [&](const std::string &X) {
    std::string R = E.node("Reshape", {X, Split});
    return E.node("Transpose", {R}, "",
                  {intsAttrProto("perm", {0, 2, 1, 3})});
  };
  std::string Qh = Heads4(A.Q), Kh = Heads4(A.K), Vh = Heads4(A.V);
  if (!A.PastK.empty()) {
    Kh = E.node("Concat", {A.PastK, Kh}, "", {intAttrProto("axis", 2)});
    Vh = E.node("Concat", {A.PastV, Vh}, "", {intAttrProto("axis", 2)});
  }
  std::string Kt =
      E.node("Transpose", {Kh}, "", {intsAttrProto("perm", {0, 1, 3, 2})});
  std::string Scores = E.node("MatMul", {Qh, Kt});
  std::string ScaleV;
  if (A.Scale != 0) {
    ScaleV = floatConstant(E, A.Scale, "scale");
  } else {
    // 1 / sqrt(H), H = Qh's last dim.
    std::string Shape = E.node("Shape", {Qh});
    std::string Last = E.ints({3}, "head_axis");
    std::string Dim = E.node("Gather", {Shape, Last});
    std::string H = E.node("Cast", {Dim}, "",
                           {intAttrProto("to", ::onnx::TensorProto::FLOAT)});
    std::string Root = E.node("Sqrt", {H});
    ScaleV = E.node("Div", {floatConstant(E, 1.0f, "one"), Root});
  }
  std::string Scaled = E.node("Mul", {Scores, ScaleV});
  for (const std::string &B : A.ScoreBias)
    Scaled = E.node("Add", {Scaled, B});
  std::string P =
      E.node("Softmax", {Scaled}, "", {intAttrProto("axis", -1)});
  std::string Ctx = E.node("MatMul", {P, Vh});
  std::string Back =
      E.node("Transpose", {Ctx}, "", {intsAttrProto("perm", {0, 2, 1, 3})});
  std::string Merge = E.ints({0, 0, -1}, "merged_shape");
  E.node("Reshape", {Back, Merge}, A.Out);
  if (!A.PresentK.empty())
    E.node("Identity", {Kh}, A.PresentK);
  if (!A.PresentV.empty())
    E.node("Identity", {Vh}, A.PresentV);
}

/// Splits X into three equal parts along Axis; returns their names.
std::vector<std::string> splitThree(Emitter &E, const std::string &X,
                                    int64_t Axis, const std::string &Hint) {
  NodeProto S;
  S.set_op_type("Split");
  S.set_name(E.fresh("Split_node"));
  S.add_input(X);
  std::vector<std::string> Parts = {E.fresh(Hint + "_q"), E.fresh(Hint + "_k"),
                                    E.fresh(Hint + "_v")};
  for (const std::string &P : Parts)
    S.add_output(P);
  *S.add_attribute() = intAttrProto("axis", Axis);
  E.Nodes.push_back(std::move(S));
  return Parts;
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

  if (N.output_size() > 3)
    refuse(N, Src, "has outputs past present_value");
  Emitter E(Names, N.name().empty() ? N.output(0) : N.name());
  CoreArgs A;
  A.Q = N.input(0);
  A.K = N.input(1);
  A.V = N.input(2);
  A.Heads = Heads;
  A.Scale = Scale;
  if (present(N, 3)) {
    std::vector<std::string> B = splitThree(E, N.input(3), 0, "bias");
    A.Q = E.node("Add", {A.Q, B[0]});
    A.K = E.node("Add", {A.K, B[1]});
    A.V = E.node("Add", {A.V, B[2]});
  }
  if (present(N, 5))
    A.ScoreBias.push_back(N.input(5));
  if (Past) {
    A.PastK = N.input(6);
    A.PastV = N.input(7);
  }
  A.Out = N.output(0);
  if (N.output_size() > 1)
    A.PresentK = N.output(1);
  if (N.output_size() > 2)
    A.PresentV = N.output(2);
  attentionCore(E, A);
  return std::move(E.Nodes);
}

/// The default-domain nodes for Attention node N (input [B, S, D], weights
/// [D, 3 * heads * H], bias [3 * heads * H]: the projections in one
/// product, then split).
std::vector<NodeProto> expandAttention(const GraphProto &G, const NodeProto &N,
                                       const ModelSource &Src,
                                       std::unordered_set<std::string> &Names) {
  int64_t Heads = 0;
  float Scale = 0, Filter = -10000.0f;
  for (const AttributeProto &A : N.attribute()) {
    if (A.name() == "num_heads")
      Heads = A.i();
    else if (A.name() == "scale")
      Scale = A.f();
    else if (A.name() == "mask_filter_value")
      Filter = A.f();
    else if ((A.name() == "unidirectional" || A.name() == "do_rotary" ||
              A.name() == "past_present_share_buffer") &&
             A.i() != 0)
      refuse(N, Src, "sets " + A.name());
    else if (A.name() == "qkv_hidden_sizes")
      refuse(N, Src, "has unequal Q, K and V sizes (qkv_hidden_sizes)");
  }
  if (Heads <= 0)
    refuse(N, Src, "has no positive num_heads attribute");
  if (!present(N, 0) || !present(N, 1))
    refuse(N, Src, "has no input or weights");
  if (int R = declaredRank(G, N.input(0)); R >= 0 && R != 3)
    refuse(N, Src, "takes a " + std::to_string(R) + "-D input");
  if (present(N, 4) || present(N, 6) || N.output_size() > 1)
    refuse(N, Src, "uses a past/present cache");
  if (N.input_size() > 7)
    refuse(N, Src, "has inputs past the seventh");
  Emitter E(Names, N.name().empty() ? N.output(0) : N.name());
  std::string Qkv = E.node("MatMul", {N.input(0), N.input(1)});
  if (present(N, 2))
    Qkv = E.node("Add", {Qkv, N.input(2)});
  std::vector<std::string> P = splitThree(E, Qkv, 2, "qkv");
  CoreArgs A;
  A.Q = P[0];
  A.K = P[1];
  A.V = P[2];
  A.Heads = Heads;
  A.Scale = Scale;
  A.Out = N.output(0);
  if (present(N, 3)) {
    // A 0/1 mask [B, T]: (1 - mask) * mask_filter_value, as [B, 1, 1, T].
    int R = declaredRank(G, N.input(3));
    if (R != 2)
      refuse(N, Src, R < 0 ? "has a mask_index of undeclared rank"
                           : "has a " + std::to_string(R) +
                                 "-D mask_index (sequence lengths)");
    std::string M = E.node("Cast", {N.input(3)}, "",
                           {intAttrProto("to", ::onnx::TensorProto::FLOAT)});
    std::string Off = E.node("Sub", {floatConstant(E, 1.0f, "one"), M});
    std::string Bias = E.node("Mul", {Off, floatConstant(E, Filter, "filter")});
    std::string Shape = E.ints({0, 1, 1, -1}, "mask_shape");
    A.ScoreBias.push_back(E.node("Reshape", {Bias, Shape}));
  }
  if (present(N, 5))
    A.ScoreBias.push_back(N.input(5));
  attentionCore(E, A);
  return std::move(E.Nodes);
}

} // namespace

void expandContribOps(::onnx::ModelProto &M, const ModelSource &Src) {
  GraphProto &G = *M.mutable_graph();
  bool Any = false;
  for (const NodeProto &N : G.node())
    Any = Any || (N.domain() == "com.microsoft" &&
                  (N.op_type() == "MultiHeadAttention" ||
                   N.op_type() == "Attention"));
  if (!Any)
    return;
  std::unordered_set<std::string> Names = namesIn(G);
  google::protobuf::RepeatedPtrField<NodeProto> Out;
  for (NodeProto &N : *G.mutable_node()) {
    bool Mha = N.op_type() == "MultiHeadAttention";
    if (N.domain() != "com.microsoft" || (!Mha && N.op_type() != "Attention")) {
      *Out.Add() = std::move(N);
      continue;
    }
    for (NodeProto &R : Mha ? expandMultiHeadAttention(G, N, Src, Names)
                            : expandAttention(G, N, Src, Names))
      *Out.Add() = std::move(R);
  }
  G.mutable_node()->Swap(&Out);
}

} // namespace nng::frontend::onnxio
