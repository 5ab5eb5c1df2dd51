//===- ViewGraphJson.h - A graph as the JSON nngraph-view draws -*- C++ -*-===//
//
// Private to nngraph_tools: the data that tools/nngraph-view/viewer.js
// draws. Nodes carry op, domain, name, module scope (traced, or derived
// from an ONNX node name such as "/layer1/layer1.0/conv1/Conv" or from the
// state-dict names of the weights a node reads), attributes as display
// strings, and input/output value names; values carry their types;
// initializers their dtype, shape and statistics (min, max, mean, std over
// the finite elements, and the NaN/Inf counts).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <nlohmann/json.hpp>

#include <string>

namespace nng::tools {

/// G as the viewer's JSON; Title names the model in the page.
nlohmann::json viewGraphJson(const ir::Graph &G, const std::string &Title);

/// The scope a node without a traced one gets: from an ONNX exporter's
/// node name ("/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1"), else
/// from the name of an initializer it reads ("fc.weight" -> "fc"); "" when
/// neither says.
std::string derivedScope(const ir::Node &N);

} // namespace nng::tools
