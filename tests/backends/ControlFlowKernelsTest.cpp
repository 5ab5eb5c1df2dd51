//===- ControlFlowKernelsTest.cpp - If and Loop on both backends ---------===//
//
// Graphs with regions written in the text format, run on the reference
// backend (the oracle, hand-checked values) and on the cpu backend (which
// compiles each region once and must agree): OpKind::If with branches that
// read outer values and give different shapes, OpKind::Loop as a for loop,
// a while loop, both bounds, zero iterations (initial values, empty scan
// outputs), a trip count of 2^63 - 1 ended by the condition, loop-carried
// values that grow, scan outputs stacked along a new axis, an If nested in
// a Loop's body reading values two scopes out, and OpKind::Scan with both
// directions and a scan output along axis 1.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/ir/Parser.h"

namespace nng::reftest {
namespace {

std::vector<Tensor> runOn(std::string_view Backend, const std::string &Text,
                          const std::vector<Tensor> &Inputs) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, "control-flow");
  return backends::getBackend(Backend).compile(*G)->run(Inputs);
}

/// Runs on both backends; checks the reference's outputs against Want and
/// the cpu backend's against the reference's.
void expectBoth(const std::string &Text, const std::vector<Tensor> &Inputs,
                const std::vector<Tensor> &Want) {
  std::vector<Tensor> Ref = runOn("reference", Text, Inputs);
  ASSERT_EQ(Ref.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(tensorNear(Ref[I], Want[I])) << "reference output " << I;
  std::vector<Tensor> Cpu = runOn("cpu", Text, Inputs);
  ASSERT_EQ(Cpu.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(tensorNear(Cpu[I], Ref[I])) << "cpu output " << I;
}

Tensor scalarBool(bool B) { return boolean({B}, {}); }

const char *IfText = R"(graph {
  input %c: bool[]
  input %x: f32[3]
  init %w: f32[3] = [1, 2, 3]
  %h = Mul(%x, %w)
  %y = If(%c) {then_branch = graph {
    %t = Concat(%h, %x) {axis = 0}
    output %t
  }, else_branch = graph {
    %e = Neg(%x)
    output %e
  }}
  output %y
})";

TEST(ControlFlowKernels, IfTakesTheBranchOfTheCondition) {
  // Both branches read outer values (%h, %x).
  Tensor X = f32({1, -2, 0.5});
  expectBoth(IfText, {scalarBool(true), X}, {f32({1, -4, 1.5, 1, -2, 0.5})});
  expectBoth(IfText, {scalarBool(false), X}, {f32({-1, 2, -0.5})});
}

TEST(ControlFlowKernels, IfTypesJoinTheBranches) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(IfText, "if");
  EXPECT_EQ(G->outputs()[0]->type().toString(), "f32[?]");
  // The captured values are implicit inputs of the If node.
  const ir::Node *If = G->outputs()[0]->producer();
  EXPECT_EQ(If->op(), OpKind::If);
  EXPECT_EQ(If->numExplicitInputs(), 1u);
  EXPECT_EQ(If->numImplicitInputs(), 2u);
}

// Sums 1..M into %s, stacks each partial sum: a for loop (no cond input).
const char *ForText = R"(graph {
  input %m: i64[]
  init %zero: f32[] = [0]
  %s, %all = Loop(%m, _, %zero) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %acc: f32[]
    %f = Cast(%i) {to = 1}
    %one = Constant() {value = tensor<f32[]> [1]}
    %k = Add(%f, %one)
    %next = Add(%acc, %k)
    output %go, %next, %next
  }}
  output %s, %all
})";

TEST(ControlFlowKernels, LoopForM) {
  expectBoth(ForText, {i64({4}, {})}, {f32({10}, {}), f32({1, 3, 6, 10})});
}

TEST(ControlFlowKernels, LoopWithoutCondIgnoresTheBodysCondition) {
  // ONNX's "for" form: the body says stop, M says go on.
  std::string Text = ForText;
  Text.replace(Text.find("output %go,"), 11, "output %no,");
  Text.replace(Text.find("    %f = Cast"), 0,
               "    %no = Constant() {value = tensor<bool[]> [false]}\n");
  expectBoth(Text, {i64({4}, {})}, {f32({10}, {}), f32({1, 3, 6, 10})});
  // A known M without cond: the scan length is static.
  Text.replace(Text.find("input %m: i64[]"), 15, "init %m: i64[] = [3]");
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, "for3");
  EXPECT_EQ(G->outputs()[1]->type().toString(), "f32[3]");
  expectBoth(Text, {}, {f32({6}, {}), f32({1, 3, 6})});
}

