//===- OnnxComposites.cpp - Sequences and optionals as tensor parts ------===//
//
// Import, after opset conversion: every ONNX value that is not a tensor is
// split into tensor parts, in the main graph and in every If / Loop
// subgraph. A sequence S becomes (S, S.shapes): its packed (data, shapes)
// pair (ir/SequenceLayout.h). An optional O becomes its element's parts
// plus O.has, a bool scalar: (O, O.has) for a tensor, (O, O.shapes, O.has)
// for a sequence; an empty optional's element parts are empty tensors.
// (Partner names are made unique among all of the model's names.)
//
// Then: the sequence operators become the nng ops of the same names over
// pairs; Identity of a sequence or optional, Optional, OptionalGetElement
// and OptionalHasElement become Identity / Constant nodes over the parts;
// a sequence- or optional-typed graph input or output (of the model, a Loop
// body or an If branch) becomes one per part, and the If and Loop nodes
// take and give the parts in their place; SequenceMap becomes the Loop
// that ONNX's function body for it defines (SequenceAt per element,
// SequenceInsert per output). The main graph's splitting is reported in an
// OnnxGraphSignature. What the parts cannot carry is refused here with the
// node's name: sequences of sequences or of optionals, a sequence or
// optional read by a tensor operator, a Scan over them.
//
//===----------------------------------------------------------------------===//

#include "OnnxSequences.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TypeProto;
using ::onnx::ValueInfoProto;

/// A value split into parts, and the types of its parts.
struct Composite {
  OnnxValueKind Kind;
  std::vector<std::string> Parts;
};

/// The composites visible in one graph (and, through Parent, the graphs
/// around it). A name the graph defines as a tensor hides an outer one.
struct Scope {
  const Scope *Parent = nullptr;
  std::unordered_map<std::string, Composite> Map;
  std::unordered_set<std::string> Tensors;
  const Composite *find(const std::string &N) const {
    for (const Scope *S = this; S; S = S->Parent) {
      if (S->Tensors.count(N))
        return nullptr;
      if (auto It = S->Map.find(N); It != S->Map.end())
        return &It->second;
    }
    return nullptr;
  }
};

/// "node 'n' (Identity)", or "node -> 'y' (Identity)" when unnamed.
std::string describe(const NodeProto &N) {
  std::string Ref = !N.name().empty() ? "'" + N.name() + "'" : std::string();
  if (N.name().empty() && N.output_size() && !N.output(0).empty())
    Ref = "-> '" + N.output(0) + "'";
  return "node " + Ref + " (" + N.op_type() + ")";
}

bool isDefault(const NodeProto &N) {
  return N.domain().empty() || N.domain() == "ai.onnx";
}

TypeProto tensorType(int Elem, int Rank) {
  TypeProto T;
  T.mutable_tensor_type()->set_elem_type(Elem);
  if (Rank >= 0) {
    auto *S = T.mutable_tensor_type()->mutable_shape();
    for (int I = 0; I < Rank; ++I)
      S->add_dim();
  }
  return T;
}

/// Every name the model uses, subgraphs included.
void collectNames(const GraphProto &G, std::unordered_set<std::string> &Out) {
  std::unordered_set<std::string> Here = namesIn(G);
  Out.insert(Here.begin(), Here.end());
  for (const NodeProto &N : G.node())
    for (const auto &A : N.attribute()) {
      if (A.has_g())
        collectNames(A.g(), Out);
      for (const GraphProto &Sub : A.graphs())
        collectNames(Sub, Out);
    }
}

class Lowering {
public:
  Lowering(const ModelSource &Src, GraphProto &Main) : Src(Src) {
    collectNames(Main, Names);
  }

  /// Lowers G in scope S (whose Parent is the enclosing graph's). Returns
  /// the kinds of G's outputs (before splitting), for If and Loop.
  std::vector<OnnxValueKind> lowerGraph(GraphProto &G, Scope &S,
                                        OnnxGraphSignature *Sig,
                                        const std::string &Where);

private:
  std::string fresh(const std::string &Base) {
    std::string Name = Base;
    for (int K = 1; Names.count(Name); ++K)
      Name = Base + "." + std::to_string(K);
    Names.insert(Name);
    return Name;
  }

