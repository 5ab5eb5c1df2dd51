//===- ParseTree.h - Text format: the parsed declarations ------*- C++ -*-===//
//
// The parser works in two steps. The syntax step (Parser.cpp) reads the
// tokens into a GraphDecl: declarations and nodes with their source offsets,
// op schemas looked up, attributes typed by the op table, initializer data
// decoded, every value defined once. The build step (ParserBuild.cpp) turns
// the GraphDecl into a Graph: resolves names (forward references allowed),
// orders the nodes, infers types and verifies, reporting problems at the
// offsets recorded here. Private to the ir library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Lexer.h"

#include "nngraph/ir/Graph.h"
#include "nngraph/ir/Parser.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng::ir::text {

/// A value definition: "%x: f32[2]" (the type is optional on node results).
struct ValueDef {
  std::string Name;
  size_t Loc = 0;
  std::optional<TensorType> Type;
};

/// A use of a value ("%x"), or an absent optional operand ("_").
struct ValueRef {
  std::string Name;
  size_t Loc = 0;
  bool Absent = false;
};

/// "init %w: f32[2] = [1.0, 2.0]" or "= elided(\"fnv1a64:...\")".
struct InitDecl {
  ValueDef Def;
  rt::Tensor Data; ///< Undefined when elided.
  std::string Hash; ///< The elided hash.
};

struct GraphDecl;

/// A region: a graph attribute's nested "graph { ... }" block.
struct RegionDecl {
  std::string Attr; ///< The attribute's name ("then_branch").
  size_t Loc = 0;
  std::shared_ptr<GraphDecl> Body;
};

/// One node statement.
struct NodeDecl {
  size_t Loc = 0;   ///< Start of the statement.
  size_t OpLoc = 0; ///< The op name.
  const OpSchema *Op = nullptr;
  std::vector<ValueDef> Results;
  std::vector<ValueRef> Operands;
  AttrMap Attrs; ///< Regions hold a null graph here until built.
  std::vector<RegionDecl> Regions;
  std::string Name;
  Scope Sc;
};

/// A whole "graph { ... }" block (the file's, or a region's).
struct GraphDecl {
  size_t Loc = 0;
  std::string Name;
  std::vector<ValueDef> Inputs;
  std::vector<InitDecl> Inits;
  std::vector<NodeDecl> Nodes;
  std::vector<ValueRef> Outputs;
};

/// The syntax step: reads Src into a GraphDecl; throws Error(Parse).
GraphDecl parseGraphDecl(const SourceBuffer &Src);

/// The build step: makes the graph, infers types and verifies; throws
/// Error(Parse) at the offending declaration.
std::unique_ptr<Graph> buildGraph(const SourceBuffer &Src, GraphDecl &D,
                                  const ParseOptions &O);

} // namespace nng::ir::text