TEST(ControlFlowKernels, LoopZeroIterationsGivesInitialValues) {
  expectBoth(ForText, {i64({0}, {})}, {f32({0}, {}), f32({}, {0})});
}

TEST(ControlFlowKernels, LoopWithHugeTripCountEndsOnItsCondition) {
  // M = 2^63 - 1 with a body that says stop after the first iteration: one
  // iteration, one scan row (nothing sized by M, nothing counted to it).
  std::string Text = ForText;
  Text.replace(Text.find("Loop(%m, _, %zero)"), 18, "Loop(%m, %yes, %zero)");
  Text.replace(Text.find("  init %zero"), 0, "  init %yes: bool[] = [true]\n");
  Text.replace(Text.find("output %go,"), 11, "output %no,");
  Text.replace(Text.find("    %f = Cast"), 0,
               "    %no = Constant() {value = tensor<bool[]> [false]}\n");
  expectBoth(Text, {i64({INT64_MAX}, {})}, {f32({1}, {}), f32({1})});
}

// Doubles %v until its sum passes %limit (a while loop: no M), and grows
// %trace by one element per iteration: a loop-carried value whose shape
// changes.
const char *WhileText = R"(graph {
  input %v: f32[2]
  input %limit: f32[]
  init %empty: f32[0] = []
  init %true: bool[] = [true]
  %out, %trace = Loop(_, %true, %v, %empty) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %a: f32[2]
    input %tr: f32[?]
    %two = Constant() {value = tensor<f32[]> [2]}
    %a2 = Mul(%a, %two)
    %sum = ReduceSum(%a2) {keepdims = 1}
    %tr2 = Concat(%tr, %sum) {axis = 0}
    %total = ReduceSum(%a2) {keepdims = 0}
    %more = Less(%total, %limit)
    output %more, %a2, %tr2
  }}
  output %out, %trace
})";

TEST(ControlFlowKernels, LoopWhileCondition) {
  // Sums: 6, 12, 24 -> stops after the third (24 >= 20).
  expectBoth(WhileText, {f32({1, 2}), f32({20}, {})},
             {f32({8, 16}), f32({6, 12, 24})});
  std::unique_ptr<ir::Graph> G = ir::parseGraph(WhileText, "while");
  EXPECT_EQ(G->outputs()[0]->producer()->op(), OpKind::Loop);
  EXPECT_EQ(G->outputs()[0]->type().toString(), "f32[2]");
  EXPECT_EQ(G->outputs()[1]->type().toString(), "f32[?]");
}

TEST(ControlFlowKernels, LoopStopsAtMOrCondition) {
  std::string Text = R"(graph {
  input %m: i64[]
  input %c: bool[]
  input %x: f32[2]
  %y, %ys = Loop(%m, %c, %x) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %a: f32[2]
    %b = Add(%a, %x)
    %three = Constant() {value = tensor<i64[]> [3]}
    %more = Less(%i, %three)
    output %more, %b, %i
  }}
  output %y, %ys
})";
  Tensor X = f32({1, 10});
  // M = 2 stops first.
  expectBoth(Text, {i64({2}, {}), scalarBool(true), X},
             {f32({3, 30}), i64({0, 1})});
  // The body's condition stops after iteration 3 (i = 3 is not < 3).
  expectBoth(Text, {i64({10}, {}), scalarBool(true), X},
             {f32({5, 50}), i64({0, 1, 2, 3})});
  // A false cond input: no iteration.
  expectBoth(Text, {i64({10}, {}), scalarBool(false), X},
             {X, i64({}, {0})});
}

