//===- CpuChosenBranchTest.cpp - If on a shape test, compiled -------------===//
//
// Exported models branch on shapes (torch's Squeeze of a dim that may be 1,
// an LSTM's check of its state's rank): at one compile's shapes such an
// If's condition is a constant, and the cpu backend lowers the branch it
// takes in place (LowerControlFlow.cpp), so the graph compiles into one
// schedule instead of running node by node. Checked against the reference
// backend at shapes that take each branch (nested Ifs too: the inner one
// tests a value of the outer branch), with no node kernel in the schedule,
// and a new shape compiled (not reshaped: it may take the other branch).
// An If on a run-time condition keeps its node kernel; one decided by an
// integer scalar input compiles per value of that input (ValueGuards.h).
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Parser.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::cputest;

namespace {

/// y = tanh(squeeze_if_1(relu(x), 0)), where the then branch also
/// unsqueezes back when the squeezed value has rank 2 (a nested If on
/// Size(Shape(s)), reading the outer branch's value).
const char *SqueezeIfText = R"(graph "squeeze-if" {
  input %x: f32[N,4,L]
  init %zero: i64[] = [0]
  init %one: i64[] = [1]
  init %two: i64[] = [2]
  init %axes: i64[1] = [0]
  %h = Relu(%x)
  %shape = Shape(%h)
  %n = Gather(%shape, %zero) {axis = 0}
  %is1 = Equal(%n, %one)
  %y = If(%is1) {then_branch = graph "then" {
    %s = Squeeze(%h, %axes)
    %sshape = Shape(%s)
    %rank = Size(%sshape)
    %is2 = Equal(%rank, %two)
    %t = If(%is2) {then_branch = graph {
      %u = Unsqueeze(%s, %axes)
      %u2 = Mul(%u, %u)
      output %u2
    }, else_branch = graph {
      %v = Neg(%s)
      output %v
    }}
    output %t
  }, else_branch = graph "else" {
    %e = Identity(%h)
    output %e
  }}
  %r = Tanh(%y)
  output %r
})";

void expectMatches(const ir::Graph &G, backends::Executable &Exe,
                   const Shape &XS, unsigned Seed) {
  std::vector<Tensor> In = {rnd(XS, Seed)};
  std::vector<Tensor> Want = backends::runReference(G, In);
  std::vector<Tensor> Got = Exe.run(In);
  ASSERT_EQ(Got.size(), 1u);
  EXPECT_TRUE(closeTo(Got[0], Want[0])) << "x " << XS.toString();
}

TEST(CpuChosenBranch, ShapeTestIfsCompileIntoOneSchedule) {
  REQUIRE_ONEDNN();
  std::unique_ptr<ir::Graph> G = ir::parseGraph(SqueezeIfText, "squeeze-if");
  EXPECT_EQ(G->outputs()[0]->type().toString(), "f32[*]")
      << "the branches join into an unknown rank";
  auto Exe = backends::getBackend("cpu").compile(*G);
  unsigned Seed = 3;
  // N = 1 takes the then branch (and its nested then), N = 3 the else.
  for (int64_t N : {1, 3, 1, 3}) {
    expectMatches(*G, *Exe, Shape({N, 4, 5}), Seed += 2);
    backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(S.Compiled) << "N " << N << ": the If ran node by node";
    EXPECT_TRUE(S.Fallbacks.empty())
        << "N " << N << ": " << S.Fallbacks.front();
  }
  backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
  EXPECT_EQ(S.Specializations, 2) << "one program per shape, kept";
  EXPECT_NE(S.ReshapeRefusal.find("If's branch"), std::string::npos)
      << S.ReshapeRefusal;
  // Another length at N = 1: a compile of its own, the same branch.
  expectMatches(*G, *Exe, Shape({1, 4, 9}), Seed += 2);
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Specializations, 3);
}

