//===- FoldConvBatchNormTest.cpp - fold-conv-bn ---------------------------===//
//
// fold-conv-bn on random weights and non-trivial running statistics: the
// folded graph computes what the original did on the reference backend for
// 1-d and 2-d convs (padded, strided, grouped, depthwise, with and without a
// bias), ConvTransposes (grouped, depthwise, strided with output_padding),
// Gemms (transB 0/1, alpha, beta, bias shapes) and MatMuls; names survive;
// shared weights are copied, not changed under the other user; every decline
// is counted and explained under --debug-only.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {

/// A BatchNormalization over C channels with elided (random) parameters.
std::string bnInits(const std::string &P, int C) {
  std::string T = "f32[" + std::to_string(C) + "]";
  std::string H = " = elided(\"fnv1a64:0000000000000000\")\n";
  return "  init %" + P + ".scale: " + T + H + "  init %" + P + ".B: " + T + H +
         "  init %" + P + ".mean: " + T + H + "  init %" + P + ".var: " + T + H;
}

std::string bn(const std::string &Out, const std::string &In,
               const std::string &P, const std::string &Attrs = "") {
  return "  %" + Out + " = BatchNormalization(%" + In + ", %" + P +
         ".scale, %" + P + ".B, %" + P + ".mean, %" + P + ".var)" + Attrs +
         "\n";
}

const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";

} // namespace

TEST(FoldConvBatchNormTest, ConvVariantsFoldAndMatch) {
  std::string Text =
      std::string("graph \"convs\" {\n"
                  "  input %x: f32[2,4,7,6]\n"
                  "  input %s: f32[N,4,9]\n") +
      "  init %c1.weight: f32[6,4,3,3]" + Elided + "  init %c1.bias: f32[6]" +
      Elided + "  init %c2.weight: f32[6,2,3,2]" + Elided +
      "  init %c3.weight: f32[4,1,3,3]" + Elided +
      "  init %c4.weight: f32[5,4,3]" + Elided + "  init %c4.bias: f32[5]" +
      Elided + bnInits("bn1", 6) + bnInits("bn2", 6) + bnInits("bn3", 4) +
      bnInits("bn4", 5) +
      "  %c1 = Conv(%x, %c1.weight, %c1.bias) {pads = [1, 0, "
      "1, 2], strides = [2, 1]}\n" +
      bn("out1", "c1", "bn1", " {epsilon = 0.001}") +
      "  %c2 = Conv(%x, %c2.weight) {group = 2, dilations = "
      "[2, 1]}\n" +
      bn("b2", "c2", "bn2") + "  %out2 = Relu(%b2)\n" +
      "  %c3 = Conv(%x, %c3.weight) {group = 4, pads = [1, 1, "
      "1, 1]}\n" +
      bn("out3", "c3", "bn3") +
      "  %c4 = Conv(%s, %c4.weight, %c4.bias) {pads = [1, 1]}\n" +
      bn("out4", "c4", "bn4") + "  output %out1, %out2, %out3, %out4\n}\n";
  auto G = parseWithRandomWeights(Text);
  PassRun R = runAndCompare(*G, "fold-conv-bn", 1e-4);
  EXPECT_TRUE(R.Changed);
  EXPECT_EQ(stat(R, "folded-into-conv"), 4);
  EXPECT_EQ(stat(R, "fold-bn"), 4);
  EXPECT_EQ(countOps(*G, OpKind::BatchNormalization), 0);
  // Graph outputs keep their names; weights keep theirs; biases are added.
  EXPECT_EQ(G->outputs()[0]->name(), "out1");
  EXPECT_EQ(G->outputs()[0]->producer()->op(), OpKind::Conv);
  EXPECT_NE(G->lookup("c1.weight"), nullptr);
  EXPECT_NE(G->lookup("c2.bias"), nullptr);
  EXPECT_NE(G->lookup("c3.bias"), nullptr);
  EXPECT_EQ(G->lookup("bn1.mean"), nullptr);
  EXPECT_EQ(stat(R, "initializers-erased"), 16);
}

TEST(FoldConvBatchNormTest, ConvTransposeVariantsFoldAndMatch) {
  std::string Text =
      std::string("graph \"deconvs\" {\n"
                  "  input %x: f32[2,4,5,4]\n") +
      "  init %t1.weight: f32[4,3,3,3]" + Elided + "  init %t1.bias: f32[6]" +
      Elided + "  init %t2.weight: f32[4,1,2,2]" + Elided +
      "  init %t3.weight: f32[4,5,3,2]" + Elided + bnInits("bn1", 6) +
      bnInits("bn2", 4) + bnInits("bn3", 5) +
      // Grouped, strided, with output_padding and a bias.
      "  %t1 = ConvTranspose(%x, %t1.weight, %t1.bias) {group = "
      "2, strides = [2, 2], output_padding = [1, 0], pads = [1, "
      "0, 0, 1]}\n" +
      bn("out1", "t1", "bn1") +
      // Depthwise.
      "  %t2 = ConvTranspose(%x, %t2.weight) {group = 4}\n" +
      bn("out2", "t2", "bn2") +
      "  %t3 = ConvTranspose(%x, %t3.weight) {strides = [1, 2]}\n" +
      bn("out3", "t3", "bn3") + "  output %out1, %out2, %out3\n}\n";
  auto G = parseWithRandomWeights(Text, 21);
  PassRun R = runAndCompare(*G, "fold-conv-bn", 1e-4);
  EXPECT_EQ(stat(R, "folded-into-conv-transpose"), 3);
  EXPECT_EQ(countOps(*G, OpKind::BatchNormalization), 0);
  EXPECT_EQ(countOps(*G, OpKind::ConvTranspose), 3);
}

