//===- Verifier.h - IR invariants --------------------------------*- C++ -*-===//
//
// verify() checks a graph's invariants: known ops, input/output counts
// within the op table's bounds, attribute names and types, required
// attributes, SSA (each value defined once, defined before use), use lists,
// graph outputs defined, and output types consistent with inference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <string>
#include <vector>

namespace nng::ir {

/// One problem found by the verifier.
struct VerifyDiagnostic {
  const Node *Where = nullptr; ///< Null for graph-level problems.
  std::string Message;
};

/// All problems in G (empty when valid).
std::vector<VerifyDiagnostic> verifyGraph(const Graph &G);

/// Throws Error(Verify) listing every problem when G is invalid.
void verifyOrThrow(const Graph &G);

} // namespace nng::ir
