//===- InspectDriver.h - nngraph-inspect as a library call ------*- C++ -*-===//
//
// The logic of nngraph-inspect (tools/lib/InspectDriver.cpp): parameters,
// MACs, activation memory, op histogram and per-layer table of a model;
// and the same data as JSON for a graph in memory (the Python module's
// Model.inspect()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/tools/ToolSupport.h"

#include <ostream>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-inspect with Args (Args[0] is the program name), writing to
/// Out and Err. Returns 0 on success, 1 when the model cannot be loaded or
/// its shapes inferred, 2 on a bad command line.
int runInspectDriver(const std::vector<std::string> &Args, std::ostream &Out,
                     std::ostream &Err);

/// What `nngraph-inspect --json` prints for the graph G (ModelName as its
/// "model"), as one line of JSON: G is copied, its input types made
/// concrete for Dims (unbound symbols are 1) and its shape arithmetic
/// folded; G itself is not changed. Throws nng::Error for a binding that
/// names no symbolic input dim, or when shapes cannot be inferred.
std::string inspectGraphJson(const ir::Graph &G, const DimBindings &Dims,
                             const std::string &ModelName);

} // namespace nng::tools
