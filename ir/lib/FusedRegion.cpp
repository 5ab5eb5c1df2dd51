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


#include <algorithm>
#include <mutex>
#include <optional>
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

/// A body as parsed, and whether its nodes are all ones whose result shapes
/// simple rules give (elementwise with broadcasting, Transpose, row
/// reductions that keep their input's shape): inference then needs no
/// instance of the body (bodyShapes).
struct ParsedBody {
  std::unique_ptr<const Graph> G;
  bool Simple = false;
};

bool simpleBody(const Graph &G) {
  for (const auto &N : G.nodes()) {
    OpKind Op = N->op();
    bool Row = Op == OpKind::Softmax || Op == OpKind::LogSoftmax ||
               Op == OpKind::LayerNormalization;
    bool Broadcast = hasTrait(Op, OpTrait::Elementwise) || Op == OpKind::Add ||
                     Op == OpKind::Mul || Op == OpKind::Max ||
                     Op == OpKind::Min;
    if (!Row && !Broadcast && Op != OpKind::Transpose)
      return false;
  }
  return true;
}

/// The shapes of Body's outputs at static input shapes In, by the simple
/// rules (simpleBody); nullopt when a shape is not static or operands do
/// not broadcast (full inference then says why).
std::optional<std::vector<Shape>>
bodyShapes(const Graph &Body, const std::vector<const TensorType *> &In) {
  std::unordered_map<const Value *, Shape> S;
  for (size_t I = 0; I < In.size(); ++I) {
    std::optional<Shape> Sh = In[I] ? In[I]->staticShape() : std::nullopt;
    if (!Sh)
      return std::nullopt;
    S.emplace(Body.inputs()[I], std::move(*Sh));
  }
  for (const Value *V : Body.initializers())
    S.emplace(V, V->data().shape());
  for (const auto &N : Body.nodes()) {
    std::vector<const Shape *> Ops;
    for (const Value *V : N->inputs()) {
      if (!V)
        continue;
      auto It = S.find(V);
      if (It == S.end())
        return std::nullopt;
      Ops.push_back(&It->second);
    }
    if (Ops.empty())
      return std::nullopt;
    Shape Out;
    if (N->op() == OpKind::Transpose) {
      const Shape &X = *Ops[0];
      std::vector<int64_t> Perm = N->attrs().has("perm")
                                      ? N->attrInts("perm")
                                      : std::vector<int64_t>();
      if (Perm.empty())
        for (size_t A = X.rank(); A-- > 0;)
          Perm.push_back(static_cast<int64_t>(A));
      if (Perm.size() != X.rank())
        return std::nullopt;
      std::vector<int64_t> D;
      for (int64_t P : Perm) {
        if (P < 0 || P >= static_cast<int64_t>(X.rank()))
          return std::nullopt;
        D.push_back(X[P]);
      }
      Out = Shape(D);
    } else if (N->op() == OpKind::Softmax || N->op() == OpKind::LogSoftmax ||
               N->op() == OpKind::LayerNormalization) {
      Out = *Ops[0];
      for (size_t I = 1; I < Ops.size(); ++I) // LayerNorm's scale and bias.
        if (Out.rank() == 0 || Ops[I]->numel() != Out[Out.rank() - 1])
          return std::nullopt;
    } else {
      size_t R = 0;
      for (const Shape *X : Ops)
        R = std::max(R, X->rank());
      std::vector<int64_t> D(R, 1);
      for (const Shape *X : Ops)
        for (size_t A = 0; A < X->rank(); ++A) {
          int64_t E = (*X)[A];
          int64_t &Slot = D[R - X->rank() + A];
          if (E == Slot || E == 1)
            continue;
          if (Slot != 1)
            return std::nullopt;
          Slot = E;
        }
      Out = Shape(D);
    }
    S.emplace(N->output(0), std::move(Out));
  }
  std::vector<Shape> Outs;
  for (const Value *V : Body.outputs()) {
    auto It = S.find(V);
    if (It == S.end())
      return std::nullopt;
    Outs.push_back(It->second);
  }
  return Outs;
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
  // Where each body's text lay when it was last looked up: a node's
  // attribute keeps its place, so a reshape's inference compares the text
  // (memcmp) instead of hashing it.
  static std::unordered_map<const char *,
                            std::pair<const std::string, ParsedBody> *>
      ByPlace;
  if (auto P = ByPlace.find(Body.data());
      P != ByPlace.end() && P->second->first == Body)
    return P->second->second;
  auto It = Parsed.find(Body);
  if (It != Parsed.end()) {
    if (ByPlace.size() >= 4096)
      ByPlace.clear();
    ByPlace[Body.data()] = &*It;
    return It->second;
  }
  std::unique_ptr<Graph> G;
  try {
    G = parseGraph(Body, "fused region body");
  } catch (const Error &E) {
    fail(ErrorKind::Verify, prefix(Where), "the body of the fused region "
         "does not parse: ", E.what());
  }
  if (Parsed.size() >= 4096) {
    Parsed.clear(); // Bounded.
    ByPlace.clear();
  }
  ParsedBody P;
  P.Simple = simpleBody(*G);
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
    // A simple body at static shapes: no instance needed.
    std::lock_guard<std::mutex> Lock(bodiesMutex());
    const ParsedBody *P = nullptr;
    try {
      P = &parsedBody(C.attrString("body"), "");
    } catch (const Error &E) {
      C.fail(E.what());
    }
    const Graph &B = *P->G;
    bool Fast = P->Simple && In.size() == B.inputs().size() &&
                B.outputs().size() == C.numOutputs();
    for (size_t I = 0; I < In.size() && Fast; ++I)
      Fast = In[I] && In[I]->dtype() == B.inputs()[I]->type().dtype();
    if (Fast)
      if (std::optional<std::vector<Shape>> Outs = bodyShapes(B, In)) {
        for (size_t I = 0; I < Outs->size(); ++I)
          C.setOutputType(I, TensorType(B.outputs()[I]->type().dtype(),
                                        (*Outs)[I]));
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
