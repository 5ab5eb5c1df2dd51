//===- RulePass.h - A pass made of a rewrite-rule list ----------*- C++ -*-===//
//
// The run() every local pass shares: apply the pass's rules with the greedy
// driver, erase the initializers the rewrites left unused, count them, and
// say whether the graph changed. A pass without options is just a RulePass
// with its name, summary and rules; one whose rules depend on its options
// derives from RulePass and builds them in rules().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/PatternRewriter.h"

namespace nng::passes {

/// A pass whose run() applies a rule list greedily, then erases the
/// initializers that the rewrites left unused (statistic
/// "initializers-erased"; ones unused before the run stay), and returns
/// whether the graph changed.
class RulePass : public Pass {
public:
  RulePass(std::string Name, std::string Summary,
           RewritePatternList Rules = {});
  std::string_view name() const override { return Name; }
  std::string_view summary() const override { return Summary; }
  bool run(ir::Graph &G) override;
  /// Rules rewrite one graph at a time and never reach past a region's
  /// captures (an outer value is a Capture there, with no producer in the
  /// body): every rule pass also runs on If's branches and Loop's and
  /// Scan's bodies. The nng ops they make there run on both backends and
  /// ONNX export writes them back as standard ops, as at the top level.
  bool entersRegions() const override { return true; }

protected:
  /// The rules of one run, in the order the driver tries them (by default
  /// those given to the constructor).
  virtual RewritePatternList rules() const { return Rules; }
  /// Runs of the greedy driver: after each run that changed the graph,
  /// types are re-inferred (folding refines them, which can enable more
  /// rules) and the driver runs again, up to Rounds runs in all. 1: once.
  void setRounds(int R) { Rounds = R; }

private:
  std::string Name, Summary;
  RewritePatternList Rules;
  int Rounds = 1;
};

} // namespace nng::passes
