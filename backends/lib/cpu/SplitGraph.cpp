//===- SplitGraph.cpp - A graph cut where its shapes depend on data -------===//
//
// splitAtDataDependence walks the graph at one signature's input shapes as
// a compile does (specializeNode: inference, with Shape arithmetic and
// constants folded): a node whose output shape is unknown, or that reads a
// value of such a node, goes to the dynamic part; every other node to the
// static part. Each part becomes a graph of its own: the nodes copied with
// their attributes (regions too) and the original value names, the
// initializers they read copied (their data shared), the values that cross
// the cut outputs of the static part and inputs of the dynamic one.
//
//===----------------------------------------------------------------------===//

#include "SplitGraph.h"
#include "Lower.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::backends::cpu {

namespace {

/// A graph of Nodes (in order) whose inputs are Inputs (values of G, kept
/// with their types) and outputs Outputs; initializers read are copied.
std::unique_ptr<ir::Graph>
buildPart(const ir::Graph &G, std::string Name,
          const std::vector<const ir::Value *> &Inputs,
          const std::vector<const ir::Node *> &Nodes,
          const std::vector<const ir::Value *> &Outputs) {
  auto P = std::make_unique<ir::Graph>();
  P->setName(std::move(Name));
  std::unordered_map<const ir::Value *, ir::Value *> Map;
  for (const ir::Value *V : Inputs)
    Map[V] = P->addInput(V->name(), V->type());
  auto Lookup = [&](const ir::Value *V) -> ir::Value * {
    if (!V)
      return nullptr;
    auto It = Map.find(V);
    if (It != Map.end())
      return It->second;
    NNG_CHECK(V->isInitializer(), "internal: %", V->name(),
              " crosses the cut but is no input of its part");
    return Map[V] = V->data().defined()
                        ? P->addInitializer(V->name(), V->data())
                        : P->addElidedInitializer(V->name(), V->type(), "");
  };
  for (const ir::Node *N : Nodes) {
    std::vector<ir::Value *> Ins;
    for (const ir::Value *V : N->inputs())
      Ins.push_back(Lookup(V));
    std::vector<std::string> Names;
    for (const ir::Value *O : N->outputs())
      Names.push_back(O->name());
    ir::Node *C =
        P->addNode(N->op(), std::move(Ins), std::move(Names), N->attrs());
    C->setNumImplicitInputs(N->numImplicitInputs());
    for (size_t I = 0; I < N->numOutputs(); ++I) {
      C->output(I)->setType(N->output(I)->type());
      Map[N->output(I)] = C->output(I);
    }
  }
  for (const ir::Value *O : Outputs)
    P->addOutput(Lookup(O));
  return P;
}

} // namespace

std::optional<GraphSplit>
splitAtDataDependence(const ir::Graph &G, const std::vector<DType> &Types,
                      const std::vector<Shape> &Shapes, ProgramShared &Shared) {
  // Types and folded values at these shapes; Dynamic values have none.
  std::unordered_map<const ir::Value *, ir::TensorType> Known;
  std::unordered_map<const ir::Value *, Tensor> Values;
  for (size_t I = 0; I < G.inputs().size(); ++I)
    Known[G.inputs()[I]] = ir::TensorType(Types[I], Shapes[I]);
  for (const ir::Value *V : G.initializers()) {
    Known[V] = V->type();
    if (V->data().defined())
      Values[V] = V->data();
  }
  std::vector<const ir::Node *> Static, Dynamic;
  std::unordered_set<const ir::Value *> DynamicValues;
  std::string Where;
  bool Computes = false;
  std::vector<const ir::TensorType *> InTypes; // Into Known (stable).
  std::vector<const Tensor *> InValues;
  for (const auto &NP : G.nodes()) {
    const ir::Node &N = *NP;
    bool Tainted = false;
    InTypes.assign(N.numInputs(), nullptr);
    InValues.assign(N.numInputs(), nullptr);
    for (size_t I = 0; I < N.numInputs() && !Tainted; ++I) {
      if (!N.hasInput(I))
        continue;
      auto T = Known.find(N.input(I));
      Tainted = T == Known.end();
      if (Tainted)
        break;
      InTypes[I] = &T->second;
      auto V = Values.find(N.input(I));
      if (V != Values.end())
        InValues[I] = &V->second;
    }
    std::optional<NodeSpecialization> Sp;
    if (!Tainted) {
      try {
        Sp = specializeNode(N, InTypes, InValues);
      } catch (const Error &) {
        // Left to the node kernel, which reports it at run time.
      }
      Tainted = !Sp;
      if (Tainted && Where.empty())
        Where = Shared.describe(N);
    }
    if (Tainted) {
      Dynamic.push_back(&N);
      for (const ir::Value *O : N.outputs())
        DynamicValues.insert(O);
      continue;
    }
    Static.push_back(&N);
    Computes = Computes || ir::hasTrait(N.op(), ir::OpTrait::Compute);
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      Known[N.output(I)] = Sp->OutTypes[I];
      if (!Sp->Folded.empty())
        Values[N.output(I)] = std::move(Sp->Folded[I]);
    }
  }
  if (Dynamic.empty() || !Computes)
    return std::nullopt;

  // The values crossing the cut: read by a dynamic node or a graph output.
  std::unordered_set<const ir::Node *> InStatic(Static.begin(), Static.end());
  std::vector<const ir::Value *> Crossing;
  std::unordered_set<const ir::Value *> Seen;
  auto Cross = [&](const ir::Value *V) {
    if (V && V->producer() && InStatic.count(V->producer()) &&
        Seen.insert(V).second)
      Crossing.push_back(V);
  };
  for (const ir::Node *N : Dynamic)
    for (const ir::Value *V : N->inputs())
      Cross(V);
  for (const ir::Value *V : G.outputs())
    Cross(V);

  std::vector<const ir::Value *> GraphInputs(G.inputs().begin(),
                                             G.inputs().end());
  GraphSplit S;
  S.Where = Where;
  S.Static = buildPart(G, G.name() + ".static", GraphInputs, Static, Crossing);
  std::vector<const ir::Value *> DynamicInputs = GraphInputs;
  DynamicInputs.insert(DynamicInputs.end(), Crossing.begin(), Crossing.end());
  std::vector<const ir::Value *> Outputs(G.outputs().begin(),
                                         G.outputs().end());
  S.Dynamic =
      buildPart(G, G.name() + ".dynamic", DynamicInputs, Dynamic, Outputs);
  return S;
}

} // namespace nng::backends::cpu
