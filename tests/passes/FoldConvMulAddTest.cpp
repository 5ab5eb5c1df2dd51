//===- FoldConvMulAddTest.cpp - fold-conv-mul-add -------------------------===//
//
// fold-conv-mul-add on random weights: per-channel Mul and Add chains after
// 2-d (grouped, strided) and 1-d convs, constants of shape [M, 1, 1],
// [1, M, 1, 1], [1] and scalars in either operand order, with and without a
// bias, compute what they computed before; the declines are counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {
const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";
} // namespace

TEST(FoldConvMulAddTest, PerChannelChainsFoldAndMatch) {
  std::string Text =
      std::string("graph \"affine\" {\n"
                  "  input %x: f32[2,4,6,5]\n"
                  "  input %s: f32[N,4,7]\n") +
      "  init %c1.weight: f32[6,4,3,3]" + Elided + "  init %c1.bias: f32[6]" +
      Elided + "  init %k1: f32[6,1,1]" + Elided + "  init %k2: f32[1,6,1,1]" +
      Elided + "  init %c2.weight: f32[6,2,1,3]" + Elided +
      "  init %k3: f32[]" + Elided + "  init %k4: f32[1]" + Elided +
      "  init %c3.weight: f32[3,4,2]" + Elided + "  init %k5: f32[3,1]" +
      Elided + "  init %k6: f32[1,3,1]" + Elided +
      "  %c1 = Conv(%x, %c1.weight, %c1.bias) {strides = [2, 1], "
      "pads = [1, 1, 0, 0]}\n"
      "  %m1 = Mul(%c1, %k1)\n"
      "  %out1 = Add(%k2, %m1)\n"
      "  %c2 = Conv(%x, %c2.weight) {group = 2}\n"
      "  %m2 = Mul(%k3, %c2)\n"
      "  %a2 = Add(%m2, %k4)\n"
      "  %out2 = Relu(%a2)\n"
      "  %c3 = Conv(%s, %c3.weight)\n"
      "  %m3 = Mul(%c3, %k5)\n"
      "  %out3 = Add(%m3, %k6)\n"
      "  output %out1, %out2, %out3\n}\n";
  auto G = parseWithRandomWeights(Text, 3);
  PassRun R = runAndCompare(*G, "fold-conv-mul-add", 1e-4);
  EXPECT_TRUE(R.Changed);
  EXPECT_EQ(stat(R, "fold-mul"), 3);
  EXPECT_EQ(stat(R, "fold-add"), 3);
  EXPECT_EQ(countOps(*G, OpKind::Mul), 0);
  EXPECT_EQ(countOps(*G, OpKind::Add), 0);
  EXPECT_EQ(G->outputs()[0]->name(), "out1");
  EXPECT_NE(G->lookup("c2.bias"), nullptr);
  EXPECT_NE(G->lookup("c3.bias"), nullptr);
  EXPECT_EQ(G->lookup("k1"), nullptr);
}

TEST(FoldConvMulAddTest, DeclinesAreCounted) {
  std::string Text =
      std::string("graph \"declines\" {\n"
                  "  input %x: f32[1,2,4,4]\n"
                  "  input %y: f32[1,3,4,4]\n"
                  "  input %wi: f32[3,2,1,1]\n") +
      "  init %w: f32[3,2,1,1]" + Elided + "  init %row: f32[4,1]" + Elided +
      "  init %ch: f32[3,1,1]" + Elided + "  init %big: f32[2,3,1,1]" + Elided +
      "  %c1 = Conv(%x, %w)\n  %o1 = Mul(%c1, %row)\n"
      "  %c2 = Conv(%x, %w)\n  %o2 = Mul(%c2, %y)\n"
      "  %c3 = Conv(%x, %w)\n  %o3 = Mul(%c3, %ch)\n"
      "  %r3 = Relu(%c3)\n"
      "  %c4 = Conv(%x, %wi)\n  %o4 = Mul(%c4, %ch)\n"
      "  %c5 = Conv(%x, %w)\n  %o5 = Add(%c5, %big)\n"
      "  output %o1, %o2, %o3, %r3, %o4, %o5\n}\n";
  auto G = parseWithRandomWeights(Text, 4);
  PassRun R = runAndCompare(*G, "fold-conv-mul-add", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(stat(R, "declined: fold-mul: constant does not broadcast per "
                    "output channel"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-add: constant does not broadcast per "
                    "output channel"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-mul: other operand is not a "
                    "floating-point constant"),
            1);
  EXPECT_EQ(stat(R, "declined: fold-mul: Conv result has other consumers"), 1);
  EXPECT_EQ(stat(R, "declined: fold-mul: Conv weights are not constant"), 1);
  EXPECT_NE(R.Debug.find("fold-mul declined at node %o1 = Mul"),
            std::string::npos)
      << R.Debug;
}