  [[noreturn]] void error(ErrorKind K, const std::string &Msg) {
    modelError(K, Src, Msg);
  }

  /// The composite kind and part types of an ONNX type; nullopt for a
  /// tensor. What names the value in messages.
  std::optional<std::pair<OnnxValueKind, std::vector<TypeProto>>>
  splitType(const TypeProto &T, const std::string &What);
  /// Parts named after Base for a value of kind K.
  Composite makeComposite(OnnxValueKind K, const std::string &Base);

  void lowerNode(NodeProto N, Scope &S, std::vector<NodeProto> &Out);
  void lowerSequenceMap(const NodeProto &N, Scope &S,
                        std::vector<NodeProto> &Out);
  void lowerIf(NodeProto &N, Scope &S, std::vector<NodeProto> &Out);
  void lowerLoop(NodeProto &N, Scope &S, std::vector<NodeProto> &Out);
  void wrapCarriedOptionals(const NodeProto &N, GraphProto &B,
                            const std::vector<OnnxValueKind> &Carried,
                            std::vector<OnnxValueKind> &BodyKinds);

  NodeProto identity(const std::string &In, const std::string &Out) {
    NodeProto N;
    N.set_op_type("Identity");
    N.add_input(In);
    N.add_output(Out);
    return N;
  }
  /// A Constant node: a bool scalar (Bool set) or an empty tensor of dtype
  /// Elem and rank Rank.
  NodeProto constant(const std::string &Out, int Elem, int Rank, bool Bool) {
    NodeProto N;
    N.set_op_type("Constant");
    N.add_output(Out);
    auto *A = N.add_attribute();
    A->set_name("value");
    A->set_type(::onnx::AttributeProto::TENSOR);
    auto *T = A->mutable_t();
    T->set_data_type(Elem);
    if (Rank < 0) {
      T->add_int32_data(Bool ? 1 : 0);
    } else {
      for (int I = 0; I < Rank; ++I)
        T->add_dims(0);
    }
    return N;
  }

  const ModelSource &Src;
  std::unordered_set<std::string> Names;
};

std::optional<std::pair<OnnxValueKind, std::vector<TypeProto>>>
Lowering::splitType(const TypeProto &T, const std::string &What) {
  auto SeqParts = [&](const TypeProto &Seq) {
    const TypeProto &E = Seq.sequence_type().elem_type();
    if (!E.has_tensor_type())
      error(ErrorKind::Unsupported,
            What + " is a sequence of non-tensors; nngraph supports "
                   "sequences of tensors only");
    return std::vector<TypeProto>{
        tensorType(E.tensor_type().elem_type(), 1),
        tensorType(::onnx::TensorProto::INT64, 1)};
  };
  if (T.has_sequence_type())
    return std::make_pair(OnnxValueKind::Sequence, SeqParts(T));
  if (!T.has_optional_type())
    return std::nullopt;
  const TypeProto &E = T.optional_type().elem_type();
  TypeProto Has = tensorType(::onnx::TensorProto::BOOL, 0);
  if (E.has_sequence_type()) {
    std::vector<TypeProto> P = SeqParts(E);
    P.push_back(Has);
    return std::make_pair(OnnxValueKind::OptionalSequence, P);
  }
  if (!E.has_tensor_type())
    error(ErrorKind::Unsupported,
          What + " is an optional of neither a tensor nor a sequence");
  const auto &TT = E.tensor_type();
  return std::make_pair(
      OnnxValueKind::OptionalTensor,
      std::vector<TypeProto>{
          tensorType(TT.elem_type(), TT.has_shape() ? TT.shape().dim_size() : -1),
          Has});
}

Composite Lowering::makeComposite(OnnxValueKind K, const std::string &Base) {
  Composite C{K, {Base}};
  if (K == OnnxValueKind::Sequence || K == OnnxValueKind::OptionalSequence)
    C.Parts.push_back(fresh(Base + ".shapes"));
  if (K == OnnxValueKind::OptionalTensor ||
      K == OnnxValueKind::OptionalSequence)
    C.Parts.push_back(fresh(Base + ".has"));
  return C;
}

