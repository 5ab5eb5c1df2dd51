//===- FuseMatMulAddTest.cpp - fuse-matmul-add ----------------------------===//
//
// fuse-matmul-add on random weights: MatMul + Add with [N], [1, N], [M, 1]
// (a graph input) and scalar biases in either operand order becomes a Gemm
// that computes the same; batched MatMuls, shape-changing biases,
// non-constant weights and shared results are declined and counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {
const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";
} // namespace

TEST(FuseMatMulAddTest, BiasesOfEveryBroadcastShapeFuseAndMatch) {
  std::string Text = std::string("graph \"mm\" {\n"
                                 "  input %a: f32[N,5]\n"
                                 "  input %rows: f32[N,1]\n") +
                     "  init %w: f32[5,4]" + Elided + "  init %b: f32[4]" +
                     Elided + "  init %b2: f32[1,4]" + Elided +
                     "  init %b3: f32[]" + Elided +
                     "  %m1 = MatMul(%a, %w) name(\"fc1\") scope(\"fc1\", "
                     "\"Linear\")\n"
                     "  %y1 = Add(%m1, %b)\n"
                     "  %m2 = MatMul(%a, %w)\n  %y2 = Add(%b2, %m2)\n"
                     "  %m3 = MatMul(%a, %w)\n  %y3 = Add(%m3, %rows)\n"
                     "  %m4 = MatMul(%a, %w)\n  %y4 = Add(%b3, %m4)\n"
                     "  output %y1, %y2, %y3, %y4\n}\n";
  auto G = parseWithRandomWeights(Text, 12);
  PassRun R = runAndCompare(*G, "fuse-matmul-add", 1e-5);
  EXPECT_TRUE(R.Changed);
  EXPECT_EQ(stat(R, "fuse-matmul-add"), 4);
  EXPECT_EQ(countOps(*G, OpKind::Gemm), 4);
  EXPECT_EQ(countOps(*G, OpKind::MatMul), 0);
  const ir::Node *Fc1 = G->lookup("y1")->producer();
  EXPECT_EQ(Fc1->name(), "fc1");
  EXPECT_EQ(Fc1->scope().ModuleType, "Linear");
}

TEST(FuseMatMulAddTest, DeclinesAreCounted) {
  std::string Text = std::string("graph \"declines\" {\n"
                                 "  input %a: f32[N,5]\n"
                                 "  input %a3: f32[2,N,5]\n"
                                 "  input %wi: f32[5,4]\n") +
                     "  init %w: f32[5,4]" + Elided + "  init %b: f32[4]" +
                     Elided + "  init %b3: f32[2,1,4]" + Elided +
                     "  %m1 = MatMul(%a3, %w)\n  %y1 = Add(%m1, %b)\n"
                     "  %m2 = MatMul(%a, %w)\n  %y2 = Add(%m2, %b3)\n"
                     "  %m3 = MatMul(%a, %wi)\n  %y3 = Add(%m3, %b)\n"
                     "  %m4 = MatMul(%a, %w)\n  %y4 = Add(%m4, %b)\n"
                     "  %r4 = Relu(%m4)\n"
                     "  %y5 = Add(%a, %a)\n"
                     "  output %y1, %y2, %y3, %y4, %r4, %y5\n}\n";
  auto G = parseWithRandomWeights(Text, 13);
  PassRun R = runAndCompare(*G, "fuse-matmul-add", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(stat(R, "declined: fuse-matmul-add: MatMul input A is not 2-D"), 1);
  EXPECT_EQ(stat(R, "declined: fuse-matmul-add: bias does not broadcast to "
                    "the [M, N] result"),
            1);
  EXPECT_EQ(stat(R, "declined: fuse-matmul-add: MatMul input B is not a 2-D "
                    "constant"),
            1);
  EXPECT_EQ(
      stat(R, "declined: fuse-matmul-add: MatMul result has other consumers"),
      1);
  EXPECT_EQ(stat(R, "declined: fuse-matmul-add: no operand is produced by a "
                    "MatMul"),
            1);
  EXPECT_NE(R.Debug.find("declined at node %y1 = Add: MatMul input A is not "
                         "2-D"),
            std::string::npos)
      << R.Debug;
}
