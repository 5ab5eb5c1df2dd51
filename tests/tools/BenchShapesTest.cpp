//===- BenchShapesTest.cpp - nngraph-bench's shape lists ------------------===//
//
// nngraph-bench's shape-list mode on the bundled small CNN (its batch N is
// its one symbolic dim): --dim-range draws R x K requests from the range,
// the same ones for the same --shape-seed; the first request at a shape
// new to the process gets a repeat run and a new-shape cost, later ones do
// not; --shapes FILE plays its lines once per round; the text report names
// each measure; bad ranges and files are refused with the usual statuses
// (2 for the command line, 1 for what the model or the file says). The
// drawing and the file parser are checked directly too. Nothing here is
// timed against a bound: the times only have to be there and be ordered.
//
//===----------------------------------------------------------------------===//

#include "../../tools/lib/BenchShapes.h"
#include "DriverTestUtils.h"
#include "common/TempDirTest.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/tools/BenchDriver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace nng;
using nlohmann::json;

namespace {

using test::SmallCnn;
using Result = test::DriverResult;

Result runBench(std::vector<std::string> Args) {
  return test::runDriver(tools::runBenchDriver, "nngraph-bench",
                         std::move(Args));
}

class BenchShapesTest : public test::TempDirTest {
protected:
  BenchShapesTest() : TempDirTest("nngraph-bench-shapes-test") {}

  std::string writeFile(const std::string &Name, const std::string &Text) {
    std::ofstream(path(Name)) << Text;
    return path(Name);
  }
};

/// The N of each request of a --json report's shape list.
std::vector<int64_t> requestedN(const json &Shapes) {
  std::vector<int64_t> Ns;
  for (const json &Q : Shapes.at("requests"))
    Ns.push_back(Q.at("dims").at("N"));
  return Ns;
}

} // namespace

