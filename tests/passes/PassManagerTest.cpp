//===- PassManagerTest.cpp - Pipelines, the registry, the manager ---------===//
//
// Pipeline-string parsing (names, options, syntax errors), the registry
// (built-in passes, unknown names listed in the error) and the PassManager
// (order, changed flag, statistics, error context).
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;
using namespace nng::passes;

namespace {

/// Expects Fn to throw an nng::Error whose text contains Needle.
template <typename Fn>
void expectErrorContaining(Fn &&F, const std::string &Needle) {
  try {
    F();
    FAIL() << "no error thrown; expected one containing '" << Needle << "'";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find(Needle), std::string::npos)
        << "error was: " << E.what();
  }
}

/// A pass that records its runs and reports a fixed "changed".
class CountingPass final : public Pass {
public:
  CountingPass(std::string Name, bool Changes, std::vector<std::string> &Log)
      : Name(std::move(Name)), Changes(Changes), Log(Log) {}
  std::string_view name() const override { return Name; }
  std::string_view summary() const override { return "counts"; }
  bool run(ir::Graph &G) override {
    Log.push_back(Name);
    bumpStatistic("runs");
    return Changes;
  }

private:
  std::string Name;
  bool Changes;
  std::vector<std::string> &Log;
};

class ThrowingPass final : public Pass {
public:
  std::string_view name() const override { return "always-fails"; }
  std::string_view summary() const override { return "throws"; }
  bool run(ir::Graph &) override {
    fail(ErrorKind::Internal, "deliberate failure");
  }
};

} // namespace

TEST(PipelineTest, SplitsNamesAndOptions) {
  auto P = splitPipeline(
      " shape-infer , quantize{mode=static calibration=minmax},dce");
  ASSERT_EQ(P.size(), 3u);
  EXPECT_EQ(P[0].Name, "shape-infer");
  EXPECT_TRUE(P[0].Options.empty());
  EXPECT_EQ(P[1].Name, "quantize");
  ASSERT_EQ(P[1].Options.size(), 2u);
  EXPECT_EQ(P[1].Options[0].first, "mode");
  EXPECT_EQ(P[1].Options[0].second, "static");
  EXPECT_EQ(P[1].Options[1].first, "calibration");
  EXPECT_EQ(P[1].Options[1].second, "minmax");
  EXPECT_EQ(P[2].Name, "dce");
}

TEST(PipelineTest, EmptyPipelineHasNoPasses) {
  EXPECT_TRUE(splitPipeline("").empty());
  EXPECT_TRUE(splitPipeline("   ").empty());
}

TEST(PipelineTest, SyntaxErrorsSayWhere) {
  expectErrorContaining([] { splitPipeline("dce,,shape-infer"); },
                        "expected a pass name");
  expectErrorContaining([] { splitPipeline("dce,"); }, "expected a pass name");
  expectErrorContaining([] { splitPipeline("q{mode=static"); },
                        "without a closing '}'");
  expectErrorContaining([] { splitPipeline("q{mode}"); }, "key=value");
  expectErrorContaining([] { splitPipeline("q{a=b}x"); }, "expected ','");
  expectErrorContaining([] { splitPipeline("dce}"); }, "'}' without '{'");
}

TEST(PassRegistryTest, BuiltinsAreRegisteredWithSummaries) {
  const PassInfo *Dce = lookupPass("dce");
  ASSERT_NE(Dce, nullptr);
  EXPECT_FALSE(Dce->Summary.empty());
  ASSERT_NE(lookupPass("shape-infer"), nullptr);
  EXPECT_EQ(lookupPass("no-such-pass"), nullptr);
  EXPECT_EQ(createPass("dce")->name(), "dce");
  std::string Names = registeredPassNames();
  EXPECT_NE(Names.find("dce"), std::string::npos);
  EXPECT_NE(Names.find("shape-infer"), std::string::npos);
}

TEST(PassRegistryTest, RejectsBadAndDuplicateNames) {
  auto Factory = [] { return createDeadCodeEliminationPass(); };
  expectErrorContaining(
      [&] {
        registerPass({"Not_Kebab", "x", Factory});
      },
      "kebab-case");
  expectErrorContaining(
      [&] {
        registerPass({"dce", "x", Factory});
      },
      "already registered");
}