std::vector<OnnxValueKind> Lowering::lowerGraph(GraphProto &G, Scope &S,
                                                OnnxGraphSignature *Sig,
                                                const std::string &Where) {
  // Inputs.
  std::vector<ValueInfoProto> Ins(G.input().begin(), G.input().end());
  G.clear_input();
  for (const ValueInfoProto &V : Ins) {
    auto Split = splitType(V.type(), Where + "input '" + V.name() + "'");
    if (!Split) {
      S.Tensors.insert(V.name());
      *G.add_input() = V;
      if (Sig)
        Sig->Inputs.push_back({V.name(), OnnxValueKind::Tensor, {V.name()}});
      continue;
    }
    Composite C = makeComposite(Split->first, V.name());
    for (size_t K = 0; K < C.Parts.size(); ++K) {
      ValueInfoProto *P = G.add_input();
      P->set_name(C.Parts[K]);
      *P->mutable_type() = Split->second[K];
    }
    if (Sig)
      Sig->Inputs.push_back({V.name(), C.Kind, C.Parts});
    S.Map[V.name()] = std::move(C);
  }
  // value_info of sequences and optionals: the parts get inferred types.
  std::vector<ValueInfoProto> Infos(G.value_info().begin(),
                                    G.value_info().end());
  G.clear_value_info();
  for (const ValueInfoProto &V : Infos)
    if (!V.type().has_sequence_type() && !V.type().has_optional_type())
      *G.add_value_info() = V;
  // Nodes.
  std::vector<NodeProto> Nodes(G.node().begin(), G.node().end());
  std::vector<NodeProto> Out;
  for (NodeProto &N : Nodes)
    lowerNode(std::move(N), S, Out);
  G.clear_node();
  for (NodeProto &N : Out)
    *G.add_node() = std::move(N);
  // Outputs.
  std::vector<ValueInfoProto> Outs(G.output().begin(), G.output().end());
  G.clear_output();
  std::vector<OnnxValueKind> Kinds;
  for (const ValueInfoProto &V : Outs) {
    const Composite *C = S.find(V.name());
    std::optional<std::pair<OnnxValueKind, std::vector<TypeProto>>> Split;
    if (V.has_type())
      Split = splitType(V.type(), Where + "output '" + V.name() + "'");
    if (!C) {
      if (Split)
        error(ErrorKind::Parse, Where + "output '" + V.name() + "' is a " +
                                    onnxValueKindName(Split->first) +
                                    " but its producer makes a tensor");
      *G.add_output() = V;
      Kinds.push_back(OnnxValueKind::Tensor);
      if (Sig)
        Sig->Outputs.push_back({V.name(), OnnxValueKind::Tensor, {V.name()}});
      continue;
    }
    OnnxValueKind Kind = C->Kind;
    std::vector<std::string> Parts = C->Parts;
    if (Split && Split->first != Kind) {
      // A sequence declared where an optional sequence is made (a Loop
      // that carries an optional in and a sequence out): its element.
      if (Split->first == OnnxValueKind::Sequence &&
          Kind == OnnxValueKind::OptionalSequence) {
        Parts.pop_back();
        Kind = Split->first;
      } else {
        error(ErrorKind::Parse, Where + "output '" + V.name() +
                                    "' is declared a " +
                                    onnxValueKindName(Split->first) +
                                    " but its producer makes a " +
                                    onnxValueKindName(Kind));
      }
    }
    for (size_t K = 0; K < Parts.size(); ++K) {
      ValueInfoProto *P = G.add_output();
      P->set_name(Parts[K]);
      if (Split)
        *P->mutable_type() = Split->second[K];
    }
    Kinds.push_back(Kind);
    if (Sig)
      Sig->Outputs.push_back({V.name(), Kind, Parts});
  }
  return Kinds;
}

