//===- PatternRewriter.h - Local rewrites driven to a fixed point -*- C++ -*-===//
//
// A RewritePattern is keyed by the op of its root node; matchAndRewrite()
// either rewrites the graph around that node through the PatternRewriter and
// returns true, or declines with a reason (counted in the pass's statistics
// and printed under --debug-only=PASS) and returns false. The greedy driver
// applies a set of patterns to every node, erases nodes left dead, and
// repeats until nothing changes or the iteration cap is reached.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/passes/Pass.h"

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace nng::passes {

class PatternRewriter;

/// One local rewrite rooted at a node of a given op.
class RewritePattern {
public:
  RewritePattern(ir::OpKind Root, std::string Name)
      : Root(Root), Name(std::move(Name)) {}
  virtual ~RewritePattern();
  ir::OpKind root() const { return Root; }
  /// Short kebab-case name, used in statistics ("fold-identity").
  const std::string &name() const { return Name; }
  /// Rewrites at N and returns true, or returns R.decline(...).
  virtual bool matchAndRewrite(ir::Node &N, PatternRewriter &R) const = 0;

private:
  ir::OpKind Root;
  std::string Name;
};

/// What a pattern may do to the graph while it rewrites.
class PatternRewriter {
public:
  PatternRewriter(ir::Graph &G, Pass &Owner) : G(G), Owner(Owner) {}

  ir::Graph &graph() { return G; }
  /// Creates a node before InsertBefore (at the end when null); output types
  /// are inferred right away.
  ir::Node *create(ir::OpKind Op, std::vector<ir::Value *> Inputs,
                   std::vector<std::string> OutputNames, ir::AttrMap Attrs = {},
                   ir::Node *InsertBefore = nullptr);
  /// Adds an initializer with a fresh name based on Base.
  ir::Value *addConstant(std::string_view Base, rt::Tensor Data);
  /// Replaces every use of From (graph outputs included) by To. When From
  /// is a graph output and To is not, To takes From's name so the graph's
  /// interface keeps its names.
  void replaceValue(ir::Value *From, ir::Value *To);
  /// Marks N for erasure (done by the driver once N's outputs are unused).
  void eraseNode(ir::Node *N);
  bool isErased(const ir::Node *N) const { return Erased.count(N) != 0; }

  /// Records that the current pattern declined at N, and why (counted once
  /// per node, pattern and reason over all sweeps); returns false.
  bool decline(const ir::Node &N, std::string_view Reason);
  /// The pass the rewriter works for (statistics, debug output).
  Pass &owner() { return Owner; }
  /// Set by the driver: the pattern being tried.
  void setCurrentPattern(const RewritePattern *P) { Current = P; }

private:
  ir::Graph &G;
  Pass &Owner;
  const RewritePattern *Current = nullptr;
  std::unordered_set<const ir::Node *> Erased;
  friend bool applyPatternsGreedily(
      ir::Graph &, const std::vector<std::unique_ptr<RewritePattern>> &,
      Pass &, int);
};

/// Applies Patterns to every node whose op matches a pattern's root, in
/// order, erases dead nodes, and repeats until a sweep changes nothing or
/// MaxIterations sweeps ran (counted as "iteration-cap-reached"). Each
/// application counts as statistic "<pattern-name>". Returns true when the
/// graph changed.
bool applyPatternsGreedily(
    ir::Graph &G, const std::vector<std::unique_ptr<RewritePattern>> &Patterns,
    Pass &Owner, int MaxIterations = 10);

/// Erases nodes none of whose outputs are used or graph outputs (every op
/// is free of side effects); returns how many were erased.
size_t eraseDeadNodes(ir::Graph &G);

} // namespace nng::passes