TEST_F(BenchShapesTest, DimRangeReportsEveryRequestAndTheNewShapeCost) {
  Result R = runBench({SmallCnn, "--dim-range", "N=1:4", "--runs", "5",
                       "--rounds", "2", "--warmup", "1", "--json", "--quiet"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(R.Err, "");
  json J = json::parse(R.Out);
  EXPECT_EQ(J.at("runs"), 10);
  const json &S = J.at("shapes");
  EXPECT_EQ(S.at("source"), "dim-range");
  EXPECT_EQ(S.at("ranges").at("N"), json({1, 4}));
  EXPECT_EQ(S.at("shape_seed"), 0);
  ASSERT_EQ(S.at("requests").size(), 10u);
  // The warm-up ran at N=1 (unbound), so N=1 is never new; every other N
  // is new at its first request only, and only that one has a repeat run.
  std::set<int64_t> Seen = {1};
  size_t News = 0;
  std::vector<double> Times;
  for (const json &Q : S.at("requests")) {
    int64_t N = Q.at("dims").at("N");
    EXPECT_GE(N, 1);
    EXPECT_LE(N, 4);
    bool New = Seen.insert(N).second;
    EXPECT_EQ(Q.at("new").get<bool>(), New) << Q.dump();
    EXPECT_EQ(Q.contains("repeat_ms"), New) << Q.dump();
    EXPECT_GT(Q.at("ms").get<double>(), 0);
    News += New;
    Times.push_back(Q.at("ms"));
  }
  EXPECT_EQ(S.at("new_shapes"), News);
  std::vector<int64_t> Ns = requestedN(S);
  EXPECT_EQ(S.at("distinct"), std::set<int64_t>(Ns.begin(), Ns.end()).size());
  // latency_ms is over the requests, in order.
  EXPECT_EQ(J.at("latency_ms").at("runs"), json(Times));
  const json &Cost = S.at("new_shape_cost_ms");
  EXPECT_EQ(Cost.at("count"), News);
  if (News > 0) {
    EXPECT_LE(Cost.at("median").get<double>(), Cost.at("max").get<double>());
    EXPECT_TRUE(Cost.at("max_dims").contains("N"));
  }
  EXPECT_EQ(S.at("per_shape").size(), S.at("distinct").get<size_t>());
  EXPECT_FALSE(J.contains("throughput"));
#if NNGRAPH_HAVE_ONEDNN
  // The warm-up's shape and each new one, compiled (the model's
  // convolutions write blocked layouts: no reshape) or reshaped.
  EXPECT_EQ(S.at("specializations"), 1 + News);
  EXPECT_EQ(S.at("reshaped"), 0);
#endif
}

TEST_F(BenchShapesTest, TheShapeSeedFixesTheDraws) {
  auto Draw = [&](const std::string &Seed) {
    Result R = runBench({SmallCnn, "--backend", "reference", "--dim-range",
                         "N=1:6", "--runs", "8", "--rounds", "1", "--warmup",
                         "0", "--shape-seed", Seed, "--json", "--quiet"});
    EXPECT_EQ(R.Status, 0) << R.Err;
    return requestedN(json::parse(R.Out).at("shapes"));
  };
  std::vector<int64_t> A = Draw("7");
  EXPECT_EQ(A, Draw("7"));
  EXPECT_NE(A, Draw("8"));
  std::vector<tools::DimBindings> Direct =
      tools::drawShapes({tools::parseDimRange("N=1:6")}, 8, 7);
  ASSERT_EQ(Direct.size(), A.size());
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_EQ(Direct[I].at("N"), A[I]);
}

TEST_F(BenchShapesTest, DrawsCoverTheRangeAndStayInIt) {
  std::vector<tools::DimBindings> D = tools::drawShapes(
      {tools::parseDimRange("S=8:12"), tools::parseDimRange("N=2:2")}, 200, 0);
  std::set<int64_t> Values;
  for (const tools::DimBindings &B : D) {
    ASSERT_EQ(B.size(), 2u);
    EXPECT_EQ(B.at("N"), 2);
    Values.insert(B.at("S"));
  }
  EXPECT_EQ(Values, std::set<int64_t>({8, 9, 10, 11, 12}));
}

TEST_F(BenchShapesTest, ShapesFilePlaysItsLinesOncePerRound) {
  std::string File = writeFile("requests.txt", "# batch sizes\n"
                                               "N=2\n"
                                               "\n"
                                               "  N=3, \n"
                                               "N=2\n");
  Result J = runBench({SmallCnn, "--shapes", File, "--rounds", "2", "--warmup",
                       "1", "--json", "--quiet"});
  ASSERT_EQ(J.Status, 0) << J.Err;
  const json S = json::parse(J.Out).at("shapes");
  EXPECT_EQ(S.at("source"), "file");
  EXPECT_EQ(S.at("file"), File);
  EXPECT_EQ(requestedN(S), std::vector<int64_t>({2, 3, 2, 2, 3, 2}));
  std::vector<bool> New;
  for (const json &Q : S.at("requests"))
    New.push_back(Q.at("new"));
  EXPECT_EQ(New, std::vector<bool>({true, true, false, false, false, false}));
  EXPECT_EQ(S.at("new_shape_cost_ms").at("count"), 2);
  EXPECT_EQ(S.at("seen_shape_latency_ms").at("runs").size(), 4u);
  ASSERT_EQ(S.at("per_shape").size(), 2u);
  EXPECT_EQ(S.at("per_shape")[0].at("later_ms").size(), 3u);

  Result T =
      runBench({SmallCnn, "--shapes", File, "--rounds", "2", "--warmup", "1"});
  ASSERT_EQ(T.Status, 0) << T.Err;
  for (const char *Want :
       {"(the warm-up's; each request binds its own)",
        "shapes: 6 requests in 2 rounds, from ", "2 distinct shapes, 2 new",
        "latency per request: min ", "p99 ",
        "at shapes seen before: 4 requests", "repeat run at a new shape: p50 ",
        "new-shape cost (first run minus repeat run, 2 shapes): median ",
        "per shape:", "N=3", "memory: peak RSS"})
    EXPECT_NE(T.Out.find(Want), std::string::npos) << Want << "\n" << T.Out;
  EXPECT_EQ(T.Out.find("throughput"), std::string::npos) << T.Out;
  EXPECT_NE(T.Err.find("round 2/2: 3 requests, p50 "), std::string::npos)
      << T.Err;
}

TEST_F(BenchShapesTest, BadRangesAndFilesAreRefused) {
  std::string Good = writeFile("good.txt", "N=2\n");
  for (const std::vector<std::string> &Args :
       std::vector<std::vector<std::string>>{
           {SmallCnn, "--dim-range", "N=4:1"},
           {SmallCnn, "--dim-range", "N"},
           {SmallCnn, "--dim-range", "N=0:3"},
           {SmallCnn, "--dim-range", "N=1:x"},
           {SmallCnn, "--dim-range", "N=1:3", "--vs-ort"},
           {SmallCnn, "--shapes", Good, "--dim-range", "N=1:3"},
           {SmallCnn, "--shapes", Good, "--inputs", "x.npz"}}) {
    Result R = runBench(Args);
    EXPECT_EQ(R.Status, 2) << R.Err;
    EXPECT_NE(R.Err, "");
  }
  Result Unknown = runBench({SmallCnn, "--dim-range", "M=1:3", "--quiet"});
  EXPECT_EQ(Unknown.Status, 1);
  EXPECT_NE(Unknown.Err.find("no symbolic dim 'M'"), std::string::npos)
      << Unknown.Err;
  Result Missing = runBench({SmallCnn, "--shapes", path("none.txt")});
  EXPECT_EQ(Missing.Status, 1);
  EXPECT_NE(Missing.Err.find("none.txt"), std::string::npos) << Missing.Err;
  std::string Bad = writeFile("bad.txt", "N=2\nN=two\n");
  Result BadLine = runBench({SmallCnn, "--shapes", Bad, "--quiet"});
  EXPECT_EQ(BadLine.Status, 1);
  EXPECT_NE(BadLine.Err.find("bad.txt:2: "), std::string::npos) << BadLine.Err;
  Result Empty =
      runBench({SmallCnn, "--shapes", writeFile("empty.txt", "# none\n")});
  EXPECT_EQ(Empty.Status, 1);
  EXPECT_NE(Empty.Err.find("lists no request"), std::string::npos) << Empty.Err;
  EXPECT_THROW(tools::readShapesFile(Bad), Error);
  Result Help = runBench({"--help"});
  EXPECT_NE(Help.Out.find("--dim-range"), std::string::npos);
  EXPECT_NE(Help.Out.find("--shapes"), std::string::npos);
}