void Lowering::lowerNode(NodeProto N, Scope &S, std::vector<NodeProto> &Out) {
  auto Find = [&](const std::string &Name) -> const Composite * {
    return Name.empty() ? nullptr : S.find(Name);
  };
  auto Define = [&](const std::string &Name, OnnxValueKind K) {
    Composite C = makeComposite(K, Name);
    S.Map[Name] = C;
    return C;
  };
  const SeqOpInfo *Info = isDefault(N) ? findSeqOp("", N.op_type()) : nullptr;
  const std::string &Op = N.op_type();
  bool Default = isDefault(N);

  if (Default && Op == "SequenceMap")
    return lowerSequenceMap(N, S, Out);
  if (Default && Op == "If")
    return lowerIf(N, S, Out);
  if (Default && Op == "Loop")
    return lowerLoop(N, S, Out);

  if (Default && (Op == "Identity" || Op == "OptionalGetElement") &&
      N.input_size() == 1 && N.output_size() == 1) {
    if (const Composite *In = Find(N.input(0))) {
      OnnxValueKind K = In->Kind;
      if (Op == "OptionalGetElement")
        K = K == OnnxValueKind::OptionalSequence ? OnnxValueKind::Sequence
            : K == OnnxValueKind::OptionalTensor ? OnnxValueKind::Tensor
                                                 : K;
      std::vector<std::string> InParts = In->Parts;
      if (K == OnnxValueKind::Tensor) {
        Out.push_back(identity(InParts[0], N.output(0)));
        S.Tensors.insert(N.output(0));
        return;
      }
      Composite C = Define(N.output(0), K);
      for (size_t P = 0; P < C.Parts.size(); ++P)
        Out.push_back(identity(InParts[P], C.Parts[P]));
      return;
    }
    if (Op == "OptionalGetElement") // Opset 18: a tensor passes through.
      N.set_op_type("Identity");
  }
  if (Default && Op == "OptionalHasElement") {
    const Composite *In = N.input_size() ? Find(N.input(0)) : nullptr;
    if (!In || (In->Kind != OnnxValueKind::OptionalTensor &&
                In->Kind != OnnxValueKind::OptionalSequence))
      error(ErrorKind::Unsupported,
            describe(N) + " reads '" + (N.input_size() ? N.input(0) : "") +
                "', which is not an optional; nngraph takes "
                "OptionalHasElement of optionals only");
    Out.push_back(identity(In->Parts.back(), N.output(0)));
    S.Tensors.insert(N.output(0));
    return;
  }
  if (Default && Op == "Optional") {
    if (N.input_size() && !N.input(0).empty()) {
      const Composite *In = Find(N.input(0));
      if (In && In->Kind != OnnxValueKind::Sequence)
        error(ErrorKind::Unsupported,
              describe(N) + " wraps '" + N.input(0) + "', a " +
                  onnxValueKindName(In->Kind) +
                  "; nngraph supports optionals of tensors and sequences");
      std::vector<std::string> InParts =
          In ? In->Parts : std::vector<std::string>{N.input(0)};
      Composite C = Define(N.output(0), In ? OnnxValueKind::OptionalSequence
                                           : OnnxValueKind::OptionalTensor);
      for (size_t P = 0; P < InParts.size(); ++P)
        Out.push_back(identity(InParts[P], C.Parts[P]));
      Out.push_back(constant(C.Parts.back(), ::onnx::TensorProto::BOOL, -1,
                             true));
      return;
    }
    const ::onnx::AttributeProto *TypeAttr = nullptr;
    for (const auto &A : N.attribute())
      if (A.name() == "type")
        TypeAttr = &A;
    if (!TypeAttr || !TypeAttr->has_tp())
      error(ErrorKind::Parse, describe(N) +
                                  " has neither an input nor a 'type' "
                                  "attribute; an empty Optional needs its type");
    TypeProto Opt;
    *Opt.mutable_optional_type()->mutable_elem_type() = TypeAttr->tp();
    auto Split = splitType(Opt, describe(N) + "'s 'type'");
    Composite C = Define(N.output(0), Split->first);
    for (size_t P = 0; P + 1 < C.Parts.size(); ++P) {
      const auto &TT = Split->second[P].tensor_type();
      Out.push_back(constant(C.Parts[P], TT.elem_type(),
                             TT.has_shape() ? TT.shape().dim_size() : 1,
                             false));
    }
    Out.push_back(
        constant(C.Parts.back(), ::onnx::TensorProto::BOOL, -1, false));
    return;
  }
  // Other subgraphs (Scan's body): lowered inside, tensors at their edges.
  for (auto &A : *N.mutable_attribute()) {
    if (!A.has_g())
      continue;
    Scope Sub;
    Sub.Parent = &S;
    for (OnnxValueKind K : lowerGraph(*A.mutable_g(), Sub, nullptr,
                                      describe(N) + " " + A.name() + ": "))
      if (K != OnnxValueKind::Tensor)
        error(ErrorKind::Unsupported,
              describe(N) + ": its '" + A.name() + "' graph gives a " +
                  onnxValueKindName(K) + "; only If and Loop pass sequences "
                  "and optionals out of a subgraph");
  }

  // The sequence operators, and any other op (which must read tensors).
  bool WantsSeq0 = Info && Info->ConsumesSeq;
  if (WantsSeq0) {
    const Composite *C = N.input_size() ? Find(N.input(0)) : nullptr;
    if (!C || C->Kind != OnnxValueKind::Sequence)
      error(ErrorKind::Parse,
            describe(N) + " reads '" + (N.input_size() ? N.input(0) : "") +
                "' as its sequence input, but it is " +
                (C ? std::string("a ") + onnxValueKindName(C->Kind)
                   : std::string("no sequence")));
  }
  for (int J = WantsSeq0 ? 1 : 0; J < N.input_size(); ++J)
    if (const Composite *C = Find(N.input(J)))
      error(ErrorKind::Unsupported,
            describe(N) + " reads the " + onnxValueKindName(C->Kind) + " '" +
                N.input(J) + "' as input " + std::to_string(J) +
                (Info ? ": sequences of sequences are not supported (nor "
                        "of optionals)"
                      : ": only the sequence and optional operators take "
                        "sequences and optionals in nngraph (they are "
                        "packed into tensors)"));
  if (!Info) {
    for (const std::string &O : N.output())
      S.Tensors.insert(O);
    Out.push_back(std::move(N));
    return;
  }
  if (N.output_size() == 0 || N.output(0).empty())
    error(ErrorKind::Parse, describe(N) + " has no output");
  std::vector<std::string> Ins(N.input().begin(), N.input().end());
  std::vector<std::string> Outs(N.output().begin(), N.output().end());
  if (Info->ConsumesSeq)
    Ins.insert(Ins.begin() + 1, Find(Ins[0])->Parts[1]);
  if (Info->ProducesSeq)
    Outs.insert(Outs.begin() + 1,
                Define(Outs[0], OnnxValueKind::Sequence).Parts[1]);
  else
    S.Tensors.insert(Outs[0]);
  N.clear_input();
  for (const std::string &In : Ins)
    N.add_input(In);
  N.clear_output();
  for (const std::string &O : Outs)
    N.add_output(O);
  N.set_domain("nng");
  Out.push_back(std::move(N));
}

