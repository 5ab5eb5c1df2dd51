//===- Pass.h - The pass interface ------------------------------*- C++ -*-===//
//
// A Pass transforms a graph in place and says whether it changed anything.
// It has a kebab-case name ("fold-conv-bn"), a one-line summary, typed
// options (declared with a type, default and help in the constructor, set
// from a pipeline string "quantize{mode=static}", parsed and validated by
// type, listed by `nngraph-opt --list-passes`) and statistics: named
// counters of what it did and of why it declined to fire, so that no pass
// bails out silently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"
#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace nng::passes {

/// This layer names the runtime's data tensor plainly.
using rt::Tensor;

/// The type of a declared pass option.
enum class OptionKind { Int, Bool, Float, String, Enum };

/// "integer", "bool", "float", "string" or "enum".
std::string_view optionKindName(OptionKind K);

/// One declared option of a pass, with its current value as text (already
/// validated against Kind; bools are "true"/"false").
struct PassOption {
  std::string Key;
  OptionKind Kind = OptionKind::String;
  std::string Default;
  std::string Help;
  std::vector<std::string> Choices; ///< Enum options only.
  std::string Value;
};

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
  /// True when the PassManager also runs the pass on every region of the
  /// graph (If's branches, Loop's and Scan's bodies; ir/Regions.h), after
  /// the graph itself, innermost regions first: for passes that rewrite one
  /// graph at a time and keep its inputs, outputs and captures, so a region
  /// keeps its signature and reads the same outer values (dce, cse, every
  /// RulePass: canonicalize and the fusions). Passes that change a graph's
  /// interface stay out.
  virtual bool entersRegions() const { return false; }

  /// Sets option Key to Value (from "name{key=value}"). The default looks
  /// Key up among the declared options and parses Value by its type; throws
  /// Error(InvalidArgument) naming the pass, the key, the expected type and
  /// (for an unknown key) the valid ones. A pass may override it for keys of
  /// its own and forward the rest here.
  virtual void setOption(std::string_view Key, std::string_view Value);

  /// The declared options, in declaration order.
  const std::vector<PassOption> &options() const { return Options; }
  /// The declared option Key, or null.
  const PassOption *findOption(std::string_view Key) const;

  /// Counters from the last run (reset by the PassManager before each run).
  const Statistics &statistics() const { return Stats; }
  void clearStatistics() {
    Stats.clear();
    CountedOnce.clear();
  }

  /// Adds Delta to statistic Name (public so that helpers such as the
  /// pattern driver can count on the pass's behalf).
  void bumpStatistic(std::string_view Name, int64_t Delta = 1);
  /// Bumps statistic Name once per Key until the statistics are cleared
  /// (a pattern declining at one node in every sweep counts once).
  void bumpStatisticOnce(std::string_view Name, std::string Key);

protected:
  /// Declares an option (call in the constructor); the type follows from
  /// the default: declareOption("max-iterations", 10, "cap on sweeps").
  void declareOption(std::string Key, int Default, std::string Help);
  void declareOption(std::string Key, int64_t Default, std::string Help);
  void declareOption(std::string Key, bool Default, std::string Help);
  void declareOption(std::string Key, double Default, std::string Help);
  void declareOption(std::string Key, const char *Default, std::string Help);
  void declareOption(std::string Key, std::string Default, std::string Help);
  /// Declares an option whose value is one of Choices.
  void declareEnumOption(std::string Key, std::string Default,
                         std::vector<std::string> Choices, std::string Help);

  /// The current value of a declared option; throws Error(Internal) when Key
  /// is not declared with a matching type.
  int64_t intOption(std::string_view Key) const;
  bool boolOption(std::string_view Key) const;
  double floatOption(std::string_view Key) const;
  /// String and enum options.
  const std::string &stringOption(std::string_view Key) const;

private:
  void declare(PassOption O);
  const PassOption &option(std::string_view Key, OptionKind K) const;

  Statistics Stats;
  std::unordered_set<std::string> CountedOnce;
  std::vector<PassOption> Options;
};

} // namespace nng::passes
