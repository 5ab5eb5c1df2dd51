//===- Pass.h - The pass interface ------------------------------*- C++ -*-===//
//
// A Pass transforms a graph in place and says whether it changed anything.
// It has a kebab-case name ("fold-conv-bn"), a one-line summary, options set
// from a pipeline string ("quantize{mode=static}") and statistics: named
// counters of what it did and of why it declined to fire, so that no pass
// bails out silently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace nng::passes {

/// Named counters a pass keeps while it runs ("nodes-erased" -> 3).
using Statistics = std::map<std::string, int64_t, std::less<>>;

/// The base class of every graph transformation.
class Pass {
public:
  virtual ~Pass();

  /// The kebab-case name used in pipelines ("dce").
  virtual std::string_view name() const = 0;
  /// One line saying what the pass does.
  virtual std::string_view summary() const = 0;
  /// Transforms G in place; returns true when it changed G.
  virtual bool run(ir::Graph &G) = 0;

  /// Sets option Key to Value (from "name{key=value}"). The default accepts
  /// no options; throws Error(InvalidArgument) naming the pass and the key.
  virtual void setOption(std::string_view Key, std::string_view Value);

  /// Counters from the last run (reset by the PassManager before each run).
  const Statistics &statistics() const { return Stats; }
  void clearStatistics() { Stats.clear(); }

  /// Adds Delta to statistic Name (public so that helpers such as the
  /// pattern driver can count on the pass's behalf).
  void bumpStatistic(std::string_view Name, int64_t Delta = 1);

private:
  Statistics Stats;
};

} // namespace nng::passes