void Lowering::lowerIf(NodeProto &N, Scope &S, std::vector<NodeProto> &Out) {
  std::vector<OnnxValueKind> Kinds[2];
  int Branch = 0;
  for (auto &A : *N.mutable_attribute()) {
    if (!A.has_g() || (A.name() != "then_branch" && A.name() != "else_branch"))
      continue;
    Scope Sub;
    Sub.Parent = &S;
    Kinds[Branch++ % 2] = lowerGraph(*A.mutable_g(), Sub, nullptr,
                                     describe(N) + " " + A.name() + ": ");
  }
  std::vector<std::string> Outs(N.output().begin(), N.output().end());
  N.clear_output();
  for (size_t I = 0; I < Outs.size(); ++I) {
    OnnxValueKind K = I < Kinds[0].size() ? Kinds[0][I] : OnnxValueKind::Tensor;
    OnnxValueKind K2 = I < Kinds[1].size() ? Kinds[1][I] : K;
    if (K != K2)
      error(ErrorKind::Unsupported,
            describe(N) + ": output " + std::to_string(I) + " is a " +
                onnxValueKindName(K) + " in one branch and a " +
                onnxValueKindName(K2) + " in the other");
    if (K == OnnxValueKind::Tensor || Outs[I].empty()) {
      S.Tensors.insert(Outs[I]);
      N.add_output(Outs[I]);
      continue;
    }
    Composite C = makeComposite(K, Outs[I]);
    for (const std::string &P : C.Parts)
      N.add_output(P);
    S.Map[Outs[I]] = std::move(C);
  }
  Out.push_back(std::move(N));
}

