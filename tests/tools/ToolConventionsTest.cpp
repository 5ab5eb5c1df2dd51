//===- ToolConventionsTest.cpp - What every nngraph tool does alike -------===//
//
// The conventions of docs/tools.md, checked on the drivers in-process: every
// tool's --help lists the exit statuses and -q,--quiet; progress goes to
// stderr as plain lines when stderr is not a terminal (conformance over
// three tiny ONNX test folders, quantize calibration over three batches) and
// not at all with --quiet; --quiet also drops informational lines but never
// the output; nngraph-onnx-conformance --json - prints a report that parses
// and has the documented fields; the shared options (-O, --backend, --dim,
// --threads) have one help text and refuse a bad value alike on every tool.
//
//===----------------------------------------------------------------------===//

#include "DriverTestUtils.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Tensor.h"
#include "nngraph/tools/BenchDriver.h"
#include "nngraph/tools/ConformanceDriver.h"
#include "nngraph/tools/ConvertDriver.h"
#include "nngraph/tools/InspectDriver.h"
#include "nngraph/tools/OptDriver.h"
#include "nngraph/tools/QuantizeDriver.h"
#include "nngraph/tools/RunDriver.h"
#include "nngraph/tools/ViewDriver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <unistd.h>

using namespace nng;
namespace fs = std::filesystem;

namespace {

using test::SmallCnn;
const std::string NodeTests = "/usr/share/libonnx-testdata/data/node";

using Result = test::DriverResult;
using Driver = test::DriverFn;

struct Tool {
  const char *Name;
  Driver Run;
};

const std::vector<Tool> &allTools() {
  static const std::vector<Tool> All = {
      {"nngraph-opt",
       [](const std::vector<std::string> &A, std::ostream &O, std::ostream &E) {
         std::istringstream In;
         return tools::runOptDriver(A, In, O, E);
       }},
      {"nngraph-run", tools::runRunDriver},
      {"nngraph-inspect", tools::runInspectDriver},
      {"nngraph-quantize", tools::runQuantizeDriver},
      {"nngraph-convert", tools::runConvertDriver},
      {"nngraph-onnx-conformance", tools::runConformanceDriver},
      {"nngraph-bench", tools::runBenchDriver},
      {"nngraph-view", tools::runViewDriver},
  };
  return All;
}

Result runTool(const char *Name, std::vector<std::string> Args) {
  for (const Tool &T : allTools())
    if (std::string_view(T.Name) == Name)
      return test::runDriver(T.Run, Name, std::move(Args));
  ADD_FAILURE() << "no tool " << Name;
  return {};
}

/// Lines of Text that start with Prefix.
std::vector<std::string> linesStartingWith(const std::string &Text,
                                           const std::string &Prefix) {
  std::vector<std::string> Lines;
  std::istringstream IS(Text);
  for (std::string L; std::getline(IS, L);)
    if (L.rfind(Prefix, 0) == 0)
      Lines.push_back(L);
  return Lines;
}

class ToolConventionsTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = fs::temp_directory_path() /
          ("nngraph-conventions-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(Dir);
    fs::create_directories(Dir);
  }
  void TearDown() override { fs::remove_all(Dir); }
  std::string path(const std::string &Name) { return (Dir / Name).string(); }

  /// Three tiny ONNX backend tests (one Abs, two Acos), as folders.
  std::vector<std::string> threeTests() {
    if (!fs::exists(NodeTests + "/test_abs"))
      return {};
    return {NodeTests + "/test_abs", NodeTests + "/test_acos",
            NodeTests + "/test_acos_example"};
  }

  fs::path Dir;
};

} // namespace

TEST_F(ToolConventionsTest, EveryHelpListsTheExitStatusesAndQuiet) {
  for (const Tool &T : allTools()) {
    Result R = test::runDriver(T.Run, T.Name, {"--help"});
    EXPECT_EQ(R.Status, 0) << T.Name;
    EXPECT_NE(R.Out.find("Exit status: 0 success; 1 "), std::string::npos)
        << T.Name << "\n"
        << R.Out;
    EXPECT_NE(R.Out.find("; 2 bad command line"), std::string::npos)
        << T.Name << "\n"
        << R.Out;
    EXPECT_NE(R.Out.find("-q,--quiet"), std::string::npos) << T.Name;
    // A flag no tool has is a usage error, status 2, on every tool.
    Result Bad = test::runDriver(T.Run, T.Name, {"--no-such-flag"});
    EXPECT_EQ(Bad.Status, 2) << T.Name;
  }
  // nngraph-bench keeps its own statuses after the shared ones.
  Result Bench = runTool("nngraph-bench", {"--help"});
  EXPECT_NE(Bench.Out.find("; 3 --vs-ort but ONNX Runtime is not installed"),
            std::string::npos);
  EXPECT_NE(Bench.Out.find("; 4 --vs-ort and the outputs differ"),
            std::string::npos);
}

