//===- OnnxSequences.cpp - ONNX sequences <-> packed pairs ---------------===//
//
// Import: the table of ONNX sequence operators; OnnxComposites.cpp splits
// sequence values into (S, S.shapes) pairs and rewrites the operators into
// the nng ops of the same names over pairs.
//
// Export: the nng ops are written back as the standard operators, one
// sequence value per pair, named after the data half, so import -> export
// -> import gives the same graph. Pairs of constants (constant folding
// evaluates sequence ops too) are written as a SequenceConstruct of
// Constants.
//
//===----------------------------------------------------------------------===//

#include "OnnxSequences.h"
#include "nngraph/ir/SequenceLayout.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ir::OpKind;

constexpr const char *IoMessage =
    "sequence-typed graph inputs and outputs are not supported (nngraph "
    "keeps sequences inside a graph, as packed (data, shapes) tensor pairs); "
    "feed and return tensors";

bool consumesSequence(OpKind K) {
  switch (K) {
  case OpKind::SequenceInsert:
  case OpKind::SequenceErase:
  case OpKind::SequenceAt:
  case OpKind::SequenceLength:
  case OpKind::ConcatFromSequence:
    return true;
  default:
    return false;
  }
}

/// True when inputs 0 and 1 of N are outputs 0 and 1 of one sequence op.
bool readsProducedPair(const ir::Node &N) {
  const ir::Value *D = N.input(0), *S = N.input(1);
  return D && S && D->producer() && D->producer() == S->producer() &&
         producesSequence(D->producer()->op()) && D->producerIndex() == 0 &&
         S->producerIndex() == 1;
}

/// Builds, before N, the nodes that make the constant pair (DV, SV): one
/// Constant per element and a SequenceConstruct, or a SequenceEmpty.
std::pair<ir::Value *, ir::Value *>
materializeConstantPair(ir::Graph &G, ir::Node *N, const ir::Value *D,
                        const rt::Tensor &DV, const rt::Tensor &SV) {
  std::string Why;
  auto L = DV.rank() == 1 && SV.rank() == 1 && SV.dtype() == DType::I64
               ? ir::decodeSequenceShapes(SV.toIntVector(), DV.numel(), Why)
               : std::nullopt;
  if (!L)
    fail(ErrorKind::InvalidArgument, N->describe(),
         ": the constant sequence pair it reads is malformed",
         Why.empty() ? std::string() : ": " + Why);
  std::string Base = D->name() + ".seq";
  std::vector<ir::Value *> Elems;
  rt::Tensor Flat = DV.contiguous();
  for (size_t K = 0; K < L->size(); ++K) {
    ir::AttrMap A;
    A.set("value", ir::Attribute(Flat.slice(0, L->Offsets[K], L->Offsets[K + 1])
                                     .reshape(L->Shapes[K])
                                     .clone()));
    ir::Node *C = G.addNode(OpKind::Constant, {},
                            {G.uniqueName(Base + "." + std::to_string(K))},
                            std::move(A), N);
    C->output()->setType(ir::TensorType(DV.dtype(), L->Shapes[K]));
    Elems.push_back(C->output());
  }
  ir::AttrMap A;
  OpKind K = OpKind::SequenceConstruct;
  if (Elems.empty()) {
    K = OpKind::SequenceEmpty;
    A.set("dtype",
          ir::Attribute(static_cast<int64_t>(dtypeToOnnx(DV.dtype()))));
  }
  ir::Node *P =
      G.addNode(K, Elems, {G.uniqueName(Base), G.uniqueName(Base + ".shapes")},
                std::move(A), N);
  std::vector<ir::TensorType> Types = ir::inferNodeTypes(*P);
  P->output(0)->setType(Types[0]);
  P->output(1)->setType(Types[1]);
  return {P->output(0), P->output(1)};
}

} // namespace

static constexpr SeqOpInfo SeqOps[] = {
    {"SequenceEmpty", false, true},   {"SequenceConstruct", false, true},
    {"SequenceInsert", true, true},   {"SequenceErase", true, true},
    {"SequenceAt", true, false},      {"SequenceLength", true, false},
    {"SplitToSequence", false, true}, {"ConcatFromSequence", true, false},
};

const SeqOpInfo *findSeqOp(std::string_view Domain, std::string_view Op) {
  if (!Domain.empty() && Domain != "ai.onnx")
    return nullptr;
  for (const SeqOpInfo &I : SeqOps)
    if (I.Name == Op)
      return &I;
  return nullptr;
}

bool isOnnxSequenceOp(std::string_view Domain, std::string_view OpType) {
  return findSeqOp(Domain, OpType) != nullptr;
}

