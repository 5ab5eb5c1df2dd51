//===- RunDriverTest.cpp - nngraph-run, run in-process --------------------===//
//
// nngraph-run on the bundled small CNN: shapes follow --dim, outputs are
// deterministic for a seed, --json is one parseable object, and bad command
// lines (2) are told apart from bad models (1).
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/RunDriver.h"
#include "nngraph/runtime/BuildConfig.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;

namespace {

const std::string SmallCnn =
    std::string(NNGRAPH_SOURCE_DIR) + "/examples/models/small_cnn.nng";

struct Result {
  int Status;
  std::string Out, Err;
};

Result runRun(std::vector<std::string> Args) {
  Args.insert(Args.begin(), "nngraph-run");
  std::ostringstream Out, Err;
  int Status = tools::runRunDriver(Args, Out, Err);
  return {Status, Out.str(), Err.str()};
}

/// The "output ..." lines of a text report (everything but the times).
std::string outputLines(const std::string &Report) {
  std::istringstream IS(Report);
  std::string Line, Result;
  while (std::getline(IS, Line))
    if (Line.rfind("output ", 0) == 0)
      Result += Line + "\n";
  return Result;
}

} // namespace

TEST(RunDriverTest, RunsTheSmallCnnWithBatchOneByDefault) {
  Result R = runRun({SmallCnn});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("input %x: f32[1, 1, 28, 28]"), std::string::npos)
      << R.Out;
  EXPECT_NE(R.Out.find("output %y: f32[1, 10] = ["), std::string::npos)
      << R.Out;
  EXPECT_NE(R.Out.find("dims: N=1"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("time: optimize"), std::string::npos) << R.Out;
}

TEST(RunDriverTest, DimsBindSymbolsAndSeedsAreDeterministic) {
  Result A = runRun({SmallCnn, "--dim", "N=3", "--input-seed", "7"});
  ASSERT_EQ(A.Status, 0) << A.Err;
  EXPECT_NE(A.Out.find("output %y: f32[3, 10]"), std::string::npos) << A.Out;
  Result B = runRun({SmallCnn, "--dim", "N=3", "--input-seed", "7"});
  EXPECT_EQ(outputLines(A.Out), outputLines(B.Out));
  Result C = runRun({SmallCnn, "--dim", "N=3", "--input-seed", "8"});
  EXPECT_NE(outputLines(A.Out), outputLines(C.Out));
}

TEST(RunDriverTest, JsonReportHasShapesValuesAndTimes) {
  Result R = runRun({SmallCnn, "--json", "--repeat", "3", "--max-values", "4"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  for (const char *Key :
       {"\"model\"", "\"backend\": \"reference\"", "\"outputs\"", "\"shape\"",
        "\"values\"", "\"time_ms\"", "\"run_median\"", "\"N\": 1"})
    EXPECT_NE(R.Out.find(Key), std::string::npos) << "missing " << Key;
  EXPECT_EQ(R.Out.front(), '{');
}

TEST(RunDriverTest, StatsSayWhatTheCpuBackendDid) {
#if NNGRAPH_HAVE_ONEDNN
  Result R = runRun({SmallCnn, "--backend", "cpu", "--stats"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  // Every node of the small CNN is lowered: no fallback lines.
  EXPECT_NE(R.Out.find("stats: "), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find(" 0 node kernels)"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("memory: arena "), std::string::npos) << R.Out;
  EXPECT_EQ(R.Out.find("fallback: "), std::string::npos) << R.Out;
  Result J = runRun({SmallCnn, "--backend", "cpu", "--stats", "--json"});
  ASSERT_EQ(J.Status, 0) << J.Err;
  EXPECT_NE(J.Out.find("\"arena_bytes\""), std::string::npos) << J.Out;
  EXPECT_NE(J.Out.find("\"fallbacks\": []"), std::string::npos) << J.Out;
  // The reference backend has no compiled schedule: nothing to report.
  Result Ref = runRun({SmallCnn, "--stats"});
  ASSERT_EQ(Ref.Status, 0) << Ref.Err;
  EXPECT_EQ(Ref.Out.find("stats: "), std::string::npos) << Ref.Out;
#else
  GTEST_SKIP() << "SKIPPED: built without oneDNN, there is no cpu backend";
#endif
}

TEST(RunDriverTest, ProfileAndIdleReportTheirMeasurements) {
#if NNGRAPH_HAVE_ONEDNN
  Result R = runRun({SmallCnn, "--backend", "cpu", "--repeat", "3",
                     "--profile", "--idle", "20"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("profile: 3 run(s), "), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find(" ms  #"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("idle: 20 ms after the last run, "), std::string::npos)
      << R.Out;
  Result J = runRun({SmallCnn, "--backend", "cpu", "--profile", "--json"});
  ASSERT_EQ(J.Status, 0) << J.Err;
  EXPECT_NE(J.Out.find("\"ms_per_run\""), std::string::npos) << J.Out;
  // The reference backend has no steps to time: a usage error, said so.
  Result Ref = runRun({SmallCnn, "--profile"});
  EXPECT_EQ(Ref.Status, 1);
  EXPECT_NE(Ref.Err.find("--backend cpu"), std::string::npos) << Ref.Err;
#else
  GTEST_SKIP() << "SKIPPED: built without oneDNN, there is no cpu backend";
#endif
}

TEST(RunDriverTest, OptimizationLevelsGiveTheSameOutputs) {
  Result O2 = runRun({SmallCnn});
  Result O0 = runRun({SmallCnn, "-O0"});
  ASSERT_EQ(O2.Status, 0) << O2.Err;
  ASSERT_EQ(O0.Status, 0) << O0.Err;
  EXPECT_NE(O2.Out.find("optimized: -O2, "), std::string::npos) << O2.Out;
  EXPECT_EQ(O0.Out.find("optimized:"), std::string::npos) << O0.Out;
  EXPECT_EQ(outputLines(O2.Out), outputLines(O0.Out));
  EXPECT_EQ(runRun({SmallCnn, "-O7"}).Status, 2);
}

TEST(RunDriverTest, BadCommandLinesExitTwo) {
  EXPECT_EQ(runRun({}).Status, 2); // No model.
  EXPECT_EQ(runRun({SmallCnn, "--bogus"}).Status, 2);
  EXPECT_EQ(runRun({SmallCnn, "--dim", "N"}).Status, 2);
  EXPECT_EQ(runRun({SmallCnn, "--dim", "N=0"}).Status, 2);
  EXPECT_EQ(runRun({SmallCnn, "--repeat", "0"}).Status, 2);
  Result R = runRun({SmallCnn, "--backend", "no-such-backend"});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("reference"), std::string::npos) << R.Err;
}

TEST(RunDriverTest, BadModelsExitOne) {
  Result Missing = runRun({"/nonexistent/model.nng"});
  EXPECT_EQ(Missing.Status, 1);
  EXPECT_NE(Missing.Err.find("/nonexistent/model.nng"), std::string::npos);
  Result WrongDim = runRun({SmallCnn, "--dim", "M=2"});
  EXPECT_EQ(WrongDim.Status, 1);
  EXPECT_NE(WrongDim.Err.find("they have: N"), std::string::npos)
      << WrongDim.Err;
}
