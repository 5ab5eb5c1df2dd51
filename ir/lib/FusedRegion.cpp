//===- FusedRegion.cpp - The body of nng.FusedRegion ----------------------===//
//
// The body attribute of a fused region is a graph in the text format on one
// line. Inference parses it, gives its inputs the node's input types and
// infers its nodes, so the node's output types are the body's outputs';
// inlining puts the body's nodes back in place of the region.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/FusedRegion.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include "InferUtils.h"

#include <mutex>
#include <sstream>
#include <unordered_map>

namespace nng::ir {

namespace {
/// "Where: ", or nothing for an empty Where.
std::string prefix(std::string_view Where) {
  return Where.empty() ? std::string() : std::string(Where) + ": ";
}
} // namespace

std::string printRegionBody(const Graph &Body) {
  PrintOptions O;
  O.InlineLimit = -1; // Bodies hold scalar constants only: always inline.
  std::string Text = printGraph(Body, O);
  // Newlines only separate statements: one line, single spaces.
  std::string Line;
  Line.reserve(Text.size());
  bool Space = false;
  for (char Ch : Text) {
    if (Ch == '\n') {
      Space = true;
      continue;
    }
    if (Space) {
      while (!Line.empty() && Line.back() == ' ')
        Line.pop_back();
      if (!Line.empty())
        Line += ' ';
      Space = false;
      if (Ch == ' ')
        continue;
    }
    if (Ch == ' ' && !Line.empty() && Line.back() == ' ')
      continue;
    Line += Ch;
  }
  while (!Line.empty() && Line.back() == ' ')
    Line.pop_back();
  return Line;
}

namespace {

/// A body as parsed, and whether its one output has the broadcast shape of
/// its inputs whatever they are: every node elementwise (operands
/// broadcast) or a row reduction that keeps its input's shape, every input
/// read. Inference then needs no instance of the body.
struct ParsedBody {
  std::unique_ptr<const Graph> G;
  bool Broadcasts = false;
};

bool broadcastsInputs(const Graph &G) {
  if (G.outputs().size() != 1)
    return false;
  for (const Value *In : G.inputs())
    if (!In->hasUses())
      return false;
  for (const auto &N : G.nodes()) {
    OpKind Op = N->op();
    if (!hasTrait(Op, OpTrait::Elementwise) && Op != OpKind::Add &&
        Op != OpKind::Mul && Op != OpKind::Max && Op != OpKind::Min &&
        Op != OpKind::Softmax && Op != OpKind::LogSoftmax &&
        Op != OpKind::LayerNormalization)
      return false;
    if (N->numOutputs() != 1 && Op != OpKind::LayerNormalization)
      return false;
  }
  return true;
}

/// Transparent hashing: bodies are looked up by string_view.
struct BodyHash {
  using is_transparent = void;
  size_t operator()(std::string_view S) const {
    return std::hash<std::string_view>()(S);
  }
};

/// Each body is parsed once per process (a backend compiling a graph for a
/// new input shape instantiates every region's body again). Holds Mu.
const ParsedBody &parsedBody(std::string_view Body, std::string_view Where) {
  static std::unordered_map<std::string, ParsedBody, BodyHash,
                            std::equal_to<>>
      Parsed;
  auto It = Parsed.find(Body);
  if (It != Parsed.end())
    return It->second;
  std::unique_ptr<Graph> G;
  try {
    G = parseGraph(Body, "fused region body");
  } catch (const Error &E) {
    fail(ErrorKind::Verify, prefix(Where), "the body of the fused region "
         "does not parse: ", E.what());
  }
  if (Parsed.size() >= 4096)
    Parsed.clear(); // Bounded.
  ParsedBody P;
  P.Broadcasts = broadcastsInputs(*G);
  P.G = std::move(G);
  return Parsed.emplace(std::string(Body), std::move(P)).first->second;
}

std::mutex &bodiesMutex() {
  static std::mutex Mu;
  return Mu;
}

} // namespace

std::unique_ptr<Graph> parseRegionBody(std::string_view Body,
                                       std::string_view Where) {
  std::lock_guard<std::mutex> Lock(bodiesMutex());
  return parsedBody(Body, Where).G->clone();
}

std::unique_ptr<Graph>
instantiateRegionBody(std::string_view Body,
                      const std::vector<const TensorType *> &InTypes,
                      std::string_view Where) {
  std::unique_ptr<Graph> G = parseRegionBody(Body, Where);
  if (G->inputs().size() != InTypes.size())
    fail(ErrorKind::Verify, prefix(Where), "the fused region has ",
         InTypes.size(), " inputs but its body ", G->inputs().size());
  for (size_t I = 0; I < InTypes.size(); ++I) {
    if (!InTypes[I])
      fail(ErrorKind::Verify, prefix(Where), "input ", I,
           " of a fused region is absent");
    if (InTypes[I]->dtype() != G->inputs()[I]->type().dtype())
      fail(ErrorKind::Verify, prefix(Where), "input ", I,
           " of the fused region is ", InTypes[I]->toString(),
           " but its body's %", G->inputs()[I]->name(), " is ",
           G->inputs()[I]->type().toString());
    G->inputs()[I]->setType(*InTypes[I]);
  }
  for (const auto &N : G->nodes())
    for (Value *V : N->outputs())
      V->setType(TensorType());
  inferTypes(*G);
  return G;
}

void inlineFusedRegion(Graph &G, Node *N) {
  std::vector<const TensorType *> In;
  for (Value *V : N->inputs())
    In.push_back(V ? &V->type() : nullptr);
  std::unique_ptr<Graph> Body =
      instantiateRegionBody(N->attrString("body"), In, N->describe());
  std::unordered_map<const Value *, Value *> Map;
  for (size_t I = 0; I < Body->inputs().size(); ++I)
    Map[Body->inputs()[I]] = N->input(I);
  for (Value *V : Body->initializers())
    Map[V] = G.addInitializer(G.uniqueName(V->name()), V->data());
  for (const auto &BN : Body->nodes()) {
    std::vector<Value *> Ins;
    for (Value *V : BN->inputs())
      Ins.push_back(V ? Map.at(V) : nullptr);
    std::vector<std::string> Names;
    for (Value *V : BN->outputs())
      Names.push_back(G.uniqueName(V->name()));
    Node *C = G.addNode(BN->op(), std::move(Ins), std::move(Names),
                        BN->attrs(), N);
    C->setName(BN->name());
    C->setScope(BN->scope());
    for (size_t I = 0; I < BN->numOutputs(); ++I) {
      C->output(I)->setType(BN->output(I)->type());
      Map[BN->output(I)] = C->output(I);
    }
  }
  std::vector<std::pair<Value *, std::string>> Renames;
  for (size_t I = 0; I < N->numOutputs(); ++I) {
    Value *To = Map.at(Body->outputs()[I]);
    if (To->isInput() || To->isInitializer() || To == N->output(I))
      fail(ErrorKind::Verify, N->describe(), ": output ", I,
           " of the fused region's body is not computed by its nodes");
    Renames.emplace_back(To, N->output(I)->name());
    G.replaceAllUsesWith(N->output(I), To);
  }
  G.eraseNode(N);
  for (auto &[V, Name] : Renames)
    if (!G.lookup(Name))
      G.rename(V, Name);
}

/// nng.FusedRegion(inputs...) -> outputs...: the body's output types for the
/// node's input types.
void inferFusedRegion(InferContext &C) {
  std::vector<const TensorType *> In;
  for (size_t I = 0; I < C.numInputs(); ++I)
    In.push_back(C.hasInput(I) ? &C.inputType(I) : nullptr);
  {
    // A body whose output is its inputs broadcast: no instance needed.
    std::lock_guard<std::mutex> Lock(bodiesMutex());
    const ParsedBody *P = nullptr;
    try {
      P = &parsedBody(C.attrString("body"), "");
    } catch (const Error &E) {
      C.fail(E.what());
    }
    bool Fast = P->Broadcasts && C.numOutputs() == 1 &&
                In.size() == P->G->inputs().size();
    for (size_t I = 0; I < In.size() && Fast; ++I)
      Fast = In[I] && In[I]->dtype() == P->G->inputs()[I]->type().dtype();
    if (Fast) {
      TensorType Out = infer::broadcastInputs(C);
      Out.setDType(P->G->outputs()[0]->type().dtype());
      C.setOutputType(0, Out);
      return;
    }
  }
  std::unique_ptr<Graph> G;
  try {
    G = instantiateRegionBody(C.attrString("body"), In, "");
  } catch (const Error &E) {
    C.fail(E.what());
  }
  if (G->outputs().size() != C.numOutputs())
    C.fail("the fused region has ", C.numOutputs(), " outputs but its body ",
           G->outputs().size());
  for (size_t I = 0; I < C.numOutputs(); ++I)
    C.setOutputType(I, G->outputs()[I]->type());
}

} // namespace nng::ir
