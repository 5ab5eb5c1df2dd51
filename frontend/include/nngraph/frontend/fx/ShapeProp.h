//===- ShapeProp.h - Concrete shapes for every value of a graph -*- C++ -*-===//
//
// fx::ShapeProp is torch.fx's ShapeProp: propagate(example inputs) runs the
// graph node by node (an Interpreter) and records, for every value (inputs,
// initializers, node outputs), the concrete dtype and shape it had. The
// annotations live in the ShapeProp object (and are returned), keyed by
// ir::Value*; the graph's own types are not touched, so symbolic dims ("N")
// stay symbolic in the graph while the annotations hold the example's
// extents. Run propagate() again with other inputs to re-annotate.
//
//   fx::ShapeProp SP(GM);
//   SP.propagate({rt::Tensor::empty({8, 1, 28, 28}, DType::F32)});
//   SP.shapeOf("h3")   // f32[8,4,14,14] where the graph says f32[N,4,14,14]
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/fx/Interpreter.h"
#include "nngraph/ir/Type.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace nng::fx {

/// Value -> its concrete type in one run.
using ShapeAnnotations = std::unordered_map<const ir::Value *, ir::TensorType>;

class ShapeProp : public Interpreter {
public:
  /// Annotates G (which must outlive this object), running it on Backend.
  explicit ShapeProp(const ir::Graph &G, std::string Backend = "reference");
  /// Annotates GM's graph, running it on GM's backend.
  explicit ShapeProp(const GraphModule &GM);

  /// Runs the graph on Inputs and annotates every value; returns the
  /// annotations (also kept: annotations(), shapeOf()).
  const ShapeAnnotations &propagate(const std::vector<rt::Tensor> &Inputs);

  const ShapeAnnotations &annotations() const { return Types; }
  /// The concrete type of V; throws naming the value when it has none
  /// (propagate() has not run, or V is not in the graph).
  const ir::TensorType &shapeOf(const ir::Value *V) const;
  /// The same, by value name.
  const ir::TensorType &shapeOf(const std::string &ValueName) const;

  /// One line per graph input and node output: its declared type, and the
  /// concrete one after an arrow where they differ ("%h3: f32[N,4,14,14]
  /// -> f32[8,4,14,14]"); for logs and tests.
  std::string report() const;

  std::vector<rt::Tensor>
  run_node(const ir::Node &N, const std::vector<rt::Tensor> &Inputs) override;

private:
  ShapeAnnotations Types;
};

} // namespace nng::fx
