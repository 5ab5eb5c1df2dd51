//===- RecoverGeluTest.cpp - recover-gelu ---------------------------------===//
//
// recover-gelu on random inputs: every supported arrangement of the exact
// (Erf) and tanh GELU expansions, in f32 and f64, becomes nng.Gelu computing
// the same; nngraph's own ONNX expansion of nng.Gelu is recognized (the
// round trip through export); near-miss constants and shared intermediates
// are declined and counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {

std::string constants(const std::string &T) {
  return "  init %sqrt2: " + T + "[] = [1.4142135623730951]\n" +
         "  init %rsqrt2: " + T + "[] = [0.7071067811865476]\n" +
         "  init %one: " + T + "[] = [1.0]\n" + "  init %half: " + T +
         "[] = [0.5]\n" + "  init %two: " + T + "[] = [2.0]\n" +
         "  init %three: " + T + "[] = [3.0]\n" + "  init %c: " + T +
         "[] = [0.044715]\n" + "  init %k: " + T +
         "[] = [0.7978845608028654]\n";
}

std::string arrangements() {
  return "  %a1 = Div(%x, %sqrt2)\n  %e1 = Erf(%a1)\n  %c1 = Add(%e1, %one)\n"
         "  %m1 = Mul(%x, %c1)\n  %y1 = Mul(%m1, %half)\n"
         "  %a2 = Mul(%x, %rsqrt2)\n  %e2 = Erf(%a2)\n  %c2 = Add(%one, %e2)\n"
         "  %h2 = Mul(%half, %x)\n  %y2 = Mul(%c2, %h2)\n"
         "  %a3 = Div(%x, %sqrt2)\n  %e3 = Erf(%a3)\n  %c3 = Add(%e3, %one)\n"
         "  %hc3 = Mul(%half, %c3)\n  %y3 = Mul(%hc3, %x)\n"
         "  %a4 = Div(%x, %sqrt2)\n  %e4 = Erf(%a4)\n  %c4 = Add(%e4, %one)\n"
         "  %m4 = Mul(%c4, %x)\n  %y4 = Div(%m4, %two)\n"
         "  %p5 = Pow(%x, %three)\n  %t5 = Mul(%c, %p5)\n"
         "  %s5 = Add(%t5, %x)\n  %u5 = Mul(%k, %s5)\n  %th5 = Tanh(%u5)\n"
         "  %a5 = Add(%one, %th5)\n  %m5 = Mul(%a5, %x)\n"
         "  %y5 = Mul(%half, %m5)\n"
         "  %sq6 = Mul(%x, %x)\n  %cu6 = Mul(%x, %sq6)\n"
         "  %t6 = Mul(%cu6, %c)\n  %s6 = Add(%x, %t6)\n"
         "  %u6 = Mul(%s6, %k)\n  %th6 = Tanh(%u6)\n  %a6 = Add(%th6, %one)\n"
         "  %h6 = Mul(%x, %half)\n  %y6 = Mul(%h6, %a6)\n"
         "  output %y1, %y2, %y3, %y4, %y5, %y6\n}\n";
}

} // namespace

TEST(RecoverGeluTest, EveryArrangementBecomesGeluAndMatches) {
  for (std::string T : {"f32", "f64"}) {
    SCOPED_TRACE(T);
    std::string Text = "graph \"gelu\" {\n  input %x: " + T + "[N,16]\n" +
                       constants(T) + arrangements();
    auto G = parseWithRandomWeights(Text);
    PassRun R = runAndCompare(*G, "recover-gelu", T == "f32" ? 1e-6 : 1e-12);
    EXPECT_TRUE(R.Changed);
    EXPECT_EQ(stat(R, "recover-gelu-erf"), 4);
    EXPECT_EQ(stat(R, "recover-gelu-tanh"), 2);
    EXPECT_EQ(countOps(*G, OpKind::Gelu), 6);
    EXPECT_EQ(G->numNodes(), 6u);
    EXPECT_EQ(G->initializers().size(), 0u);
    EXPECT_EQ(G->lookup("y5")->producer()->attrString("approximate"), "tanh");
    EXPECT_EQ(G->lookup("y1")->producer()->attrString("approximate"), "none");
  }
}

TEST(RecoverGeluTest, DeclinesAreCounted) {
  std::string Text = std::string("graph \"declines\" {\n"
                                 "  input %x: f32[4,8]\n") +
                     constants("f32") +
                     "  init %near: f32[] = [1.4]\n"
                     "  %a1 = Div(%x, %near)\n  %e1 = Erf(%a1)\n"
                     "  %c1 = Add(%e1, %one)\n  %m1 = Mul(%x, %c1)\n"
                     "  %y1 = Mul(%m1, %half)\n"
                     "  %a2 = Div(%x, %sqrt2)\n  %e2 = Erf(%a2)\n"
                     "  %c2 = Add(%e2, %one)\n  %m2 = Mul(%x, %c2)\n"
                     "  %y2 = Mul(%m2, %half)\n"
                     "  %a3 = Div(%x, %sqrt2)\n  %e3 = Erf(%a3)\n"
                     "  %c3 = Add(%e3, %one)\n  %y3 = Mul(%x, %c3)\n"
                     "  %a4 = Div(%x, %sqrt2)\n  %e4 = Erf(%a4)\n"
                     "  %c4 = Add(%e4, %two)\n  %m4 = Mul(%x, %c4)\n"
                     "  %y4 = Mul(%m4, %half)\n"
                     "  %n5 = Neg(%x)\n  %th5 = Tanh(%n5)\n"
                     "  output %y1, %y2, %m2, %y3, %y4, %th5\n}\n";
  auto G = parseWithRandomWeights(Text);
  PassRun R = runAndCompare(*G, "recover-gelu", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(stat(R, "declined: recover-gelu-erf: operand is not x / sqrt(2)"),
            1);
  EXPECT_EQ(stat(R, "declined: recover-gelu-erf: not multiplied by 0.5 * x"),
            2);
  EXPECT_EQ(stat(R, "declined: recover-gelu-erf: result does not feed only "
                    "1 + it"),
            1);
  EXPECT_EQ(stat(R, "declined: recover-gelu-tanh: operand is not sqrt(2/pi) "
                    "* (x + 0.044715 * x^3)"),
            1);
}
