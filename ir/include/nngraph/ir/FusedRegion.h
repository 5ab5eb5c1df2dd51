//===- FusedRegion.h - The body of an nng.FusedRegion node ------*- C++ -*-===//
//
// An nng.FusedRegion node stands for a group of elementwise nodes (and at
// most one row reduction: Softmax, LogSoftmax, LayerNormalization over the
// last axis) that a backend runs as one kernel. Its `body` attribute is the
// group as a graph in the text format, on one line: the body's inputs are
// the node's inputs in order, its outputs the node's outputs, and scalar
// constants are initializers of the body. The pass form-fused-regions
// builds them; backends instantiate the body with the node's input types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir {

/// Body as the text of a body attribute: the text format on one line.
std::string printRegionBody(const Graph &Body);

/// The graph of a body attribute, with the types it was written with.
/// Throws Error naming Where when it does not parse.
std::unique_ptr<Graph> parseRegionBody(std::string_view Body,
                                       std::string_view Where);

/// The body of FusedRegion node N, its inputs retyped to the types of N's
/// inputs in InTypes (possibly more concrete than the written ones) and
/// every type inferred again. Throws Error naming N on a mismatch.
std::unique_ptr<Graph>
instantiateRegionBody(std::string_view Body,
                      const std::vector<const TensorType *> &InTypes,
                      std::string_view Where);

/// Replaces FusedRegion node N of G by its body's nodes (before N's place;
/// they keep their names and scopes, the region's outputs keep theirs).
void inlineFusedRegion(Graph &G, Node *N);

} // namespace nng::ir