bool isSequenceOp(OpKind K) {
  return consumesSequence(K) || producesSequence(K) || K == OpKind::SequenceAt;
}

bool producesSequence(OpKind K) {
  switch (K) {
  case OpKind::SequenceEmpty:
  case OpKind::SequenceConstruct:
  case OpKind::SequenceInsert:
  case OpKind::SequenceErase:
  case OpKind::SplitToSequence:
    return true;
  default:
    return false;
  }
}

/// The first sequence op inside a region of G's nodes (any depth), or null.
const ir::Node *sequenceOpInRegion(const ir::Graph &G) {
  for (const auto &N : G.nodes())
    for (const ir::Graph *R : N->regions()) {
      for (const auto &M : R->nodes())
        if (isSequenceOp(M->op()))
          return M.get();
      if (const ir::Node *M = sequenceOpInRegion(*R))
        return M;
    }
  return nullptr;
}

void prepareSequencesForOnnx(ir::Graph &G) {
  // Pairs that cross a region's edge (If outputs, Loop-carried values)
  // would need one sequence value per pair there; not written yet.
  if (const ir::Node *N = sequenceOpInRegion(G))
    fail(ErrorKind::Unsupported, N->describe(),
         ": cannot export to ONNX: sequence ops inside If/Loop bodies do not "
         "export back yet (their pairs cross the region's edge); keep such "
         "models in ONNX or the .nng text format");
  std::vector<ir::Node *> Nodes;
  for (const auto &N : G.nodes())
    if (consumesSequence(N->op()))
      Nodes.push_back(N.get());
  std::map<std::pair<const ir::Value *, const ir::Value *>,
           std::pair<ir::Value *, ir::Value *>>
      Made;
  std::vector<ir::Value *> Replaced;
  for (ir::Node *N : Nodes) {
    if (readsProducedPair(*N))
      continue;
    ir::Value *D = N->input(0), *S = N->input(1);
    const rt::Tensor *DV = ir::constantValue(D);
    const rt::Tensor *SV = ir::constantValue(S);
    if (!DV || !SV)
      fail(ErrorKind::Unsupported, N->describe(),
           ": cannot export to ONNX: its sequence pair (%", D ? D->name() : "?",
           ", %", S ? S->name() : "?",
           ") is not the output pair of a sequence op (nor two constants); "
           "ONNX has no way to make a sequence from two tensors");
    auto [It, New] = Made.try_emplace({D, S});
    if (New)
      It->second = materializeConstantPair(G, N, D, *DV, *SV);
    N->setInput(0, It->second.first);
    N->setInput(1, It->second.second);
    Replaced.push_back(D);
    Replaced.push_back(S);
  }
  // Initializers that only held a constant pair are not written.
  for (ir::Value *V : Replaced)
    if (V->isInitializer() && !V->hasUses() && !G.isOutput(V))
      G.eraseValue(V);
  for (const auto &N : G.nodes()) {
    if (!producesSequence(N->op()))
      continue;
    for (unsigned K = 0; K < 2; ++K) {
      const ir::Value *V = N->output(K);
      const char *Half = K == 0 ? "data" : "shapes";
      if (G.isOutput(V))
        fail(ErrorKind::Unsupported, N->describe(),
             ": cannot export to ONNX: the ", Half, " half %", V->name(),
             " of its sequence is a graph output; ", IoMessage);
      for (const ir::Use &U : V->uses())
        if (!consumesSequence(U.User->op()) || U.Index != K)
          fail(ErrorKind::Unsupported, N->describe(),
               ": cannot export to ONNX: the ", Half, " half %", V->name(),
               " of its sequence is read as a tensor by ", U.User->describe(),
               "; in ONNX only the sequence operators read sequences");
    }
  }
}

void sequenceNodeToProto(const ir::Node &N, ::onnx::NodeProto &P) {
  P.set_op_type(std::string(N.schema().Name));
  if (!N.name().empty())
    P.set_name(N.name());
  bool Consumes = consumesSequence(N.op()), Produces = producesSequence(N.op());
  size_t NumIn = N.numInputs();
  while (NumIn > 0 && !N.input(NumIn - 1))
    --NumIn;
  for (size_t I = 0; I < NumIn; ++I)
    if (!(Consumes && I == 1))
      P.add_input(N.input(I) ? N.input(I)->name() : "");
  for (size_t I = 0; I < N.numOutputs(); ++I)
    if (!(Produces && I == 1))
      P.add_output(N.output(I)->name());
  for (const auto &[Name, A] : N.attrs())
    attributeToProto(Name, A, *P.add_attribute());
}

} // namespace nng::frontend::onnxio
