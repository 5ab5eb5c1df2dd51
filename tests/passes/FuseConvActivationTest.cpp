//===- FuseConvActivationTest.cpp - fuse-conv-act -------------------------===//
//
// fuse-conv-act on random weights: Conv followed by each activation of the
// FusedActivation table (with non-default parameters, Clip with one or two
// bounds, both GELU forms) becomes nng.FusedConv computing the same values,
// for grouped, padded and 1-d convs; declines are counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {
const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";

/// Conv %c<I> of %x followed by Act (text with %c<I> as "$").
std::string convAct(int I, const std::string &Act) {
  std::string C = "%c" + std::to_string(I), Y = "%y" + std::to_string(I);
  std::string A = Act;
  A.replace(A.find('$'), 1, C);
  return "  " + C + " = Conv(%x, %w, %b) {group = 2, pads = [1, 0, 1, 0]}\n  " +
         Y + " = " + A + "\n";
}
} // namespace

TEST(FuseConvActivationTest, EveryActivationFusesAndMatches) {
  std::vector<std::string> Acts = {
      "Relu($)",
      "LeakyRelu($) {alpha = 0.3}",
      "Sigmoid($)",
      "Tanh($)",
      "Clip($, %lo, %hi)",
      "Clip($, _, %hi)",
      "HardSigmoid($) {alpha = 0.3, beta = 0.4}",
      "HardSwish($)",
      "Elu($) {alpha = 0.7}",
      "nng.Gelu($)",
      "nng.Gelu($) {approximate = \"tanh\"}",
  };
  std::string Text = std::string("graph \"acts\" {\n"
                                 "  input %x: f32[2,4,5,5]\n"
                                 "  init %lo: f32[] = [-0.5]\n"
                                 "  init %hi: f32[] = [0.75]\n") +
                     "  init %w: f32[6,2,3,3]" + Elided + "  init %b: f32[6]" +
                     Elided;
  std::string Outs;
  for (size_t I = 0; I < Acts.size(); ++I) {
    Text += convAct(static_cast<int>(I), Acts[I]);
    Outs += (I ? ", %y" : "%y") + std::to_string(I);
  }
  Text += "  output " + Outs + "\n}\n";
  auto G = parseWithRandomWeights(Text, 17);
  PassRun R = runAndCompare(*G, "fuse-conv-act", 1e-6);
  EXPECT_TRUE(R.Changed);
  EXPECT_EQ(stat(R, "fuse-conv-act"), static_cast<int64_t>(Acts.size()));
  EXPECT_EQ(countOps(*G, OpKind::FusedConv), static_cast<int>(Acts.size()));
  EXPECT_EQ(countOps(*G, OpKind::Conv), 0);
  EXPECT_EQ(stat(R, "fused-Clip"), 2);
  EXPECT_EQ(stat(R, "fused-GeluTanh"), 1);
  EXPECT_EQ(G->lookup("lo"), nullptr); // Orphaned bounds go.
  EXPECT_EQ(G->outputs()[0]->name(), "y0");
}

TEST(FuseConvActivationTest, OneDimensionalConvAndDeclines) {
  std::string Text = std::string("graph \"declines\" {\n"
                                 "  input %x: f32[N,3,8]\n"
                                 "  input %hi: f32[]\n") +
                     "  init %w: f32[4,3,3]" + Elided +
                     "  %c1 = Conv(%x, %w) {strides = [2]}\n"
                     "  %y1 = Relu(%c1)\n"
                     "  %c2 = Conv(%x, %w)\n  %y2 = Relu(%c2)\n"
                     "  %z2 = Neg(%c2)\n"
                     "  %c3 = Conv(%x, %w)\n  %y3 = Relu(%c3)\n"
                     "  %c4 = Conv(%x, %w)\n  %y4 = Clip(%c4, _, %hi)\n"
                     "  %c5 = Conv(%x, %w)\n  %y5 = Softplus(%c5)\n"
                     "  output %y1, %y2, %z2, %c3, %y3, %y4, %y5\n}\n";
  auto G = parseWithRandomWeights(Text, 18);
  PassRun R = runAndCompare(*G, "fuse-conv-act", 1e-6);
  EXPECT_EQ(stat(R, "fuse-conv-act"), 1);
  // The driver sweeps again after the fusion, so each decline is counted
  // once per sweep.
  EXPECT_GE(stat(R, "declined: fuse-conv-act: result has several consumers"),
            1);
  EXPECT_GE(stat(R, "declined: fuse-conv-act: result is a graph output"), 1);
  EXPECT_GE(stat(R, "declined: fuse-conv-act: Clip's max is not a constant "
                    "scalar"),
            1);
  EXPECT_GE(stat(R, "declined: fuse-conv-act: Softplus is not a fusable "
                    "activation"),
            1);
  EXPECT_NE(R.Debug.find("fuse-conv-act declined at node %c5 = Conv"),
            std::string::npos)
      << R.Debug;
}

TEST(FuseConvActivationTest, ConvBlockPipelineBecomesOneFusedConv) {
  // Pad -> Conv -> BatchNorm -> per-channel Mul/Add -> Relu, as exported
  // from a framework, ends as one nng.FusedConv computing the same.
  std::string Text =
      std::string("graph \"block\" {\n"
                  "  input %x: f32[2,3,6,6]\n"
                  "  init %pads: i64[8] = [0, 0, 1, 1, 0, 0, 1, "
                  "1]\n") +
      "  init %conv.weight: f32[4,3,3,3]" + Elided +
      "  init %bn.scale: f32[4]" + Elided + "  init %bn.B: f32[4]" + Elided +
      "  init %bn.mean: f32[4]" + Elided + "  init %bn.var: f32[4]" + Elided +
      "  init %k: f32[4,1,1]" + Elided +
      "  %p = Pad(%x, %pads)\n"
      "  %c = Conv(%p, %conv.weight) {strides = [2, 2]}\n"
      "  %b = BatchNormalization(%c, %bn.scale, %bn.B, "
      "%bn.mean, %bn.var)\n"
      "  %m = Mul(%b, %k)\n  %a = Add(%m, %k)\n"
      "  %y = Relu(%a)\n  output %y\n}\n";
  auto G = parseWithRandomWeights(Text, 41);
  std::unique_ptr<ir::Graph> Before = G->clone();
  for (const char *P : {"fuse-pad-into-conv", "fold-conv-bn",
                        "fold-conv-mul-add", "fuse-conv-act"})
    EXPECT_TRUE(passes::createPass(P)->run(*G)) << P;
  ir::verifyOrThrow(*G);
  ASSERT_EQ(G->numNodes(), 1u);
  const ir::Node &F = *G->nodes()[0];
  EXPECT_EQ(F.op(), OpKind::FusedConv);
  EXPECT_EQ(F.output()->name(), "y");
  EXPECT_EQ(F.input(1)->name(), "conv.weight");
  EXPECT_EQ(G->initializers().size(), 2u);
  passes::NumericCheckOptions O;
  O.RTol = O.ATol = 1e-4;
  passes::NumericCheckResult C = passes::compareOnReference(*Before, *G, O);
  EXPECT_TRUE(C.Ok) << C.Message;
}
