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

#include "nngraph/passes/Pass.h"

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
  /// When set, each pass's statistics and time are printed here after it
  /// runs.
  void setStatisticsStream(std::ostream *OS) { StatsOS = OS; }

  /// Runs every pass on G; returns true when any changed it. An Error from
  /// a pass or the verifier gets the pass's name as context.
  bool run(ir::Graph &G);

  size_t size() const { return Passes.size(); }
  const std::vector<std::unique_ptr<Pass>> &passes() const { return Passes; }
  /// The pass names, comma-separated ("shape-infer,dce").
  std::string pipelineString() const;

private:
  std::vector<std::unique_ptr<Pass>> Passes;
  bool VerifyEach = true;
  std::ostream *StatsOS = nullptr;
};

} // namespace nng::passes
