//===- ValueGuards.cpp - Inputs compiled by their value -------------------===//
//
// Which inputs decide an If, and the graph copies with them as constants
// (ValueGuards.h).
//
//===----------------------------------------------------------------------===//

#include "ValueGuards.h"

#include <unordered_set>

namespace nng::backends::cpu {

namespace {

bool isScalarInteger(const ir::Value &V) {
  const ir::TensorType &T = V.type();
  return (isIntegral(T.dtype()) || T.dtype() == DType::Bool) &&
         T.staticNumel() == std::optional<int64_t>(1);
}

/// The graph inputs Cond is computed from, when they are all scalar
/// integers (Shape and Size read only their operand's shape); empty when
/// some other input's data reaches it, or none does.
std::vector<const ir::Value *> deciders(const ir::Value *Cond) {
  std::vector<const ir::Value *> Found, Work{Cond};
  std::unordered_set<const ir::Value *> Seen{Cond};
  while (!Work.empty()) {
    const ir::Value *V = Work.back();
    Work.pop_back();
    if (V->isInput()) {
      if (!isScalarInteger(*V))
        return {};
      Found.push_back(V);
      continue;
    }
    const ir::Node *N = V->producer();
    if (!N)
      continue; // A constant (or a capture: not at the top level).
    if (N->op() == ir::OpKind::Shape || N->op() == ir::OpKind::Size ||
        N->hasRegions())
      continue; // Shapes are in the signature; nested control: left alone.
    for (const ir::Value *In : N->inputs())
      if (In && Seen.insert(In).second)
        Work.push_back(In);
  }
  return Found;
}

} // namespace

ValueGuards::ValueGuards(const ir::Graph &G) : G(G) {
  std::unordered_set<const ir::Value *> Guarded;
  for (const auto &N : G.nodes())
    if (N->op() == ir::OpKind::If && N->hasInput(0))
      for (const ir::Value *V : deciders(N->input(0)))
        Guarded.insert(V);
  for (size_t I = 0; I < G.inputs().size(); ++I)
    if (Guarded.count(G.inputs()[I]) && !G.isOutput(G.inputs()[I]))
      Inputs.push_back(I);
}

std::vector<int64_t>
ValueGuards::valuesOf(const std::vector<rt::Tensor> &In) const {
  std::vector<int64_t> Values;
  for (size_t I : Inputs) {
    if (!In[I].defined() || In[I].numel() != 1)
      return {}; // (An absent optional input: the graph serves it.)
    Values.push_back(In[I].getFlatInt(0));
  }
  return Values;
}

const ir::Graph *ValueGuards::graphFor(const std::vector<int64_t> &Values,
                                       const std::vector<rt::Tensor> &In) {
  for (const auto &[V, Graph] : Made)
    if (V == Values)
      return Graph.get();
  if (Made.size() == MaxValues)
    return nullptr;
  std::unique_ptr<ir::Graph> Copy = G.clone();
  for (size_t I : Inputs) {
    ir::Value *Input = Copy->inputs()[I];
    std::string Name = Input->name() + ".value";
    while (Copy->lookup(Name))
      Name += "'";
    Copy->replaceAllUsesWith(Input,
                             Copy->addInitializer(Name, In[I].clone()));
  }
  return Made.emplace_back(Values, std::move(Copy)).second.get();
}

std::string ValueGuards::describe(const std::vector<int64_t> &Values) const {
  std::string S;
  for (size_t K = 0; K < Inputs.size(); ++K)
    S += (K ? ", %" : "%") + G.inputs()[Inputs[K]]->name() + " = " +
         std::to_string(Values[K]);
  return S + " (compiled as constants: they decide an If)";
}

} // namespace nng::backends::cpu
