//===- SplitGraph.h - A graph cut where its shapes depend on data -*- C++
//-*-===//
//
// A detector's backbone has shapes its input's shape determines; its
// post-processing (NonMaxSuppression, TopK of a data-dependent count,
// NonZero) does not. Rather than run the whole graph node by node, the cpu
// executable compiles the nodes whose shapes are known and runs only the
// rest on node kernels, after them (SplitGraph.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng::backends::cpu {

struct ProgramShared;

/// G cut in two. Static: the nodes whose output shapes G's input shapes
/// determine (none reads a value of Dynamic), in G's order; its inputs are
/// G's inputs, its outputs the values that Dynamic or G's outputs read.
/// Dynamic: the other nodes, in G's order; its inputs are G's inputs, then
/// Static's outputs; its outputs are G's.
struct GraphSplit {
  std::unique_ptr<ir::Graph> Static, Dynamic;
  /// The first node whose output shape depends on data, described.
  std::string Where;
};

/// The split of G at input dtypes Types and shapes Shapes (the signature
/// whose compile met a data-dependent shape), or nullopt when there is no
/// data-dependent shape, or when the part before the cut computes too
/// little to be worth compiling (no convolution, product or other compute
/// op). Shared describes the nodes.
std::optional<GraphSplit>
splitAtDataDependence(const ir::Graph &G, const std::vector<DType> &Types,
                      const std::vector<Shape> &Shapes, ProgramShared &Shared);

} // namespace nng::backends::cpu
