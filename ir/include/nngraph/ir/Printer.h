//===- Printer.h - The text format: printing ---------------------*- C++ -*-===//
//
// Prints a graph in the text format (*.nng). The output parses back to a
// graph that prints identically. Initializers with at most InlineLimit
// elements print their values inline; larger ones print as a reference with
// a content hash (elided) unless InlineLimit is negative (everything inline).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <ostream>
#include <string>

namespace nng::ir {

struct PrintOptions {
  /// Initializers with more elements print as "elided(hash)"; <0: no limit.
  int64_t InlineLimit = 64 * 1024;
};

/// Prints G to OS.
void printGraph(const Graph &G, std::ostream &OS, const PrintOptions &O = {});
/// Prints G to a string.
std::string printGraph(const Graph &G, const PrintOptions &O = {});

/// The content hash printed for elided initializers ("fnv1a64:<16 hex>").
std::string tensorHash(const rt::Tensor &T);

} // namespace nng::ir
