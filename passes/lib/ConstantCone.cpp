//===- ConstantCone.cpp - Values computable from constants alone ----------===//
//
// A depth-first walk from a value to the constants it is computed from,
// refusing graph inputs, elided initializers, impure or random nodes and
// nodes with regions (If, Loop),
// and a temporary graph of those nodes run on the reference backend (so no
// op is re-implemented here).
//
//===----------------------------------------------------------------------===//

#include "ConstantCone.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::passes::detail {

std::vector<const ir::Node *> constantCone(const ir::Value *V,
                                           size_t MaxNodes) {
  if (!V || ir::constantValue(V))
    return {};
  std::vector<const ir::Node *> Order;
  std::unordered_set<const ir::Node *> Seen;
  // Iterative post-order: a node is placed after all its producers.
  std::vector<std::pair<const ir::Node *, size_t>> Stack;
  // False when In cannot be computed from constants alone.
  auto Visit = [&](const ir::Value *In) {
    if (!In || ir::constantValue(In))
      return true;
    const ir::Node *P = In->producer();
    if (!P || !P->isPure() || P->hasRegions())
      return false; // A graph input, an elided initializer, impure/random,
                    // control flow.
    if (Seen.insert(P).second) {
      if (Seen.size() > MaxNodes)
        return false;
      Stack.push_back({P, 0});
    }
    return true;
  };
  if (!Visit(V))
    return {};
  while (!Stack.empty()) {
    auto &[N, Next] = Stack.back();
    if (Next < N->numInputs()) {
      if (!Visit(N->input(Next++)))
        return {};
      continue;
    }
    Order.push_back(N);
    Stack.pop_back();
  }
  return Order;
}

std::vector<rt::Tensor>
evaluateNodes(const std::vector<const ir::Node *> &Nodes,
              const std::vector<const ir::Value *> &Outputs) {
  ir::Graph Tmp;
  std::unordered_map<const ir::Value *, ir::Value *> Map;
  auto Lookup = [&](const ir::Value *V) -> ir::Value * {
    if (!V)
      return nullptr;
    if (auto It = Map.find(V); It != Map.end())
      return It->second;
    const rt::Tensor *T = ir::constantValue(V);
    if (!T)
      throw std::logic_error("evaluateNodes: %" + V->name() +
                             " is neither computed nor constant");
    ir::Value *C = Tmp.addInitializer("const" + std::to_string(Map.size()), *T);
    Map[V] = C;
    return C;
  };
  for (const ir::Node *N : Nodes) {
    std::vector<ir::Value *> Ins;
    for (const ir::Value *In : N->inputs())
      Ins.push_back(Lookup(In));
    std::vector<std::string> Names;
    for (size_t I = 0; I < N->numOutputs(); ++I)
      Names.push_back("value" + std::to_string(Map.size() + I));
    ir::Node *C = Tmp.addNode(N->op(), Ins, Names, N->attrs());
    C->setNumImplicitInputs(N->numImplicitInputs());
    std::vector<ir::TensorType> Types = ir::inferNodeTypes(*C);
    for (size_t I = 0; I < C->numOutputs(); ++I) {
      C->output(I)->setType(Types[I]);
      Map[N->output(I)] = C->output(I);
    }
  }
  for (const ir::Value *O : Outputs)
    Tmp.addOutput(Lookup(O));
  return backends::runReference(Tmp, {});
}

rt::Tensor constantOrConeValue(const ir::Value *V, size_t MaxNodes) {
  if (!V)
    return {};
  if (const rt::Tensor *T = ir::constantValue(V))
    return T->defined() ? *T : rt::Tensor();
  std::vector<const ir::Node *> Cone = constantCone(V, MaxNodes);
  if (Cone.empty())
    return {};
  try {
    return evaluateNodes(Cone, {V}).at(0).contiguous();
  } catch (const std::exception &) {
    return {};
  }
}

} // namespace nng::passes::detail