TEST(ControlFlowKernels, IfNestedInLoopReadsTwoScopesOut) {
  std::string Text = R"(graph {
  input %m: i64[]
  input %x: f32[2]
  init %w: f32[2] = [1, -1]
  %y = Loop(%m, _, %x) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %a: f32[2]
    %two = Constant() {value = tensor<i64[]> [2]}
    %r = Mod(%i, %two)
    %zero = Constant() {value = tensor<i64[]> [0]}
    %even = Equal(%r, %zero)
    %b = If(%even) {then_branch = graph {
      %p = Add(%a, %w)
      output %p
    }, else_branch = graph {
      %q = Mul(%a, %x)
      output %q
    }}
    output %go, %b
  }}
  output %y
})";
  // x = [2, 3]: i=0 even: [3, 2]; i=1 odd: [6, 6]; i=2 even: [7, 5].
  expectBoth(Text, {i64({3}, {}), f32({2, 3})}, {f32({7, 5})});
}

// A running sum over the rows of %xs (the state), each step's sum a scan
// output; the second scan input is read backwards and its running product
// is written backwards along axis 1.
const char *ScanText = R"(graph {
  input %init: f32[2]
  input %xs: f32[3,2]
  input %ys: f32[2,3]
  init %one: f32[2] = [1, 1]
  %sum, %prod, %sums, %prods = Scan(%init, %one, %xs, %ys) {body = graph {
    input %s: f32[2]
    input %p: f32[2]
    input %x: f32[2]
    input %y: f32[2]
    %s2 = Add(%s, %x)
    %p2 = Mul(%p, %y)
    output %s2, %p2, %s2, %p2
  }, num_scan_inputs = 2, scan_input_axes = [0, 1], scan_input_directions = [0, 1], scan_output_axes = [0, 1], scan_output_directions = [0, 1]}
  output %sum, %prod, %sums, %prods
})";

TEST(ControlFlowKernels, ScanSlicesStatesAndStacks) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(ScanText, "scan");
  EXPECT_EQ(G->outputs()[0]->producer()->op(), OpKind::Scan);
  EXPECT_EQ(G->outputs()[2]->type().toString(), "f32[3,2]");
  EXPECT_EQ(G->outputs()[3]->type().toString(), "f32[2,3]");
  Tensor Xs = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  // ys columns read from the last: [3, 6], [2, 5], [1, 4].
  Tensor Ys = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  // Running products [3, 6], [6, 30], [6, 120], written backwards along
  // axis 1: column 2 holds step 0.
  expectBoth(ScanText, {f32({10, 20}), Xs, Ys},
             {f32({19, 32}), f32({6, 120}),
              f32({11, 22, 14, 26, 19, 32}, {3, 2}),
              f32({6, 6, 3, 120, 30, 6}, {2, 3})});
}

TEST(ControlFlowKernels, CpuCompilesEachRegionOnce) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(ForText, "for");
  auto E = backends::getBackend("cpu").compile(*G);
  int64_t Before = backends::cpuCallCounts().RegionCompiles;
  for (int64_t M : {5, 3, 0, 5})
    E->run({i64({M}, {})});
  // One body, compiled at the first run, kept for every iteration and run.
  EXPECT_EQ(backends::cpuCallCounts().RegionCompiles - Before, 1);
  // An If on a value computed at run time (a bool input would be compiled
  // by its value instead: ValueGuards.h): each branch compiled once.
  std::string Text = IfText;
  Text.replace(Text.find("input %c: bool[]"), 16,
               "input %v: f32[]\n  init %zero: f32[] = [0]\n"
               "  %c = Greater(%v, %zero)");
  auto F = backends::getBackend("cpu").compile(*ir::parseGraph(Text, "if"));
  Before = backends::cpuCallCounts().RegionCompiles;
  for (float V : {1.0f, -1.0f, 1.0f, -1.0f})
    F->run({f32({V}, {}), f32({1, 2, 3})});
  EXPECT_EQ(backends::cpuCallCounts().RegionCompiles - Before, 2);
}

TEST(ControlFlowKernels, BadConditionIsAnError) {
  std::string Text = IfText;
  Text.replace(Text.find("bool[]"), 6, "bool[?]");
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, "if");
  auto E = backends::getBackend("reference").compile(*G);
  Tensor Two = boolean({1, 0}, {2});
  try {
    E->run({Two, f32({1, 2, 3})});
    FAIL() << "a two-element condition ran";
  } catch (const Error &Err) {
    EXPECT_NE(std::string(Err.what()).find("one element"), std::string::npos)
        << Err.what();
  }
}

} // namespace
} // namespace nng::reftest
