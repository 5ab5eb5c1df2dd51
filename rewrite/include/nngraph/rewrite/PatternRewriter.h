//===- PatternRewriter.h - Rules driven to a fixed point --------*- C++ -*-===//
//
// Every local pass is a list of rewrite rules. A rule (RewritePattern) roots
// at one op, a set of ops or any op; its match-and-rewrite function either
// rewrites the graph around the root node through the PatternRewriter and
// returns true, returns false when the node does not have the shape the
// rule looks for, or declines with a reason (R.decline: counted in the
// pass's statistics and printed under --debug-only=PASS). The greedy driver
// tries at every node the rules rooted at its op, in list order (the first
// that applies wins), erases nodes left dead, and repeats until nothing
// changes or the iteration cap is reached. A rule list reads as a table, a
// one-line comment of its algebra above each rule:
//
//   // Transpose(x, identity) -> x
//   {OpKind::Transpose, "remove-identity-transpose", removeIdentityTranspose},
//
// RulePass (RulePass.h) makes a pass of a rule list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/Pass.h"

#include <functional>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

namespace nng::passes {

class PatternRewriter;

/// The ops a rule roots at: one op, a set of ops, or any op (MLIR's
/// MatchAnyOpTypeTag).
class RootOps {
public:
  RootOps(ir::OpKind Op) : Ops{Op} {}
  RootOps(std::initializer_list<ir::OpKind> Ops) : Ops(Ops) {}
  /// Every op: the rule is tried at every node.
  static RootOps any();
  bool isAny() const { return Any; }
  /// True when the rule roots at Op.
  bool contains(ir::OpKind Op) const;

private:
  RootOps() = default;
  std::vector<ir::OpKind> Ops;
  bool Any = false;
};

/// Rewrites at N through R and returns true, or returns false (N is not
/// the rule's shape) or R.decline(N, why).
using MatchAndRewriteFn = std::function<bool(ir::Node &N, PatternRewriter &R)>;

/// One local rewrite rule.
struct RewritePattern {
  /// The ops of the nodes the rule is tried at.
  RootOps Roots;
  /// Short kebab-case name, the statistic counting its applications
  /// ("remove-identity").
  std::string Name;
  MatchAndRewriteFn MatchAndRewrite;
};

/// A pass's rules, in the order the driver tries them at a node.
using RewritePatternList = std::vector<RewritePattern>;

/// What a rule may do to the graph while it rewrites.
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

  /// Replaces every use of From (graph outputs included) by To, an existing
  /// value. When From is a graph output and To is not, To takes From's name
  /// so the graph's interface keeps its names (see replaceBlocker).
  void replaceValue(ir::Value *From, ir::Value *To);
  /// Replaces N's result by To, an existing value (an operand, another
  /// result), and erases N; declines at N instead when that would change
  /// the graph's interface (see replaceBlocker).
  bool replaceOp(ir::Node &N, ir::Value *To);
  /// Replaces every use of Old by New, a value the rule just created (a new
  /// node's result) or rewired (a producer's result taking over), which
  /// takes Old's name and keeps what Old's type knew; Old is renamed out of
  /// the way. The one way a rewrite keeps a value's name.
  void replaceWithNewValue(ir::Value *Old, ir::Value *New);
  /// Replaces every use of Old by a new initializer holding Data that takes
  /// Old's name (replaceWithNewValue); returns the initializer.
  ir::Value *replaceWithInitializer(ir::Value *Old, rt::Tensor Data);

  /// Marks N for erasure (done by the driver once N's outputs are unused).
  void eraseNode(ir::Node *N);
  bool isErased(const ir::Node *N) const { return Erased.count(N) != 0; }

  /// Records that the current rule declined at N, and why (counted once
  /// per node, rule and reason over all sweeps); returns false.
  bool decline(const ir::Node &N, std::string_view Reason);
  /// The pass the rewriter works for (statistics, debug output).
  Pass &owner() { return Owner; }
  /// Set by the driver: the rule being tried.
  void setCurrentPattern(const RewritePattern *P) { Current = P; }

private:
  ir::Graph &G;
  Pass &Owner;
  const RewritePattern *Current = nullptr;
  std::unordered_set<const ir::Node *> Erased;
};

/// Says why replacing every use of From by To would change the graph's
/// interface (a graph output would take another name or two outputs would
/// merge into one), or returns null when the replacement is safe.
const char *replaceBlocker(const ir::Graph &G, const ir::Value *From,
                           const ir::Value *To);

/// Applies Patterns at every node whose op one of them roots at (any-op
/// rules at every node), in list order, erases dead nodes, and repeats
/// until a sweep changes nothing or MaxIterations sweeps ran (counted as
/// "iteration-cap-reached"). Each application counts as statistic
/// "<pattern-name>". Returns true when the graph changed.
bool applyPatternsGreedily(ir::Graph &G, const RewritePatternList &Patterns,
                           Pass &Owner, int MaxIterations = 10);

/// Erases nodes none of whose outputs are used or graph outputs (every op
/// is free of side effects); returns how many were erased.
size_t eraseDeadNodes(ir::Graph &G);

} // namespace nng::passes
