//===- FuseGemmActivationTest.cpp - fuse-gemm-act -------------------------===//
//
// fuse-gemm-act on random weights: Gemm (transA/transB, alpha, beta, with
// and without a bias) followed by an activation becomes nng.FusedGemm
// computing the same; declines are counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {
const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";
} // namespace

TEST(FuseGemmActivationTest, ActivationsFuseAndMatch) {
  std::string Text = std::string("graph \"gemms\" {\n"
                                 "  input %x: f32[N,5]\n"
                                 "  input %xt: f32[5,N]\n"
                                 "  init %six: f32[] = [6.0]\n"
                                 "  init %zero: f32[] = [0.0]\n") +
                     "  init %w: f32[4,5]" + Elided + "  init %b: f32[4]" +
                     Elided +
                     "  %g1 = Gemm(%x, %w, %b) {transB = 1, alpha = 0.5, beta "
                     "= 1.5} name(\"fc1\")\n"
                     "  %y1 = Relu(%g1)\n"
                     "  %g2 = Gemm(%xt, %w) {transA = 1, transB = 1}\n"
                     "  %y2 = Clip(%g2, %zero, %six)\n"
                     "  %g3 = Gemm(%x, %w, %b) {transB = 1}\n"
                     "  %y3 = nng.Gelu(%g3)\n"
                     "  %g4 = Gemm(%x, %w, %b) {transB = 1}\n"
                     "  %y4 = LeakyRelu(%g4) {alpha = 0.1}\n"
                     "  output %y1, %y2, %y3, %y4\n}\n";
  auto G = parseWithRandomWeights(Text, 19);
  PassRun R = runAndCompare(*G, "fuse-gemm-act", 1e-6);
  EXPECT_EQ(stat(R, "fuse-gemm-act"), 4);
  EXPECT_EQ(countOps(*G, OpKind::FusedGemm), 4);
  EXPECT_EQ(countOps(*G, OpKind::Gemm), 0);
  const ir::Node *F = G->lookup("y1")->producer();
  EXPECT_EQ(F->name(), "fc1");
  EXPECT_EQ(F->attrFloat("alpha"), 0.5f);
  EXPECT_EQ(F->attrString("activation"), "Relu");
}

TEST(FuseGemmActivationTest, DeclinesAreCounted) {
  std::string Text = std::string("graph \"declines\" {\n"
                                 "  input %x: f32[N,5]\n") +
                     "  init %w: f32[4,5]" + Elided +
                     "  %g1 = Gemm(%x, %w) {transB = 1}\n"
                     "  %y1 = Relu(%g1)\n  %z1 = Exp(%g1)\n"
                     "  %g2 = Gemm(%x, %w) {transB = 1}\n  %y2 = Exp(%g2)\n"
                     "  %g3 = Gemm(%x, %w) {transB = 1}\n"
                     "  output %y1, %z1, %y2, %g3\n}\n";
  auto G = parseWithRandomWeights(Text, 20);
  PassRun R = runAndCompare(*G, "fuse-gemm-act", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(stat(R, "declined: fuse-gemm-act: result has several consumers"),
            1);
  EXPECT_EQ(stat(R, "declined: fuse-gemm-act: result is a graph output"), 1);
  EXPECT_EQ(stat(R, "declined: fuse-gemm-act: Exp is not a fusable "
                    "activation"),
            1);
}
