//===- Conformance.h - Shared pieces of the conformance driver -*- C++ -*-===//
//
// Internal to tools/lib: the options, test cases and outcomes shared by the
// driver (ConformanceDriver.cpp: discovery, isolation, reports, baseline)
// and the running of one test (ConformanceCase.cpp: skip list, data sets,
// import, optional pipeline, run and compare).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nng::tools::conformance {

constexpr const char *ToolName = "nngraph-onnx-conformance";
constexpr const char *DefaultRoot = "/usr/share/libonnx-testdata/data";
constexpr const char *DefaultFolders[] = {"node", "simple", "pytorch-converted",
                                          "pytorch-operator"};
/// Prefix of the result line a --run-one child prints.
constexpr const char *ResultTag = "@@nngraph-conformance-result ";
/// Prefix of the line a --run-one child prints with --pipeline: the node
/// counts before and after the pipeline.
constexpr const char *NodesTag = "@@nngraph-conformance-nodes ";

#ifdef NNGRAPH_CONFORMANCE_SKIPS
constexpr const char *DefaultSkips = NNGRAPH_CONFORMANCE_SKIPS;
#else
constexpr const char *DefaultSkips = "";
#endif

struct Options {
  std::vector<std::string> Dirs;
  std::string Backend = "reference";
  std::string Filter;
  std::string Json;
  std::string Skips = DefaultSkips;
  std::string Baseline;
  bool UpdateBaseline = false;
  int Jobs = 1;
  bool Isolate = false;
  int TimeoutS = 120;
  double Rtol = 1e-3, Atol = 1e-7;
  bool Quiet = false;
  std::string RunOne; ///< Hidden: run one test folder, print its result.
  /// Passes run on each imported model before it runs ("O2", "-O2" or "2"
  /// name the -O pipeline for Backend: passes::resolvePipeline); with it, a
  /// model that fails to import is skipped.
  std::string Pipeline;
};

enum class Status { Pass, Fail, Skip };

struct TestCase {
  std::string Folder; ///< Suite folder name ("node").
  std::string Name;   ///< "node/test_abs".
  std::string Dir;    ///< The test folder.
};

struct Outcome {
  Status S = Status::Fail;
  std::string Message;
  double Seconds = 0;
  /// With --pipeline: the model's node count before and after the pipeline
  /// (-1 when the pipeline did not run).
  long NodesBefore = -1, NodesAfter = -1;
};

/// Operators deliberately out of scope, with the reason.
using SkipList = std::map<std::string, std::string>;

/// "PASS", "FAIL" or "SKIP".
const char *statusName(Status S);
/// S on one line, for the per-test report.
std::string oneLine(std::string S);
/// Reads the skip file: "OP[, OP...]: reason" lines, '#' comments.
SkipList loadSkips(const std::string &Path);
/// The test folders under Dirs (a folder of tests or one test), filtered by
/// the regex Filter, sorted by name.
std::vector<TestCase> discover(const std::vector<std::string> &Dirs,
                               const std::string &Filter);
/// Imports, optionally optimizes, runs and compares one test folder.
Outcome runTest(const TestCase &T, const SkipList &Skips, const Options &O);

} // namespace nng::tools::conformance