void Lowering::lowerLoop(NodeProto &N, Scope &S, std::vector<NodeProto> &Out) {
  // Inputs: M, cond, then the loop-carried initial values.
  std::vector<std::string> Ins(N.input().begin(), N.input().end());
  N.clear_input();
  size_t NumCarried = Ins.size() > 2 ? Ins.size() - 2 : 0;
  std::vector<OnnxValueKind> CarriedKinds;
  for (size_t I = 0; I < Ins.size(); ++I) {
    const Composite *C = Ins[I].empty() ? nullptr : S.find(Ins[I]);
    if (I >= 2)
      CarriedKinds.push_back(C ? C->Kind : OnnxValueKind::Tensor);
    if (!C) {
      N.add_input(Ins[I]);
      continue;
    }
    if (I < 2)
      error(ErrorKind::Parse, describe(N) + " reads the " +
                                  onnxValueKindName(C->Kind) + " '" + Ins[I] +
                                  "' as its " + (I ? "cond" : "trip count"));
    for (const std::string &P : C->Parts)
      N.add_input(P);
  }
  std::vector<OnnxValueKind> BodyKinds;
  for (auto &A : *N.mutable_attribute()) {
    if (A.name() != "body" || !A.has_g())
      continue;
    GraphProto &B = *A.mutable_g();
    // A carried value's kind is the initial value's: the body's declared
    // input types must agree (they may only be left out for tensors).
    for (size_t I = 0; I < NumCarried && I + 2 < size_t(B.input_size()); ++I) {
      const ValueInfoProto &V = B.input(static_cast<int>(I + 2));
      bool Declared = V.type().has_sequence_type() ||
                      V.type().has_optional_type();
      if (Declared != (CarriedKinds[I] != OnnxValueKind::Tensor))
        error(ErrorKind::Parse,
              describe(N) + ": body input '" + V.name() + "' and the " +
                  "initial value '" + Ins[I + 2] +
                  "' differ in kind (tensor or sequence/optional); declare "
                  "the body input's type");
    }
    Scope Sub;
    Sub.Parent = &S;
    BodyKinds = lowerGraph(B, Sub, nullptr, describe(N) + " body: ");
    wrapCarriedOptionals(N, B, CarriedKinds, BodyKinds);
  }
  // Outputs: the final carried values, then the scan outputs.
  std::vector<std::string> Outs(N.output().begin(), N.output().end());
  N.clear_output();
  for (size_t I = 0; I < Outs.size(); ++I) {
    OnnxValueKind K = I + 1 < BodyKinds.size() ? BodyKinds[I + 1]
                                               : OnnxValueKind::Tensor;
    if (I >= NumCarried && K != OnnxValueKind::Tensor)
      error(ErrorKind::Unsupported,
            describe(N) + ": scan output " + std::to_string(I - NumCarried) +
                " is a " + onnxValueKindName(K) +
                "; nngraph stacks tensors only");
    if (K == OnnxValueKind::Tensor || Outs[I].empty()) {
      S.Tensors.insert(Outs[I]);
      N.add_output(Outs[I]);
      continue;
    }
    Composite C = makeComposite(K, Outs[I]);
    for (const std::string &P : C.Parts)
      N.add_output(P);
    S.Map[Outs[I]] = C;
  }
  Out.push_back(std::move(N));
}

