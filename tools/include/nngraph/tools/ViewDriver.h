//===- ViewDriver.h - The nngraph-view driver -------------------*- C++ -*-===//
//
// nngraph-view writes a model as one self-contained HTML page (no network
// access, the scripts and styles inlined) that draws the graph with a
// layered layout, collapses nodes by module scope, shows a node's
// attributes, input/output types and initializer statistics on click, and
// searches by name. The page's HTML, CSS and JavaScript live in
// tools/nngraph-view/ and are embedded into the library at build time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// The viewer page for G, titled Title: the template with its style and
/// script inlined and the graph embedded as JSON, escaped so that no name
/// can end the script element ("</script>" in a name stays text).
std::string renderViewerHtml(const ir::Graph &G, const std::string &Title);

/// Runs nngraph-view with Args (Args[0] is the program name), writing to Out
/// and Err. Returns 0 on success, 1 when the model cannot be loaded or the
/// page cannot be written, 2 on a bad command line.
int runViewDriver(const std::vector<std::string> &Args, std::ostream &Out,
                  std::ostream &Err);

} // namespace nng::tools