TEST(FoldConvBatchNormTest, GemmAndMatMulFoldAndMatch) {
  std::string Text =
      std::string("graph \"linear\" {\n"
                  "  input %x: f32[N,5]\n") +
      "  init %g1.weight: f32[4,5]" + Elided + "  init %g1.bias: f32[4]" +
      Elided + "  init %g2.weight: f32[5,4]" + Elided +
      "  init %g2.bias: f32[1,4]" + Elided + "  init %g3.weight: f32[4,5]" +
      Elided + "  init %m4.weight: f32[5,4]" + Elided + bnInits("bn1", 4) +
      bnInits("bn2", 4) + bnInits("bn3", 4) + bnInits("bn4", 4) +
      "  %g1 = Gemm(%x, %g1.weight, %g1.bias) {transB = 1, "
      "alpha = 0.5, beta = 2.0}\n" +
      bn("out1", "g1", "bn1") +
      "  %g2 = Gemm(%x, %g2.weight, %g2.bias) {beta = 0.25}\n" +
      bn("out2", "g2", "bn2") + "  %g3 = Gemm(%x, %g3.weight) {transB = 1}\n" +
      bn("out3", "g3", "bn3") + "  %m4 = MatMul(%x, %m4.weight)\n" +
      bn("out4", "m4", "bn4") + "  output %out1, %out2, %out3, %out4\n}\n";
  auto G = parseWithRandomWeights(Text, 33);
  PassRun R = runAndCompare(*G, "fold-conv-bn", 1e-4);
  EXPECT_EQ(stat(R, "folded-into-gemm"), 3);
  EXPECT_EQ(stat(R, "folded-into-matmul"), 1);
  EXPECT_EQ(countOps(*G, OpKind::Gemm), 4);
  EXPECT_EQ(countOps(*G, OpKind::MatMul), 0);
  EXPECT_NE(G->lookup("m4.weight"), nullptr);
  EXPECT_NE(G->lookup("m4.bias"), nullptr);
}

TEST(FoldConvBatchNormTest, SharedWeightsAreCopied) {
  std::string Text = std::string("graph \"shared\" {\n"
                                 "  input %x: f32[1,3,4,4]\n") +
                     "  init %w: f32[3,3,1,1]" + Elided + bnInits("bn1", 3) +
                     "  %c1 = Conv(%x, %w)\n" + bn("out1", "c1", "bn1") +
                     "  %out2 = Conv(%x, %w)\n" + "  output %out1, %out2\n}\n";
  auto G = parseWithRandomWeights(Text, 5);
  nng::rt::Tensor Before = G->lookup("w")->data();
  PassRun R = runAndCompare(*G, "fold-conv-bn", 1e-4);
  EXPECT_EQ(stat(R, "folded-into-conv"), 1);
  // The unfused Conv still reads the original weights.
  EXPECT_TRUE(G->lookup("w")->data().equals(Before));
  EXPECT_EQ(G->lookup("out2")->producer()->input(1), G->lookup("w"));
  EXPECT_NE(G->lookup("out1")->producer()->input(1), G->lookup("w"));
}

TEST(FoldConvBatchNormTest, DeclinesAreCountedAndExplained) {
  std::string Text =
      std::string("graph \"declines\" {\n"
                  "  input %x: f32[1,3,4,4]\n"
                  "  input %wi: f32[3,3,1,1]\n"
                  "  input %mi: f32[3]\n") +
      "  init %w1: f32[3,3,1,1]" + Elided + "  init %w2: f32[3,3,1,1]" +
      Elided + "  init %w3: f32[3,3,1,1]" + Elided + bnInits("bn", 3) +
      "  %c1 = Conv(%x, %w1)\n" + bn("o1", "c1", "bn") + "  %r1 = Relu(%c1)\n" +
      "  %c2 = Conv(%x, %wi)\n" + bn("o2", "c2", "bn") +
      "  %c3 = Conv(%x, %w2)\n" +
      "  %o3 = BatchNormalization(%c3, %bn.scale, %bn.B, %mi, "
      "%bn.var)\n" +
      "  %c4 = Conv(%x, %w3)\n" + bn("o4", "c4", "bn", " {training_mode = 1}") +
      "  %t5 = Tanh(%x)\n" + bn("o5", "t5", "bn") +
      "  output %o1, %r1, %o2, %o3, %o4, %o5\n}\n";
  auto G = parseWithRandomWeights(Text, 9);
  PassRun R = runAndCompare(*G, "fold-conv-bn", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(countOps(*G, OpKind::BatchNormalization), 5);
  EXPECT_EQ(stat(R, "declined: fold-bn: producer's result has other consumers"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-bn: weights are not constant"), 1);
  EXPECT_EQ(stat(R, "declined: fold-bn: BatchNormalization parameters are not "
                    "constant"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-bn: BatchNormalization is in training "
                    "mode"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-bn: input is not produced by Conv, "
                    "ConvTranspose, Gemm or MatMul"),
            1);
  EXPECT_NE(R.Debug.find("[fold-conv-bn] fold-bn declined at node %o2 = "
                         "BatchNormalization"),
            std::string::npos)
      << R.Debug;
  EXPECT_NE(R.Debug.find("weights are not constant"), std::string::npos);
}
