//===- BenchDriverTest.cpp - nngraph-bench, run in-process ----------------===//
//
// nngraph-bench on the bundled small CNN: the --json report has the run
// count asked for and sane statistics (min <= p50 <= p90 <= p99 <= max,
// positive throughput, a peak RSS at least the starting one), the text
// report names each measure, progress goes to the error stream unless
// --quiet, and bad command lines (2) are told apart from bad models (1).
// --vs-ort prints the ratio table with outputs that agree (SKIPPED when
// node or onnxruntime-node is missing), and says plainly, with exit status
// 3, when ONNX Runtime cannot be started, still reporting nngraph's part.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/BenchDriver.h"
#include "DriverTestUtils.h"
#include "common/TempDirTest.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/runtime/BuildConfig.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace nng;
using nlohmann::json;

namespace {

using test::SmallCnn;
using Result = test::DriverResult;

Result runBench(std::vector<std::string> Args) {
  return test::runDriver(tools::runBenchDriver, "nngraph-bench", std::move(Args));
}

/// Checks the ordering of a latency_ms object with Runs entries.
void expectSaneLatency(const json &L, size_t Runs) {
  ASSERT_EQ(L.at("runs").size(), Runs);
  double Min = L.at("min"), P50 = L.at("p50"), P90 = L.at("p90"),
         P99 = L.at("p99"), Max = L.at("max"), Mean = L.at("mean");
  EXPECT_GT(Min, 0);
  EXPECT_LE(Min, P50);
  EXPECT_LE(P50, P90);
  EXPECT_LE(P90, P99);
  EXPECT_LE(P99, Max);
  EXPECT_LE(Min, Mean);
  EXPECT_LE(Mean, Max);
}

class BenchDriverTest : public test::TempDirTest {
protected:
  BenchDriverTest() : TempDirTest("nngraph-bench-test") {}
};

} // namespace