/// A Loop may carry an optional in and the bare value out (ONNX types the
/// carried value by the initial one; test_loop16_seq_none): the lowered
/// body's parts of such an output get a `has` part that is true.
void Lowering::wrapCarriedOptionals(const NodeProto &N, GraphProto &B,
                                    const std::vector<OnnxValueKind> &Carried,
                                    std::vector<OnnxValueKind> &BodyKinds) {
  auto PartCount = [](OnnxValueKind K) {
    return K == OnnxValueKind::Tensor             ? 1
           : K == OnnxValueKind::OptionalSequence ? 3
                                                  : 2;
  };
  int Pos = 0;
  for (size_t I = 0; I < BodyKinds.size(); ++I) {
    OnnxValueKind K = BodyKinds[I];
    Pos += PartCount(K);
    if (I == 0 || I > Carried.size() || Carried[I - 1] == K)
      continue;
    OnnxValueKind Want = Carried[I - 1];
    bool Wraps = (Want == OnnxValueKind::OptionalSequence &&
                  K == OnnxValueKind::Sequence) ||
                 (Want == OnnxValueKind::OptionalTensor &&
                  K == OnnxValueKind::Tensor);
    if (!Wraps)
      error(ErrorKind::Unsupported,
            describe(N) + ": loop-carried value " + std::to_string(I - 1) +
                " starts as a " + onnxValueKindName(Want) +
                " but the body gives a " + onnxValueKindName(K));
    std::string Has = fresh(B.output(Pos - 1).name() + ".has");
    *B.add_node() = constant(Has, ::onnx::TensorProto::BOOL, -1, true);
    // Insert the flag after the output's parts.
    ValueInfoProto V;
    V.set_name(Has);
    *V.mutable_type() = tensorType(::onnx::TensorProto::BOOL, 0);
    *B.add_output() = V;
    for (int J = B.output_size() - 1; J > Pos; --J)
      B.mutable_output()->SwapElements(J, J - 1);
    ++Pos;
    BodyKinds[I] = Want;
  }
}