TEST_F(ToolConventionsTest, SharedOptionsSayAndCheckTheSameEverywhere) {
  struct Shared {
    const char *Option, *Bad, *Help, *Message;
    std::vector<const char *> Tools;
  };
  const std::vector<Shared> All = {
      {"-O",
       "3",
       "Optimize with the -O pipeline LEVEL",
       "-O: Value 3 not in range 0 to 2",
       {"nngraph-opt", "nngraph-run", "nngraph-bench"}},
      {"--backend",
       "no-such-backend",
       "(reference",
       "--backend: unknown backend 'no-such-backend' (available: reference",
       {"nngraph-run", "nngraph-bench", "nngraph-quantize",
        "nngraph-onnx-conformance"}},
      {"--dim",
       "N",
       "Value of a symbolic dim of the model's inputs",
       "--dim: bad dim binding 'N': expected NAME=VALUE",
       {"nngraph-run", "nngraph-bench", "nngraph-inspect", "nngraph-quantize"}},
      {"--threads",
       "0",
       "Threads of the parallel loops and oneDNN",
       "--threads: Value 0 not in range 1 to 4096",
       {"nngraph-run", "nngraph-bench"}},
  };
  for (const Shared &S : All)
    for (const char *Name : S.Tools) {
      Result Help = runTool(Name, {"--help"});
      EXPECT_NE(Help.Out.find(S.Help), std::string::npos)
          << Name << " " << S.Option;
      // The model does not exist: status 2 (not 1) shows that the value
      // was refused when the command line was parsed.
      std::vector<std::string> Args = {path("absent.onnx"), S.Option, S.Bad};
      if (std::string_view(Name) == "nngraph-quantize")
        Args.insert(Args.end(), {"-o", path("out.onnx")});
      Result R = runTool(Name, Args);
      EXPECT_EQ(R.Status, 2) << Name << " " << S.Option << "\n" << R.Err;
      EXPECT_NE(R.Err.find(S.Message), std::string::npos)
          << Name << " " << S.Option << "\n"
          << R.Err;
    }
}

