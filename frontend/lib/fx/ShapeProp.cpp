//===- ShapeProp.cpp - Concrete shapes for every value of a graph --------===//
//
// ShapeProp is an Interpreter whose run_node() records the concrete type of
// each output after the backend computed it; propagate() adds the inputs'
// and initializers' types.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/ShapeProp.h"
#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/runtime/Error.h"

namespace nng::fx {

ShapeProp::ShapeProp(const ir::Graph &G, std::string Backend)
    : Interpreter(G, std::move(Backend)) {}

ShapeProp::ShapeProp(const GraphModule &GM) : Interpreter(GM) {}

std::vector<rt::Tensor>
ShapeProp::run_node(const ir::Node &N, const std::vector<rt::Tensor> &Inputs) {
  std::vector<rt::Tensor> Outs = Interpreter::run_node(N, Inputs);
  for (size_t I = 0; I < Outs.size() && I < N.numOutputs(); ++I)
    if (Outs[I].defined())
      Types[N.output(I)] = ir::TensorType(Outs[I].dtype(), Outs[I].shape());
  return Outs;
}

const ShapeAnnotations &
ShapeProp::propagate(const std::vector<rt::Tensor> &Inputs) {
  Types.clear();
  for (size_t I = 0; I < Inputs.size() && I < graph().inputs().size(); ++I)
    if (Inputs[I].defined())
      Types[graph().inputs()[I]] =
          ir::TensorType(Inputs[I].dtype(), Inputs[I].shape());
  for (const ir::Value *V : graph().initializers())
    if (V->data().defined())
      Types[V] = ir::TensorType(V->data().dtype(), V->data().shape());
  run(Inputs);
  return Types;
}

const ir::TensorType &ShapeProp::shapeOf(const ir::Value *V) const {
  auto It = Types.find(V);
  NNG_CHECK(It != Types.end(), "ShapeProp: no concrete type for %",
            V ? V->name() : std::string("<null>"),
            "; run propagate() with example inputs first");
  return It->second;
}

const ir::TensorType &ShapeProp::shapeOf(const std::string &ValueName) const {
  const ir::Value *V = graph().lookup(ValueName);
  NNG_CHECK(V, "ShapeProp: the graph has no value named '%", ValueName, "'");
  return shapeOf(V);
}

std::string ShapeProp::report() const {
  std::string S;
  auto Line = [&](const ir::Value *V) {
    auto It = Types.find(V);
    S += "%" + V->name() + ": " + V->type().toString();
    if (It == Types.end())
      S += " -> (not computed)";
    else if (!(It->second == V->type()))
      S += " -> " + It->second.toString();
    S += "\n";
  };
  for (const ir::Value *V : graph().inputs())
    Line(V);
  for (const auto &N : graph().nodes())
    for (const ir::Value *V : N->outputs())
      Line(V);
  return S;
}

} // namespace nng::fx
