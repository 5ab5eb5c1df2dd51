//===- ConstantCone.h - Values computable from constants alone -*- C++ -*-===//
//
// The nodes behind a value whose every input is, transitively, a constant
// (initializer with data or Constant output), and their evaluation on the
// reference backend. Constant folding evaluates one node this way; passes
// that need a constant operand (fold-conv-bn's weights) evaluate a whole
// cone that canonicalize left unfolded because of its size cap. Private to
// passes/lib.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <vector>

namespace nng::passes::detail {

/// The pure nodes V depends on, in an order where producers come first,
/// when every leaf of that subgraph is a constant with data and it has at
/// most MaxNodes nodes; empty when V is itself a constant or has no such
/// cone (it reads a graph input, an initializer without data, or an impure
/// or random node).
std::vector<const ir::Node *> constantCone(const ir::Value *V, size_t MaxNodes);

/// Evaluates Nodes (producers first; every input either one of their
/// outputs or a constant with data) on the reference backend and returns
/// the values of Outputs. Throws on evaluation failures.
std::vector<rt::Tensor>
evaluateNodes(const std::vector<const ir::Node *> &Nodes,
              const std::vector<const ir::Value *> &Outputs);

/// V's data when V is a constant, else the evaluation of its constant cone
/// (at most MaxNodes nodes); undefined when neither exists or the
/// evaluation fails.
rt::Tensor constantOrConeValue(const ir::Value *V, size_t MaxNodes);

} // namespace nng::passes::detail