TEST_F(ToolConventionsTest, ConformanceProgressIsPlainLinesOnStderr) {
  std::vector<std::string> Tests = threeTests();
  if (Tests.empty())
    GTEST_SKIP() << "libonnx-testdata is not installed";
  Result R = runTool("nngraph-onnx-conformance", Tests);
  ASSERT_EQ(R.Status, 0) << R.Err;
  // Not a terminal: one line per test (there are under ten), no redraws.
  EXPECT_EQ(linesStartingWith(R.Err, "nngraph-onnx-conformance: running "
                                     "tests: "),
            (std::vector<std::string>{
                "nngraph-onnx-conformance: running tests: 1/3 tests (33%)",
                "nngraph-onnx-conformance: running tests: 2/3 tests (66%)",
                "nngraph-onnx-conformance: running tests: 3/3 tests (100%)"}))
      << R.Err;
  EXPECT_EQ(R.Err.find('\r'), std::string::npos);
  // What scripts read stays on stdout, as before.
  EXPECT_NE(R.Out.find("PASS node/test_abs\n"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("node: 3 passed, 0 failed, 0 skipped\n"),
            std::string::npos)
      << R.Out;
  EXPECT_EQ(R.Out.find("running tests"), std::string::npos);

  Result Q = runTool("nngraph-onnx-conformance",
                     {Tests[0], Tests[1], Tests[2], "--quiet"});
  ASSERT_EQ(Q.Status, 0) << Q.Err;
  EXPECT_EQ(Q.Err, "");
  EXPECT_EQ(Q.Out.find("PASS"), std::string::npos) << Q.Out;
  EXPECT_NE(Q.Out.find("3 passed, 0 failed, 0 skipped"), std::string::npos);
}

TEST_F(ToolConventionsTest, ConformanceJsonOnStdoutHasTheDocumentedFields) {
  std::vector<std::string> Tests = threeTests();
  if (Tests.empty())
    GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<std::string> Args = Tests;
  Args.insert(Args.end(), {"--json", "-"});
  Result R = runTool("nngraph-onnx-conformance", Args);
  ASSERT_EQ(R.Status, 0) << R.Err;
  // Only the JSON object is on stdout: it parses as a whole.
  nlohmann::json J = nlohmann::json::parse(R.Out);
  for (const char *Key : {"date", "backend", "rtol", "atol", "folders", "total",
                          "tests", "seconds"})
    EXPECT_TRUE(J.contains(Key)) << Key << "\n" << R.Out;
  EXPECT_EQ(J["backend"], "reference");
  EXPECT_EQ(J["total"]["passed"], 3);
  EXPECT_EQ(J["total"]["failed"], 0);
  EXPECT_EQ(J["folders"]["node"]["passed"], 3);
  ASSERT_EQ(J["tests"].size(), 3u);
  EXPECT_EQ(J["tests"][0]["name"], "node/test_abs");
  EXPECT_EQ(J["tests"][0]["status"], "PASS");
  EXPECT_FALSE(J.contains("baseline"));

  // With --baseline the report says which folders moved; a regression
  // exits 1 and the JSON still parses.
  { std::ofstream(path("baseline.txt")) << "node 5\n"; }
  Args.insert(Args.end(), {"--baseline", path("baseline.txt")});
  Result B = runTool("nngraph-onnx-conformance", Args);
  EXPECT_EQ(B.Status, 1) << B.Err;
  nlohmann::json JB = nlohmann::json::parse(B.Out);
  ASSERT_EQ(JB["baseline"]["changes"].size(), 1u) << B.Out;
  EXPECT_EQ(JB["baseline"]["changes"][0]["folder"], "node");
  EXPECT_EQ(JB["baseline"]["changes"][0]["passed"], 3);
  EXPECT_EQ(JB["baseline"]["changes"][0]["baseline"], 5);
  EXPECT_EQ(JB["baseline"]["changes"][0]["status"], "regression");

  // --json FILE still writes the file and keeps the text on stdout.
  Result F = runTool("nngraph-onnx-conformance",
                     {Tests[0], "--json", path("report.json"), "--quiet"});
  ASSERT_EQ(F.Status, 0) << F.Err;
  EXPECT_NE(F.Out.find("1 passed, 0 failed, 0 skipped"), std::string::npos);
  std::ifstream IS(path("report.json"));
  EXPECT_EQ(nlohmann::json::parse(IS)["total"]["passed"], 1);
}

TEST_F(ToolConventionsTest, QuantizeCalibrationProgressAndQuiet) {
  std::vector<std::string> Args = {
      SmallCnn,       "-o", path("q.onnx"), "--random-calibration", "24",
      "--batch-size", "8"};
  Result R = runTool("nngraph-quantize", Args);
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(linesStartingWith(R.Err, "nngraph-quantize: calibration pass 1"),
            (std::vector<std::string>{
                "nngraph-quantize: calibration pass 1: 1/3 batches (33%)",
                "nngraph-quantize: calibration pass 1: 2/3 batches (66%)",
                "nngraph-quantize: calibration pass 1: 3/3 batches (100%)"}))
      << R.Err;
  EXPECT_EQ(R.Err.find('\r'), std::string::npos);

  Args.push_back("--quiet");
  Result Q = runTool("nngraph-quantize", Args);
  ASSERT_EQ(Q.Status, 0) << Q.Err;
  EXPECT_EQ(Q.Err, "");
  EXPECT_NE(Q.Out.find("quantized "), std::string::npos) << Q.Out;
}

TEST_F(ToolConventionsTest, QuietKeepsTheOutputAndDropsInformationalLines) {
  // nngraph-convert reports its key remapping on stderr; --quiet drops it.
  weights::TensorMap M;
  M.insert("w", rt::Tensor::fromVector<float>({1, 2, 3, 4}, Shape{2, 2}));
  weights::writeNpz(path("w.npz"), M);
  std::vector<std::string> Args = {path("w.npz"), path("w.safetensors"),
                                   "--add-prefix", "m."};
  Result Loud = runTool("nngraph-convert", Args);
  ASSERT_EQ(Loud.Status, 0) << Loud.Err;
  EXPECT_NE(Loud.Err, "");
  Args.push_back("--quiet");
  Result Quiet = runTool("nngraph-convert", Args);
  ASSERT_EQ(Quiet.Status, 0) << Quiet.Err;
  EXPECT_EQ(Quiet.Err, "");
  EXPECT_EQ(Quiet.Out, Loud.Out);
  EXPECT_NE(Quiet.Out.find("wrote "), std::string::npos);

  // Every other tool takes --quiet and still prints what was asked for.
  Result Opt = runTool("nngraph-opt", {SmallCnn, "-O1", "--quiet"});
  EXPECT_EQ(Opt.Status, 0) << Opt.Err;
  EXPECT_NE(Opt.Out.find("graph"), std::string::npos);
  Result Run = runTool("nngraph-run", {SmallCnn, "--quiet", "--json"});
  EXPECT_EQ(Run.Status, 0) << Run.Err;
  EXPECT_NO_THROW(nlohmann::json::parse(Run.Out));
  Result Inspect = runTool("nngraph-inspect", {SmallCnn, "--quiet"});
  EXPECT_EQ(Inspect.Status, 0) << Inspect.Err;
  EXPECT_NE(Inspect.Out, "");
  for (const Result *R : {&Opt, &Run, &Inspect})
    EXPECT_EQ(R->Err, "");
}