TEST(PassManagerTest, UnknownPassListsValidNamesAndAddsNothing) {
  PassManager PM;
  try {
    PM.addPipeline("dce,frobnicate");
    FAIL() << "no error";
  } catch (const Error &E) {
    std::string Msg = E.what();
    EXPECT_NE(Msg.find("unknown pass 'frobnicate'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("dce"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("shape-infer"), std::string::npos) << Msg;
  }
  EXPECT_EQ(PM.size(), 0u);
}

TEST(PassManagerTest, OptionsOnPassWithoutOptionsAreRejected) {
  PassManager PM;
  expectErrorContaining([&] { PM.addPipeline("dce{aggressive=1}"); },
                        "pass 'dce' has no option 'aggressive'");
  EXPECT_EQ(PM.size(), 0u);
}

TEST(PassManagerTest, RunsInOrderAndReportsChange) {
  std::vector<std::string> Log;
  ir::Graph G;
  PassManager PM;
  PM.addPass(std::make_unique<CountingPass>("first", false, Log));
  PM.addPass(std::make_unique<CountingPass>("second", false, Log));
  EXPECT_FALSE(PM.run(G));
  PM.addPass(std::make_unique<CountingPass>("third", true, Log));
  std::ostringstream Stats;
  PM.setStatisticsStream(&Stats);
  EXPECT_TRUE(PM.run(G));
  EXPECT_EQ(Log, (std::vector<std::string>{"first", "second", "first", "second",
                                           "third"}));
  EXPECT_EQ(PM.pipelineString(), "first,second,third");
  EXPECT_NE(Stats.str().find("pass third: changed"), std::string::npos)
      << Stats.str();
  EXPECT_NE(Stats.str().find("runs: 1"), std::string::npos) << Stats.str();
  EXPECT_EQ(PM.passes()[0]->statistics().at("runs"), 1);
}

TEST(PassManagerTest, ErrorsNameThePass) {
  ir::Graph G;
  PassManager PM;
  PM.addPass(std::make_unique<ThrowingPass>());
  expectErrorContaining([&] { PM.run(G); }, "in pass 'always-fails'");
}

namespace {

/// A pass with one option of each type.
class OptionsPass final : public Pass {
public:
  OptionsPass() {
    declareOption("max-iterations", 10, "cap on sweeps");
    declareOption("aggressive", false, "fold harder");
    declareOption("tolerance", 0.5, "how close is equal");
    declareOption("tag", "x", "a label");
    declareEnumOption("mode", "static", {"static", "dynamic"}, "when");
  }
  std::string_view name() const override { return "options"; }
  std::string_view summary() const override { return "has options"; }
  bool run(ir::Graph &) override { return false; }
  int64_t iterations() const { return intOption("max-iterations"); }
  bool aggressive() const { return boolOption("aggressive"); }
  double tolerance() const { return floatOption("tolerance"); }
  const std::string &mode() const { return stringOption("mode"); }
};

} // namespace

TEST(PassOptionsTest, DefaultsAndParsedValues) {
  OptionsPass P;
  EXPECT_EQ(P.iterations(), 10);
  EXPECT_FALSE(P.aggressive());
  EXPECT_EQ(P.mode(), "static");
  P.setOption("max-iterations", "3");
  P.setOption("aggressive", "true");
  P.setOption("tolerance", "0.25");
  P.setOption("mode", "dynamic");
  EXPECT_EQ(P.iterations(), 3);
  EXPECT_TRUE(P.aggressive());
  EXPECT_DOUBLE_EQ(P.tolerance(), 0.25);
  EXPECT_EQ(P.mode(), "dynamic");
  ASSERT_EQ(P.options().size(), 5u);
  EXPECT_EQ(P.options()[0].Kind, OptionKind::Int);
  EXPECT_EQ(P.options()[0].Default, "10");
  EXPECT_EQ(P.options()[0].Help, "cap on sweeps");
}

TEST(PassOptionsTest, BadValuesNameTheOptionAndType) {
  OptionsPass P;
  expectErrorContaining([&] { P.setOption("max-iterations", "abc"); },
                        "option 'max-iterations' of options expects an "
                        "integer, got 'abc'");
  expectErrorContaining([&] { P.setOption("aggressive", "maybe"); },
                        "expects a bool");
  expectErrorContaining([&] { P.setOption("tolerance", "1.5x"); },
                        "expects a number");
  expectErrorContaining([&] { P.setOption("mode", "lazy"); },
                        "expects one of static, dynamic");
  expectErrorContaining([&] { P.setOption("nope", "1"); },
                        "valid options: max-iterations, aggressive, "
                        "tolerance, tag, mode");
}

TEST(PassOptionsTest, OverriddenSetOptionStillWorks) {
  PassManager PM;
  PM.addPipeline("canonicalize{max-folded-elements=16}");
  expectErrorContaining(
      [&] { PM.addPipeline("canonicalize{max-folded-elements=abc}"); },
      "max-folded-elements");
}