TEST_F(BenchDriverTest, JsonReportHasTheRunsAndSaneStatistics) {
  Result R = runBench({SmallCnn, "--dim", "N=4", "--warmup", "1", "--runs", "4",
                       "--rounds", "3", "--json", "--quiet"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(R.Err, "");
  json J = json::parse(R.Out);
  EXPECT_EQ(J.at("runs"), 12);
  EXPECT_EQ(J.at("rounds"), 3);
  EXPECT_EQ(J.at("runs_per_round"), 4);
  EXPECT_EQ(J.at("warmup"), 1);
  EXPECT_EQ(J.at("dims").at("N"), 4);
  EXPECT_EQ(J.at("inputs")[0].at("shape"), json({4, 1, 28, 28}));
  expectSaneLatency(J.at("latency_ms"), 12);
  EXPECT_GT(J.at("time_ms").at("compile").get<double>(), 0);
  const json &T = J.at("throughput");
  EXPECT_EQ(T.at("batch"), 4);
  double Ips = T.at("inferences_per_s");
  EXPECT_NEAR(Ips, 1000.0 / J.at("latency_ms").at("mean").get<double>(),
              1e-6 * Ips);
  EXPECT_DOUBLE_EQ(T.at("samples_per_s").get<double>(), 4 * Ips);
  const json &M = J.at("memory");
  EXPECT_GT(M.at("rss_before_bytes").get<int64_t>(), 0);
  EXPECT_GE(M.at("peak_rss_bytes").get<int64_t>(),
            M.at("rss_before_bytes").get<int64_t>());
  EXPECT_FALSE(J.contains("ort"));
}

TEST_F(BenchDriverTest, StatsReportTheCpuArena) {
#if NNGRAPH_HAVE_ONEDNN
  Result R = runBench({SmallCnn, "--backend", "cpu", "--runs", "2", "--rounds",
                       "1", "--stats", "--json", "--quiet"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  json J = json::parse(R.Out);
  int64_t Arena = J.at("stats").at("arena_bytes");
  EXPECT_GT(Arena, 0);
  EXPECT_EQ(J.at("memory").at("arena_bytes"), Arena);
  Result T = runBench({SmallCnn, "--backend", "cpu", "--runs", "2", "--rounds",
                       "1", "--stats", "--quiet"});
  EXPECT_NE(T.Out.find("memory: arena " + std::to_string(Arena) + " bytes"),
            std::string::npos)
      << T.Out;
#else
  GTEST_SKIP() << "built without oneDNN: no cpu backend";
#endif
}

TEST_F(BenchDriverTest, TextReportNamesEachMeasureAndProgressGoesToStderr) {
  Result R = runBench({SmallCnn, "--backend", "reference", "--runs", "3",
                       "--rounds", "2", "--warmup", "0"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  for (const char *Want :
       {"backend: reference", "compile: optimize",
        "latency: 6 runs (2 rounds "
        "of 3, after 0 warm-up): min",
        "p50", "p90", "p99", "throughput:", "inferences/s", "memory: peak RSS"})
    EXPECT_NE(R.Out.find(Want), std::string::npos) << Want << "\n" << R.Out;
  // Not a terminal: plain progress lines, one per round.
  EXPECT_NE(R.Err.find("nngraph-bench: round 1/2: nngraph median"),
            std::string::npos)
      << R.Err;
  EXPECT_NE(R.Err.find("nngraph-bench: round 2/2"), std::string::npos);
  EXPECT_EQ(R.Err.find('\r'), std::string::npos);
}

TEST_F(BenchDriverTest, BadCommandLinesExitTwoAndBadModelsOne) {
  for (const std::vector<std::string> &Args :
       std::vector<std::vector<std::string>>{
           {SmallCnn, "--runs", "0"},
           {SmallCnn, "--rounds", "-1"},
           {SmallCnn, "--dim", "N=zero"},
           {SmallCnn, "--backend", "no-such-backend"},
           {SmallCnn, "--no-such-flag"},
           {SmallCnn, "--tolerance", "-1"},
           {}}) {
    Result R = runBench(Args);
    EXPECT_EQ(R.Status, 2) << R.Err;
    EXPECT_NE(R.Err, "");
  }
  Result Missing = runBench({path("missing.onnx"), "--quiet"});
  EXPECT_EQ(Missing.Status, 1);
  EXPECT_NE(Missing.Err.find("missing.onnx"), std::string::npos) << Missing.Err;
  Result BadDim = runBench({SmallCnn, "--dim", "M=3", "--quiet"});
  EXPECT_EQ(BadDim.Status, 1);
  EXPECT_NE(BadDim.Err.find("no symbolic dim 'M'"), std::string::npos)
      << BadDim.Err;
  Result Help = runBench({"--help"});
  EXPECT_EQ(Help.Status, 0);
  EXPECT_NE(Help.Out.find("Exit status: 0 success"), std::string::npos);
  EXPECT_NE(Help.Out.find("--vs-ort"), std::string::npos);
}

TEST_F(BenchDriverTest, VsOrtWithoutOnnxRuntimeSaysSoAndStillReports) {
  Result R = runBench({SmallCnn, "--runs", "2", "--rounds", "1", "--quiet",
                       "--vs-ort", "--ort-script", path("no-such-script.mjs")});
  EXPECT_EQ(R.Status, tools::ExitOrtUnavailable) << R.Err;
  EXPECT_NE(R.Out.find("latency: 2 runs"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("vs ONNX Runtime: not available: the ONNX Runtime "
                       "script"),
            std::string::npos)
      << R.Out;
  EXPECT_NE(R.Err.find("ONNX Runtime is not available"), std::string::npos)
      << R.Err;

  Result J =
      runBench({SmallCnn, "--runs", "2", "--rounds", "1", "--quiet", "--json",
                "--vs-ort", "--ort-script", path("no-such-script.mjs")});
  EXPECT_EQ(J.Status, tools::ExitOrtUnavailable);
  json Ort = json::parse(J.Out).at("ort");
  EXPECT_FALSE(Ort.at("available").get<bool>());
  EXPECT_NE(Ort.at("reason").get<std::string>().find("no-such-script.mjs"),
            std::string::npos);
}

TEST_F(BenchDriverTest, VsOrtPrintsTheRatioTable) {
  // An ONNX file, as users pass them; the .nng is exported the same way.
  std::string Onnx = path("small_cnn.onnx");
  frontend::saveModel(*frontend::loadModel(SmallCnn), Onnx);
  Result J = runBench({Onnx, "--dim", "N=2", "--runs", "3", "--rounds", "2",
                       "--warmup", "1", "--pause", "0", "--vs-ort", "--json",
                       "--quiet"});
  if (J.Status == tools::ExitOrtUnavailable)
    GTEST_SKIP() << "ONNX Runtime is not available: " << J.Err;
  ASSERT_EQ(J.Status, 0) << J.Err << J.Out;
  json Ort = json::parse(J.Out).at("ort");
  EXPECT_TRUE(Ort.at("available").get<bool>());
  expectSaneLatency(Ort.at("latency_ms"), 6);
  EXPECT_TRUE(Ort.at("outputs").at("agree").get<bool>()) << Ort.dump();
  EXPECT_LT(Ort.at("outputs").at("max_abs_diff").get<double>(), 1e-3);
  EXPECT_GT(Ort.at("ratio").at("median").get<double>(), 0);
  EXPECT_GT(Ort.at("peak_rss_bytes").get<int64_t>(), 0);

  Result T = runBench({SmallCnn, "--runs", "3", "--rounds", "2", "--warmup",
                       "1", "--pause", "0", "--vs-ort"});
  ASSERT_EQ(T.Status, 0) << T.Err << T.Out;
  for (const char *Want :
       {"vs ONNX Runtime ", "2 interleaved rounds of 3 runs each", "compile ms",
        "median ms", "ONNX Runtime  ", "nngraph / ORT",
        "ratio of medians nngraph / ORT: ", "outputs: agree"})
    EXPECT_NE(T.Out.find(Want), std::string::npos) << Want << "\n" << T.Out;
  // The engines take turns, round by round.
  size_t R1 = T.Err.find("round 1/2: nngraph median");
  size_t Ort1 = T.Err.find("ONNX Runtime median", R1);
  size_t R2 = T.Err.find("round 2/2: nngraph median");
  EXPECT_LT(R1, Ort1);
  EXPECT_LT(Ort1, R2);
  EXPECT_NE(R2, std::string::npos) << T.Err;
}

// A stand-in for ort_peer.mjs that speaks its protocol and answers zeros:
// the outputs differ, which must give exit status 4 and say where.
TEST_F(BenchDriverTest, VsOrtOutputsThatDifferExitFour) {
  if (std::system("node --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "node (Node.js) is not installed (apt-get install nodejs)";
  std::ofstream(path("fake_peer.mjs")) << R"js(
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
say({ ready: true, ort_version: 'fake', compile_ms: 1 });
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.split(' ');
  if (cmd === 'run') say({ runs_ms: Array(Number(arg)).fill(0.5) });
  if (cmd === 'save') {
    fs.mkdirSync(arg, { recursive: true });
    fs.writeFileSync(path.join(arg, '0.bin'), Buffer.alloc(40));
    fs.writeFileSync(path.join(arg, 'tensors.json'), JSON.stringify({ tensors:
      [{ name: 'y', dtype: 'f32', shape: [1, 10], file: '0.bin' }] }));
    say({ saved: arg });
  }
  if (cmd === 'quit') break;
}
say({ peak_rss_bytes: 1 });
)js";
  Result R =
      runBench({SmallCnn, "--runs", "2", "--rounds", "2", "--quiet", "--pause",
                "0", "--vs-ort", "--ort-script", path("fake_peer.mjs")});
  EXPECT_EQ(R.Status, tools::ExitOutputsDiffer) << R.Err << R.Out;
  EXPECT_NE(R.Out.find("vs ONNX Runtime fake"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("outputs: DIFFER: output 'y', element 0: nngraph "),
            std::string::npos)
      << R.Out;
  // ONNX Runtime's side: 4 runs of 0.5 ms, ratio = nngraph's median / 0.5.
  Result J = runBench({SmallCnn, "--runs", "2", "--rounds", "2", "--quiet",
                       "--pause", "0", "--vs-ort", "--json", "--ort-script",
                       path("fake_peer.mjs")});
  ASSERT_EQ(J.Status, tools::ExitOutputsDiffer) << J.Err;
  json B = json::parse(J.Out);
  const json &Ort = B.at("ort");
  EXPECT_EQ(Ort.at("latency_ms").at("runs"), json({0.5, 0.5, 0.5, 0.5}));
  EXPECT_FALSE(Ort.at("outputs").at("agree").get<bool>());
  EXPECT_NEAR(Ort.at("ratio").at("median").get<double>(),
              B.at("latency_ms").at("p50").get<double>() / 0.5, 1e-9);
}
