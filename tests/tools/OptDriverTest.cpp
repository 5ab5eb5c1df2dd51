//===- OptDriverTest.cpp - nngraph-opt, run in-process --------------------===//
//
// The driver's contract: exit statuses (0 success, 1 bad input, 2 bad
// command line), help text, pipelines checked before any input is read,
// stdin input, ONNX in and out, -o written atomically (never half-written,
// never written on failure), presets, and the instrumentation flags naming
// a pass that breaks the verifier or the numerics.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/OptDriver.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassRegistry.h"
#include "common/TempDirTest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <unistd.h>

using namespace nng;
namespace fs = std::filesystem;

namespace {

constexpr const char *DeadCodeModel = R"(graph "t" {
  input %x: f32[2,3]
  init %w: f32[3] = [1.0, 2.0, 3.0]
  init %unused: f32[1] = [4.0]
  %y: f32[2,3] = Add(%x, %w)
  %dead: f32[2,3] = Neg(%x)
  output %y
}
)";

const std::string SmallCnn =
    std::string(NNGRAPH_SOURCE_DIR) + "/examples/models/small_cnn.nng";

/// One run of the driver.
struct Result {
  int Status;
  std::string Out, Err;
};

Result runOpt(std::vector<std::string> Args, const std::string &Stdin = "") {
  Args.insert(Args.begin(), "nngraph-opt");
  std::istringstream In(Stdin);
  std::ostringstream Out, Err;
  int Status = tools::runOptDriver(Args, In, Out, Err);
  return {Status, Out.str(), Err.str()};
}

class OptDriverTest : public test::TempDirTest {
protected:
  OptDriverTest() : TempDirTest("nngraph-opt-test") {}
  std::string write(const std::string &Name, const std::string &Text) const {
    frontend::writeFileAtomic(path(Name), Text);
    return path(Name);
  }
  size_t numFiles() const {
    return std::distance(fs::directory_iterator(Dir), fs::directory_iterator());
  }
};

} // namespace

TEST_F(OptDriverTest, HelpExplainsEveryOptionWithExamples) {
  Result R = runOpt({"--help"});
  EXPECT_EQ(R.Status, 0);
  for (const char *Word :
       {"-o", "--emit", "-p", "--inline-limit", "--version", "e.g. nngraph-opt",
        "dce", "shape-infer", "Exit status"})
    EXPECT_NE(R.Out.find(Word), std::string::npos) << "missing " << Word;
}

TEST_F(OptDriverTest, VersionExitsZero) {
  Result R = runOpt({"--version"});
  EXPECT_EQ(R.Status, 0);
  EXPECT_NE(R.Out.find("nngraph-opt "), std::string::npos) << R.Out;
}

TEST_F(OptDriverTest, BadCommandLinesExitTwo) {
  EXPECT_EQ(runOpt({"--no-such-flag"}).Status, 2);
  EXPECT_EQ(runOpt({"--emit", "pdf", "m.nng"}).Status, 2);
  EXPECT_EQ(runOpt({"--inline-limit", "many"}).Status, 2);
  EXPECT_EQ(runOpt({"a.nng", "b.nng"}).Status, 2);
  EXPECT_EQ(runOpt({"-o"}).Status, 2);
}

TEST_F(OptDriverTest, UnknownPassIsRejectedBeforeReadingInput) {
  // The input does not exist: a status of 2 (not 1) shows that the pipeline
  // was checked first.
  Result R = runOpt({path("absent.nng"), "-p", "dce,frobnicate"});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("unknown pass 'frobnicate'"), std::string::npos)
      << R.Err;
  EXPECT_NE(R.Err.find("valid passes: "), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("dce"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("shape-infer"), std::string::npos) << R.Err;
  EXPECT_EQ(runOpt({path("absent.nng"), "-p", "dce,"}).Status, 2);
}