/// SequenceMap as ONNX's function body defines it: a Loop over the first
/// input's length whose body takes element i of each sequence input (and
/// each tensor input whole), runs the SequenceMap body and appends each of
/// its outputs to the sequence carried for it.
void Lowering::lowerSequenceMap(const NodeProto &N, Scope &S,
                                std::vector<NodeProto> &Out) {
  const GraphProto *Body = nullptr;
  for (const auto &A : N.attribute())
    if (A.name() == "body" && A.has_g())
      Body = &A.g();
  if (!Body)
    error(ErrorKind::Parse, describe(N) + " has no 'body' graph");
  if (N.input_size() == 0 || N.input_size() != Body->input_size() ||
      N.output_size() != Body->output_size())
    error(ErrorKind::Parse,
          describe(N) + ": its body must take one input per node input and "
                        "give one output per node output");
  const Composite *First = S.find(N.input(0));
  if (!First || First->Kind != OnnxValueKind::Sequence)
    error(ErrorKind::Parse,
          describe(N) + ": input 0 '" + N.input(0) + "' must be a sequence");
  std::string Base = N.output(0);
  NodeProto Len;
  Len.set_op_type("SequenceLength");
  Len.add_input(N.input(0));
  std::string LenName = fresh(Base + ".map_len");
  Len.add_output(LenName);
  std::string CondName = fresh(Base + ".map_cond");
  std::vector<NodeProto> Pre{Len, constant(CondName, ::onnx::TensorProto::BOOL,
                                           -1, true)};
  NodeProto Loop;
  Loop.set_op_type("Loop");
  Loop.set_name(N.name());
  Loop.add_input(LenName);
  Loop.add_input(CondName);
  GraphProto L;
  L.set_name(Body->name());
  std::string Iter = fresh(Base + ".map_iter"),
              CondIn = fresh(Base + ".map_cond_in"),
              CondOut = fresh(Base + ".map_cond_out");
  ValueInfoProto *V = L.add_input();
  V->set_name(Iter);
  *V->mutable_type() = tensorType(::onnx::TensorProto::INT64, 0);
  V = L.add_input();
  V->set_name(CondIn);
  *V->mutable_type() = tensorType(::onnx::TensorProto::BOOL, 0);
  *L.add_node() = identity(CondIn, CondOut);
  L.add_output()->set_name(CondOut);
  *L.mutable_output(0)->mutable_type() =
      tensorType(::onnx::TensorProto::BOOL, 0);
  for (int J = 0; J < N.input_size(); ++J) {
    const Composite *C = S.find(N.input(J));
    if (C && C->Kind != OnnxValueKind::Sequence)
      error(ErrorKind::Unsupported, describe(N) + ": input " +
                                        std::to_string(J) + " is a " +
                                        onnxValueKindName(C->Kind));
    const std::string &BodyIn = Body->input(J).name();
    if (BodyIn == N.input(J))
      error(ErrorKind::Unsupported,
            describe(N) + ": body input " + std::to_string(J) +
                " has the name of the node input '" + BodyIn +
                "'; rename one of them");
    NodeProto E;
    if (C) {
      E.set_op_type("SequenceAt");
      E.add_input(N.input(J));
      E.add_input(Iter);
      E.add_output(BodyIn);
    } else {
      E = identity(N.input(J), BodyIn);
    }
    *L.add_node() = E;
  }
  for (const NodeProto &B : Body->node())
    *L.add_node() = B;
  for (const auto &I : Body->initializer())
    *L.add_initializer() = I;
  for (int K = 0; K < N.output_size(); ++K) {
    const ValueInfoProto &BO = Body->output(K);
    if (!BO.type().has_tensor_type() || !BO.type().tensor_type().elem_type())
      error(ErrorKind::Unsupported,
            describe(N) + ": body output '" + BO.name() +
                "' must be declared a tensor with an element type (the "
                "output sequence's element type)");
    int Elem = BO.type().tensor_type().elem_type();
    TypeProto SeqT;
    *SeqT.mutable_sequence_type()->mutable_elem_type() =
        tensorType(Elem, -1);
    std::string Empty = fresh(N.output(K) + ".map_empty");
    NodeProto SE;
    SE.set_op_type("SequenceEmpty");
    SE.add_output(Empty);
    auto *A = SE.add_attribute();
    A->set_name("dtype");
    A->set_type(::onnx::AttributeProto::INT);
    A->set_i(Elem);
    Pre.push_back(SE);
    Loop.add_input(Empty);
    std::string AccIn = fresh(N.output(K) + ".map_acc_in"),
                AccOut = fresh(N.output(K) + ".map_acc_out");
    V = L.add_input();
    V->set_name(AccIn);
    *V->mutable_type() = SeqT;
    NodeProto Ins;
    Ins.set_op_type("SequenceInsert");
    Ins.add_input(AccIn);
    Ins.add_input(BO.name());
    Ins.add_output(AccOut);
    *L.add_node() = Ins;
    V = L.add_output();
    V->set_name(AccOut);
    *V->mutable_type() = SeqT;
    Loop.add_output(N.output(K));
  }
  auto *BodyAttr = Loop.add_attribute();
  BodyAttr->set_name("body");
  BodyAttr->set_type(::onnx::AttributeProto::GRAPH);
  *BodyAttr->mutable_g() = std::move(L);
  Pre.push_back(std::move(Loop));
  for (NodeProto &P : Pre)
    lowerNode(std::move(P), S, Out);
}

} // namespace

bool isOnnxValueOp(std::string_view Domain, std::string_view OpType) {
  if (!Domain.empty() && Domain != "ai.onnx")
    return false;
  return isOnnxSequenceOp(Domain, OpType) || OpType == "Optional" ||
         OpType == "OptionalGetElement" || OpType == "OptionalHasElement" ||
         OpType == "SequenceMap";
}

OnnxGraphSignature lowerOnnxComposites(::onnx::GraphProto &GP,
                                       const ModelSource &Src) {
  OnnxGraphSignature Sig;
  Lowering L(Src, GP);
  Scope Main;
  L.lowerGraph(GP, Main, &Sig, "graph ");
  return Sig;
}

} // namespace nng::frontend::onnxio
