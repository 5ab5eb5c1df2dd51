//===- PassManager.h - Pipelines of passes ----------------------*- C++ -*-===//
//
// A PassManager runs a sequence of passes over a graph, verifying the graph
// after each pass by default so that a broken pass is caught where it broke
// the graph. Pipelines are strings: "shape-infer,dce" or, with options,
// "quantize{mode=static calibration=minmax},dce". parsePipeline() checks
// every name and option before any pass runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/Pass.h"

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// One element of a parsed pipeline string.
struct PipelineElement {
  std::string Name;
  std::vector<std::pair<std::string, std::string>> Options;
};

/// Splits a pipeline string into pass names and options without looking
/// them up. Throws Error(InvalidArgument) saying where the syntax is wrong.
std::vector<PipelineElement> splitPipeline(std::string_view Pipeline);

/// Hooks called around each pass (for --print-ir-after, numeric checks).
struct PassInstrumentation {
  /// Called before a pass runs, with the graph it will see.
  std::function<void(const Pass &, const ir::Graph &)> BeforePass;
  /// Called after a pass ran (and, with verify-each, verified), with the
  /// graph it produced and whether it reported a change.
  std::function<void(const Pass &, const ir::Graph &, bool Changed)> AfterPass;
};

/// The wall time of one pass run.
struct PassTiming {
  std::string Name;
  double Milliseconds = 0;
};

/// Runs passes in order.
class PassManager {
public:
  PassManager();
  ~PassManager();
  PassManager(PassManager &&);
  PassManager &operator=(PassManager &&);

  /// Appends a pass.
  void addPass(std::unique_ptr<Pass> P);
  /// Appends the passes of a pipeline string; throws Error(InvalidArgument)
  /// naming an unknown pass (with the list of valid names) or a bad option,
  /// adding nothing in that case.
  void addPipeline(std::string_view Pipeline);

  /// Verify the graph after each pass (default on).
  void setVerifyEach(bool V) { VerifyEach = V; }
  bool verifyEach() const { return VerifyEach; }
  /// Installs hooks called around every pass.
  void setInstrumentation(PassInstrumentation I) { Instr = std::move(I); }
  /// The time each pass took in the last run(), in pipeline order.
  const std::vector<PassTiming> &timings() const { return Timings; }
  /// When set, each pass's statistics and time are printed here after it
  /// runs.
  void setStatisticsStream(std::ostream *OS) { StatsOS = OS; }

  /// Runs every pass on G; returns true when any changed it. An Error from
  /// a pass or the verifier gets the pass's name as context ("in pass
  /// 'dce'"); a verifier failure also says the pass broke the graph.
  bool run(ir::Graph &G);

  size_t size() const { return Passes.size(); }
  const std::vector<std::unique_ptr<Pass>> &passes() const { return Passes; }
  /// The pass names, comma-separated ("shape-infer,dce").
  std::string pipelineString() const;

private:
  std::vector<std::unique_ptr<Pass>> Passes;
  bool VerifyEach = true;
  std::ostream *StatsOS = nullptr;
  PassInstrumentation Instr;
  std::vector<PassTiming> Timings;
};

} // namespace nng::passes