TEST(CpuChosenBranch, RunTimeConditionKeepsTheNodeKernel) {
  REQUIRE_ONEDNN();
  // The condition is computed from x's data: no value to compile for.
  std::unique_ptr<ir::Graph> G = ir::parseGraph(R"(graph "runtime-if" {
    input %x: f32[3]
    init %zero: f32[] = [0]
    %s = ReduceSum(%x) {keepdims = 0}
    %c = Greater(%s, %zero)
    %h = Relu(%x)
    %y = If(%c) {then_branch = graph {
      %t = Concat(%h, %x) {axis = 0}
      output %t
    }, else_branch = graph {
      %e = Neg(%x)
      output %e
    }}
    output %y
  })",
                                                "runtime-if");
  auto Exe = backends::getBackend("cpu").compile(*G);
  for (float Sign : {1.0f, -1.0f, 1.0f}) {
    std::vector<Tensor> In = {
        Tensor::fromVector<float>({Sign, -2 * Sign, 0.5f * Sign}, Shape({3}))};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 1u);
    EXPECT_TRUE(closeTo(Got[0], Want[0])) << "sign " << Sign;
    EXPECT_FALSE(backends::cpuExecutableStats(*Exe)->Compiled)
        << "the branch is chosen at run time, node by node";
  }
}

/// y = If(sr == 16000, concat(relu(x), x), -x): Silero VAD's If on its
/// sample rate input, with branches of different lengths.
const char *SampleRateIfText = R"(graph "rate-if" {
  input %x: f32[N]
  input %sr: i64[]
  init %rate: i64[] = [16000]
  %c = Equal(%sr, %rate)
  %h = Relu(%x)
  %y = If(%c) {then_branch = graph {
    %t = Concat(%h, %x) {axis = 0}
    output %t
  }, else_branch = graph {
    %e = Mul(%x, %x)
    output %e
  }}
  %z = Tanh(%y)
  output %z
})";

TEST(CpuValueGuards, AnIntegerInputDecidingAnIfCompilesPerValue) {
  REQUIRE_ONEDNN();
  std::unique_ptr<ir::Graph> G = ir::parseGraph(SampleRateIfText, "rate-if");
  auto Exe = backends::getBackend("cpu").compile(*G);
  auto Run = [&](int64_t N, int64_t Rate) {
    std::vector<Tensor> In = {rnd(Shape({N}), static_cast<unsigned>(7 + N)),
                              Tensor::scalar<int64_t>(Rate)};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 1u);
    EXPECT_TRUE(closeTo(Got[0], Want[0])) << "N " << N << ", sr " << Rate;
  };
  // Two rates, two lengths: each compiled with its branch in place.
  for (int64_t Rate : {16000, 8000, 16000, 8000})
    for (int64_t N : {3, 5}) {
      Run(N, Rate);
      backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
      ASSERT_TRUE(S.Compiled) << "sr " << Rate << " ran node by node";
      EXPECT_TRUE(S.Fallbacks.empty()) << S.Fallbacks.front();
      ASSERT_FALSE(S.Stages.empty());
      EXPECT_EQ(S.Stages.front().Name, "values");
      EXPECT_EQ(S.Stages.front().Decided,
                "%sr = " + std::to_string(Rate) +
                    " (compiled as constants: they decide an If)");
    }
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Specializations, 4)
      << "one program per (length, rate), kept";
  // Up to 4 values are compiled; past them a signature runs the graph
  // itself (node by node here), still right.
  for (int64_t Rate : {1, 2, 3, 16000}) {
    Run(3, Rate);
    EXPECT_EQ(backends::cpuExecutableStats(*Exe)->Compiled, Rate != 3)
        << "sr " << Rate;
  }
}

TEST(CpuValueGuards, ADataDependentGraphStillRunsPerValue) {
  REQUIRE_ONEDNN();
  // Compiled for a value, the graph's NonZero still makes it run node by
  // node (no program): the value's entry must serve that too.
  std::unique_ptr<ir::Graph> G = ir::parseGraph(R"(graph "nonzero-if" {
    input %x: f32[N]
    input %k: i64[]
    init %one: i64[] = [1]
    %c = Equal(%k, %one)
    %y = If(%c) {then_branch = graph {
      %t = Relu(%x)
      output %t
    }, else_branch = graph {
      %e = Neg(%x)
      output %e
    }}
    %nz = NonZero(%y)
    output %nz
  })",
                                                "nonzero-if");
  auto Exe = backends::getBackend("cpu").compile(*G);
  for (int64_t K : {1, 0, 1}) {
    std::vector<Tensor> In = {rnd(Shape({7}), 5), Tensor::scalar<int64_t>(K)};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 1u);
    EXPECT_TRUE(Got[0].equals(Want[0])) << "k " << K;
  }
}

} // namespace
