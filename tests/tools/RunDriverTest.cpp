//===- RunDriverTest.cpp - nngraph-run, run in-process --------------------===//
//
// nngraph-run on the bundled small CNN: shapes follow --dim, outputs are
// deterministic for a seed, --json is one parseable object, and bad command
// lines (2) are told apart from bad models (1). --inputs FILE.npz and
// --save-outputs FILE.npz: the saved outputs equal the reference backend's
// on the same arrays, the arrays bind the dims (a contradicting --dim is
// refused), and data that does not fit fails before anything is written.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/RunDriver.h"
#include "DriverTestUtils.h"
#include "common/TempDirTest.h"
#include "nngraph/ir/Inputs.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/BuildConfig.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace nng;

namespace {

using test::SmallCnn;
using Result = test::DriverResult;

Result runRun(std::vector<std::string> Args) {
  return test::runDriver(tools::runRunDriver, "nngraph-run", std::move(Args));
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
  EXPECT_NE(R.Out.find("shapes: 1 compiled"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("stages: bind "), std::string::npos) << R.Out;
  EXPECT_EQ(R.Out.find("fallback: "), std::string::npos) << R.Out;
  Result J = runRun({SmallCnn, "--backend", "cpu", "--stats", "--json"});
  ASSERT_EQ(J.Status, 0) << J.Err;
  EXPECT_NE(J.Out.find("\"arena_bytes\""), std::string::npos) << J.Out;
  EXPECT_NE(J.Out.find("\"fallbacks\": []"), std::string::npos) << J.Out;
  EXPECT_NE(J.Out.find("\"weight_packs\""), std::string::npos) << J.Out;
  auto Stats = nlohmann::json::parse(J.Out).at("stats");
  ASSERT_EQ(Stats.at("stages").size(), 4u) << J.Out;
  EXPECT_EQ(Stats.at("stages")[0].at("name"), "bind");
  EXPECT_EQ(Stats.at("stages")[3].at("name"), "memory");
  EXPECT_GE(Stats.at("stages")[2].at("ms").get<double>(), 0.0);
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
  Result R = runRun({SmallCnn, "--backend", "cpu", "--repeat", "3", "--profile",
                     "--idle", "20"});
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

TEST(RunDriverTest, PrintScheduleListsEveryStepWithItsOperands) {
#if NNGRAPH_HAVE_ONEDNN
  Result R = runRun({SmallCnn, "--backend", "cpu", "--dim", "N=2",
                     "--print-schedule", "--max-values", "0"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("schedule: "), std::string::npos) << R.Out;
  // The compile's stages, and the batch dim as its symbol and extent.
  EXPECT_NE(R.Out.find("stages: bind ("), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("), memory ("), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("  input %x f32[N=2,1,28,28] input\n"),
            std::string::npos)
      << R.Out;
  EXPECT_NE(R.Out.find(" oneDNN convolution "), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("  output %y f32[N=2,10] output[0]\n"),
            std::string::npos)
      << R.Out;
  Result J = runRun({SmallCnn, "--backend", "cpu", "--print-schedule", "--json"});
  ASSERT_EQ(J.Status, 0) << J.Err;
  EXPECT_NE(J.Out.find("\"schedule\": \"schedule: "), std::string::npos)
      << J.Out;
  // The reference backend compiles no schedule: a usage error, said so.
  Result Ref = runRun({SmallCnn, "--print-schedule"});
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

namespace {

class RunDriverIoTest : public test::TempDirTest {
protected:
  RunDriverIoTest() : TempDirTest("nngraph-run-test") {}

  /// Writes a batch of Batch deterministic small-CNN inputs to in.npz and
  /// returns them.
  rt::Tensor writeInputs(int64_t Batch) {
    rt::Tensor X = ir::deterministicTensor(
        DType::F32, Shape{Batch, 1, 28, 28}, /*Seed=*/42);
    weights::TensorMap M;
    M.insert("x", X);
    weights::writeNpz(path("in.npz"), M);
    return X;
  }
};

/// Expects A and B to have one shape and values within Tol (relative to
/// the larger magnitude, and absolute near zero).
void expectClose(const rt::Tensor &A, const rt::Tensor &B, double Tol) {
  ASSERT_EQ(A.shape(), B.shape());
  for (int64_t I = 0; I < A.numel(); ++I) {
    double X = A.getFlat(I), Y = B.getFlat(I);
    EXPECT_LE(std::abs(X - Y), Tol * std::max({1.0, std::abs(X), std::abs(Y)}))
        << "element " << I << ": " << X << " vs " << Y;
  }
}

} // namespace

TEST_F(RunDriverIoTest, SavedOutputsOfFileInputsEqualTheReferenceBackends) {
  rt::Tensor X = writeInputs(3);
  auto G = frontend::loadModel(SmallCnn);
  std::vector<rt::Tensor> Ref = backends::runReference(*G, {X});
  ASSERT_EQ(Ref.size(), 1u);

  // -O0 on the reference backend computes exactly what runReference does.
  Result R0 = runRun({SmallCnn, "-O0", "--inputs", path("in.npz"),
                      "--save-outputs", path("out0.npz")});
  ASSERT_EQ(R0.Status, 0) << R0.Err;
  EXPECT_NE(
      R0.Out.find("input %x: f32[3, 1, 28, 28] (from " + path("in.npz") + ")"),
      std::string::npos)
      << R0.Out;
  EXPECT_NE(R0.Out.find("dims: N=3"), std::string::npos) << R0.Out;
  EXPECT_NE(R0.Out.find("output %y: f32[3, 10]"), std::string::npos) << R0.Out;
  EXPECT_NE(R0.Out.find("saved: 1 output to " + path("out0.npz")),
            std::string::npos)
      << R0.Out;
  weights::TensorMap Out0 = weights::readNpz(path("out0.npz"));
  ASSERT_EQ(Out0.keys(), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(Out0.at("y").equals(Ref[0])) << Out0.at("y").toString();

  // -O2 folds the batch norms: equal up to float rounding.
  Result R2 = runRun({SmallCnn, "--inputs", path("in.npz"), "--repeat", "2",
                      "--save-outputs", path("out2.npz")});
  ASSERT_EQ(R2.Status, 0) << R2.Err;
  expectClose(weights::readNpz(path("out2.npz")).at("y"), Ref[0], 1e-5);

#if NNGRAPH_HAVE_ONEDNN
  Result Cpu = runRun({SmallCnn, "--backend", "cpu", "--inputs", path("in.npz"),
                       "--save-outputs", path("cpu.npz")});
  ASSERT_EQ(Cpu.Status, 0) << Cpu.Err;
  expectClose(weights::readNpz(path("cpu.npz")).at("y"), Ref[0], 1e-4);
#endif
}

TEST_F(RunDriverIoTest, JsonSaysWhereTheInputsCameFrom) {
  writeInputs(2);
  Result R = runRun({SmallCnn, "--json", "--inputs", path("in.npz"),
                     "--save-outputs", path("out.npz")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  nlohmann::json J = nlohmann::json::parse(R.Out);
  EXPECT_EQ(J["input_source"], "file");
  EXPECT_EQ(J["inputs_file"], path("in.npz"));
  EXPECT_FALSE(J.contains("seed"));
  EXPECT_EQ(J["saved_outputs"], path("out.npz"));
  EXPECT_EQ(J["dims"]["N"], 2);
  EXPECT_EQ(J["inputs"][0]["shape"], (std::vector<int64_t>{2, 1, 28, 28}));
  Result Random = runRun({SmallCnn, "--json", "--input-seed", "5"});
  ASSERT_EQ(Random.Status, 0) << Random.Err;
  nlohmann::json JR = nlohmann::json::parse(Random.Out);
  EXPECT_EQ(JR["input_source"], "random");
  EXPECT_EQ(JR["seed"], 5);
  EXPECT_FALSE(JR.contains("saved_outputs"));
}

TEST_F(RunDriverIoTest, TheArraysBindTheDimsAndADimMustAgree) {
  writeInputs(3);
  Result Agree = runRun({SmallCnn, "--inputs", path("in.npz"), "--dim", "N=3"});
  ASSERT_EQ(Agree.Status, 0) << Agree.Err;
  EXPECT_NE(Agree.Out.find("output %y: f32[3, 10]"), std::string::npos);
  Result Contradict = runRun({SmallCnn, "--inputs", path("in.npz"), "--dim",
                              "N=2", "--save-outputs", path("out.npz")});
  EXPECT_EQ(Contradict.Status, 1);
  EXPECT_NE(Contradict.Err.find("--dim N=2 contradicts --inputs '" +
                                path("in.npz") +
                                "', whose input 'x', axis 0 has size 3"),
            std::string::npos)
      << Contradict.Err;
  EXPECT_EQ(files(), (std::vector<std::string>{"in.npz"}));
}

TEST_F(RunDriverIoTest, DataThatDoesNotFitFailsBeforeAnythingIsWritten) {
  weights::TensorMap M;
  M.insert("image",
           ir::deterministicTensor(DType::F32, Shape{1, 1, 28, 28}, 0));
  weights::writeNpz(path("bad.npz"), M);
  Result Key = runRun({SmallCnn, "--inputs", path("bad.npz"), "--save-outputs",
                       path("out.npz")});
  EXPECT_EQ(Key.Status, 1);
  EXPECT_NE(Key.Err.find("no array for graph input 'x'"), std::string::npos)
      << Key.Err;
  EXPECT_NE(Key.Err.find("holds 'image'"), std::string::npos) << Key.Err;

  weights::TensorMap S;
  S.insert("x",
           ir::deterministicTensor(DType::F32, Shape{1, 3, 28, 28}, 0));
  weights::writeNpz(path("shape.npz"), S);
  Result Shape3 = runRun({SmallCnn, "--inputs", path("shape.npz")});
  EXPECT_EQ(Shape3.Status, 1);
  EXPECT_NE(Shape3.Err.find("input 'x' (f32[N,1,28,28]), axis 1: expected "
                            "1, got 3"),
            std::string::npos)
      << Shape3.Err;

  Result Missing = runRun({SmallCnn, "--inputs", path("absent.npz")});
  EXPECT_EQ(Missing.Status, 1);
  EXPECT_NE(Missing.Err.find(path("absent.npz")), std::string::npos)
      << Missing.Err;
  EXPECT_EQ(files(), (std::vector<std::string>{"bad.npz", "shape.npz"}));
}

TEST_F(RunDriverIoTest, BadInputOutputOptionsExitTwo) {
  writeInputs(1);
  // A seed means nothing for data from a file.
  EXPECT_EQ(runRun({SmallCnn, "--inputs", path("in.npz"), "--input-seed", "3"})
                .Status,
            2);
  EXPECT_EQ(runRun({SmallCnn, "--inputs"}).Status, 2);
  // Outputs go to .npz files only (a typo never overwrites a model).
  Result NotNpz = runRun({SmallCnn, "--save-outputs", path("model.nng")});
  EXPECT_EQ(NotNpz.Status, 2);
  EXPECT_NE(NotNpz.Err.find("FILE.npz"), std::string::npos) << NotNpz.Err;
  EXPECT_EQ(files(), (std::vector<std::string>{"in.npz"}));
}