TEST_F(OptDriverTest, MissingInputExitsOneNamingThePath) {
  Result R = runOpt({path("absent.nng"), "-o", path("out.nng")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("absent.nng"), std::string::npos) << R.Err;
  EXPECT_TRUE(R.Out.empty());
  EXPECT_EQ(numFiles(), 0u);
}

TEST_F(OptDriverTest, ReadsStdinAndPrintsCanonicalText) {
  Result FromStdin = runOpt({}, DeadCodeModel);
  ASSERT_EQ(FromStdin.Status, 0) << FromStdin.Err;
  EXPECT_EQ(runOpt({"-"}, DeadCodeModel).Out, FromStdin.Out);
  // Printing is a fixed point.
  EXPECT_EQ(runOpt({}, FromStdin.Out).Out, FromStdin.Out);
  EXPECT_NE(FromStdin.Out.find("%dead"), std::string::npos);
}

TEST_F(OptDriverTest, RunsThePipeline) {
  Result R = runOpt({"-p", "shape-infer,dce"}, DeadCodeModel);
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(R.Out.find("%dead"), std::string::npos) << R.Out;
  EXPECT_EQ(R.Out.find("%unused"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("Add(%x, %w)"), std::string::npos) << R.Out;
}

TEST_F(OptDriverTest, InvalidInputExitsOneAndWritesNothing) {
  std::string Out = write("out.nng", "precious\n");
  for (const char *Bad :
       {"graph {", "graph \"g\" {\n  %y: f32[2] = NoSuchOp(%x)\n}\n",
        "graph \"g\" {\n  input %x: f32[2]\n  output %nowhere\n}\n"}) {
    Result R = runOpt({"-", "-o", Out}, Bad);
    EXPECT_EQ(R.Status, 1) << Bad;
    EXPECT_NE(R.Err.find("error: "), std::string::npos) << R.Err;
    EXPECT_EQ(frontend::readFile(Out), "precious\n");
  }
  EXPECT_EQ(numFiles(), 1u); // No temporary file left behind.
}

TEST_F(OptDriverTest, OutputFileIsWrittenWholeAndEqualsStdout) {
  std::string In = write("in.nng", DeadCodeModel);
  std::string Out =
      write("out.nng", "old contents that are longer than the new ones\n"
                       "and span lines\n");
  Result ToFile = runOpt({In, "-o", Out, "-p", "dce"});
  ASSERT_EQ(ToFile.Status, 0) << ToFile.Err;
  EXPECT_TRUE(ToFile.Out.empty());
  Result ToStdout = runOpt({In, "-p", "dce"});
  EXPECT_EQ(frontend::readFile(Out), ToStdout.Out);
  EXPECT_EQ(numFiles(), 2u);
  // Any extension but .onnx is written as text.
  ASSERT_EQ(runOpt({In, "-o", path("out.txt"), "-p", "dce"}).Status, 0);
  EXPECT_EQ(frontend::readFile(path("out.txt")), ToStdout.Out);
}

TEST_F(OptDriverTest, EmitsAndReadsOnnx) {
  std::string In = write("in.nng", DeadCodeModel);
  Result Text = runOpt({In, "-p", "dce"});
  ASSERT_EQ(Text.Status, 0) << Text.Err;
  // -o FILE.onnx writes ONNX; reading it back gives the same graph.
  Result ToOnnx = runOpt({In, "-p", "dce", "-o", path("m.onnx")});
  ASSERT_EQ(ToOnnx.Status, 0) << ToOnnx.Err;
  EXPECT_EQ(runOpt({path("m.onnx")}).Out, Text.Out);
  // --emit onnx to stdout gives the same bytes.
  Result ToStdout = runOpt({In, "-p", "dce", "--emit", "onnx"});
  ASSERT_EQ(ToStdout.Status, 0) << ToStdout.Err;
  EXPECT_EQ(ToStdout.Out, frontend::readFile(path("m.onnx")));
  // --emit text wins over the extension.
  ASSERT_EQ(runOpt({In, "--emit", "text", "-o", path("t.onnx")}).Status, 0);
  EXPECT_EQ(frontend::readFile(path("t.onnx")).rfind("graph \"t\" {", 0), 0u);
}

TEST_F(OptDriverTest, InlineLimitElidesLargeInitializers) {
  Result R = runOpt({"--inline-limit", "2"}, DeadCodeModel);
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("%w: f32[3] = elided(\"fnv1a64:"), std::string::npos)
      << R.Out;
  EXPECT_NE(R.Out.find("%unused: f32[1] = [4.0]"), std::string::npos) << R.Out;
}

TEST_F(OptDriverTest, SmallCnnRoundTrips) {
  Result Once = runOpt({SmallCnn});
  ASSERT_EQ(Once.Status, 0) << Once.Err;
  Result Twice = runOpt({}, Once.Out);
  ASSERT_EQ(Twice.Status, 0) << Twice.Err;
  EXPECT_EQ(Twice.Out, Once.Out);
  // The committed file is already in canonical form.
  EXPECT_EQ(Once.Out, frontend::readFile(SmallCnn));
}

namespace {

/// A pass that leaves an attribute the op does not have (verifier error).
class BreakVerifierPass final : public passes::Pass {
public:
  std::string_view name() const override { return "test-break-verifier"; }
  std::string_view summary() const override { return "breaks the graph"; }
  bool run(ir::Graph &G) override {
    G.nodes().front()->setAttrByName("bogus", ir::Attribute(int64_t(1)));
    return true;
  }
};

/// A pass that doubles every float initializer (changes the numerics).
class ChangeNumericsPass final : public passes::Pass {
public:
  std::string_view name() const override { return "test-change-numerics"; }
  std::string_view summary() const override { return "scales weights"; }
  bool run(ir::Graph &G) override {
    for (ir::Value *V : G.initializers()) {
      nng::rt::Tensor T = V->data().clone();
      for (int64_t I = 0; I < T.numel(); ++I)
        T.setFlat(I, 2 * T.getFlat(I));
      V->setData(T);
    }
    return true;
  }
};

void registerTestPasses() {
  static bool Done = [] {
    passes::registerPass(
        {"test-break-verifier", "breaks the graph",
         [] { return std::unique_ptr<passes::Pass>(new BreakVerifierPass); }});
    passes::registerPass(
        {"test-change-numerics", "scales weights",
         [] { return std::unique_ptr<passes::Pass>(new ChangeNumericsPass); }});
    return true;
  }();
  (void)Done;
}

} // namespace

TEST_F(OptDriverTest, PresetsRunTheirPasses) {
  Result R = runOpt({SmallCnn, "-O2", "--stats"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(R.Out.find("BatchNormalization"), std::string::npos);
  EXPECT_NE(R.Err.find("Graph statistics"), std::string::npos) << R.Err;
  EXPECT_EQ(runOpt({SmallCnn, "-O7"}).Status, 2);
}

TEST_F(OptDriverTest, ListPassesShowsOptionsAndPresets) {
  Result R = runOpt({"--list-passes"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("shape-infer"), std::string::npos);
  EXPECT_NE(R.Out.find("-O1  canonicalize,cse,dce"), std::string::npos)
      << R.Out;
}

TEST_F(OptDriverTest, PassBreakingTheVerifierIsNamedAndNothingWritten) {
  registerTestPasses();
  fs::path OutPath = Dir / "out.nng";
  Result R = runOpt({SmallCnn, "-p", "dce,test-break-verifier", "--verify-each",
                     "-o", OutPath.string()});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("test-break-verifier"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("bogus"), std::string::npos) << R.Err;
  EXPECT_FALSE(fs::exists(OutPath));
  // Without --verify-each (release builds) the final graph is still checked.
  R = runOpt({SmallCnn, "-p", "test-break-verifier", "-o", OutPath.string()});
  EXPECT_EQ(R.Status, 1);
  EXPECT_FALSE(fs::exists(OutPath));
}

TEST_F(OptDriverTest, CheckNumericsNamesThePassThatMovedTheOutputs) {
  registerTestPasses();
  fs::path OutPath = Dir / "out.nng";
  Result R = runOpt({SmallCnn, "-p", "canonicalize,test-change-numerics,dce",
                     "--check-numerics=2", "-o", OutPath.string()});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("pass 'test-change-numerics' changed the outputs"),
            std::string::npos)
      << R.Err;
  EXPECT_FALSE(fs::exists(OutPath));
  EXPECT_EQ(runOpt({SmallCnn, "-O2", "--check-numerics"}).Status, 0);
}
