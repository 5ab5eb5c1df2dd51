//===- CpuCutTest.cpp - A data-dependent tail after a compiled head -------===//
//
// A graph whose shapes depend on data from some node on (a detector's
// selection of boxes) is cut there (SplitGraph.h): the nodes before the
// cut compile into a schedule, the rest runs node by node after it.
// Checked against the reference backend at several batch sizes, with the
// convolution in the compiled schedule and only the selection's nodes on
// node kernels, and the schedule naming where it was cut.
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

/// A detector's shape: a convolution, then a data-dependent selection
/// (NonZero of the scores above a threshold) and arithmetic on what it
/// selected.
const char *SelectText = R"(graph "select" {
  input %x: f32[N,3,8,8]
  init %w: f32[4,3,3,3] = [RAND]
  init %half: f32[] = [0.5]
  %c = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
  %s = Relu(%c)
  %flat = Flatten(%s) {axis = 0}
  %hit = Greater(%flat, %half)
  %idx = NonZero(%hit)
  %row = Squeeze(%idx)
  %picked = Gather(%flat, %row) {axis = 1}
  %scaled = Mul(%picked, %half)
  output %scaled, %s
})";

TEST(CpuCut, DataDependentTailRunsAfterACompiledHead) {
  REQUIRE_ONEDNN();
  std::string Text = SelectText;
  std::string Weights;
  for (int I = 0; I < 4 * 3 * 3 * 3; ++I)
    Weights += (I ? ", " : "") + std::to_string(((I * 37) % 17 - 8) / 10.0);
  Text.replace(Text.find("RAND"), 4, Weights);
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, "select");
  auto Exe = backends::getBackend("cpu").compile(*G);
  unsigned Seed = 5;
  for (int64_t N : {1, 2, 1}) {
    std::vector<Tensor> In = {rnd(Shape({N, 3, 8, 8}), Seed += 2)};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 2u);
    for (size_t O = 0; O < 2; ++O)
      EXPECT_TRUE(closeTo(Got[O], Want[O])) << "N " << N << " output " << O;
  }
  // The convolution is in a compiled schedule; the nodes from NonZero on
  // run node by node after it.
  backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
  EXPECT_TRUE(S.Compiled);
  EXPECT_GE(S.DnnlSteps, 1);
  size_t After = 0;
  for (const std::string &F : S.Fallbacks)
    After += F.find("after the cut") != std::string::npos;
  EXPECT_EQ(After, 4u) << "NonZero, Squeeze, Gather, Mul (and nothing else)";
  std::string Sched = *backends::cpuSchedule(*Exe);
  EXPECT_NE(Sched.find("then node by node: 4 nodes"), std::string::npos)
      << Sched;
  EXPECT_NE(Sched.find("NonZero"), std::string::npos) << Sched;
}

} // namespace
