//===- NodePattern.h - Selecting nodes by name or scope pattern -*- C++ -*-===//
//
// How passes and tools let a user name nodes: glob patterns ('*' matches
// any run of characters, dots included) against a node's name, its module
// scope ("layer4.0.conv1") or an output's name, e.g. "layer4.*" or "fc".
// Used by quantization's keep-float list and prune-channels' exclude list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// True when Pattern ('*' for any run of characters) matches all of Text.
bool globMatch(std::string_view Pattern, std::string_view Text);

/// True when N's name, scope path or an output's name matches a pattern.
bool matchesNodePattern(const ir::Node &N,
                        const std::vector<std::string> &Patterns);

/// A pass option's comma-separated pattern list ("a.*,fc"), empties
/// dropped.
std::vector<std::string> splitPatterns(std::string_view List);

/// Throws Error(InvalidArgument) naming the first pattern that matches no
/// node of G; What names the option ("prune-channels: exclude pattern").
void checkPatternsMatch(const ir::Graph &G,
                        const std::vector<std::string> &Patterns,
                        std::string_view What);

} // namespace nng::passes
