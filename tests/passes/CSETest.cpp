//===- CSETest.cpp - cse keeps the numbers --------------------------------===//
//
// cse on the lit test graph and on a small attention-like block with
// repeated subexpressions: outputs agree before and after on the reference
// backend, statistics count merges and declines, a second run is a no-op.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/passes/Passes.h"

using namespace nng;
using namespace nng::simplify_test;
using ir::OpKind;

TEST(CSETest, LitGraphKeepsTheNumbers) {
  std::string Text = ir::printGraph(*ir::parseGraphFile(
      std::string(NNGRAPH_SOURCE_DIR) + "/tests/lit/passes/cse.nng"));
  auto P = passes::createCSEPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "nodes-merged"), 3);     // %b, %s3, %p1 (into %p2)
  EXPECT_EQ(stat(*P, "constants-merged"), 2); // %k2, %k3
  EXPECT_EQ(stat(*P, "declined: random op"), 2);
  EXPECT_EQ(stat(*P, "declined: two graph outputs would merge"), 1);
  EXPECT_EQ(countOps(*G, OpKind::Dropout), 2u);
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(CSETest, RepeatedBlocksCollapse) {
  // The same projection written twice, then used through equal chains.
  const char *Text = R"(graph {
    input %x: f32[N,4]
    init %w: f32[4,4] = [1.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.5,
                         0.25, 0.0, 1.0, 0.0, 0.0, 0.25, 0.0, 1.0]
    %q = MatMul(%x, %w)
    %k = MatMul(%x, %w)
    %kt = Transpose(%k) {perm = [1, 0]}
    %qt = Transpose(%q) {perm = [1, 0]}
    %s1 = MatMul(%q, %kt)
    %s2 = MatMul(%k, %qt)
    %a1 = Softmax(%s1) {axis = -1}
    %a2 = Softmax(%s2) {axis = -1}
    %sum = Add(%a1, %a2)
    output %sum
  })";
  auto P = passes::createCSEPass();
  auto G = expectSameOutputs(Text, *P);
  // %k = %q, then %qt = %kt, %s2 = %s1, %a2 = %a1.
  EXPECT_EQ(stat(*P, "nodes-merged"), 4);
  EXPECT_EQ(countOps(*G, OpKind::MatMul), 2u);
  EXPECT_EQ(countOps(*G, OpKind::Softmax), 1u);
}

TEST(CSETest, DifferentAttributesOrOperandOrderStay) {
  const char *Text = R"(graph {
    input %x: f32[2,3]
    input %y: f32[2,3]
    %a = LeakyRelu(%x) {alpha = 0.1}
    %b = LeakyRelu(%x) {alpha = 0.2}
    %c = Sub(%x, %y)
    %d = Sub(%y, %x)
    %e = Add(%a, %b)
    %f = Add(%c, %d)
    output %e, %f
  })";
  auto P = passes::createCSEPass();
  auto G = expectSameOutputs(Text, *P, /*Changed=*/false);
  EXPECT_EQ(G->numNodes(), 6u);
  EXPECT_EQ(stat(*P, "nodes-merged"), 0);
}

TEST(CSETest, CommutativeOpsMergeInEitherOrder) {
  // Add, Mul and Max are commutative in the op table: x + y is y + x. Sub
  // is not (see above), nor is Pow.
  const char *Text = R"(graph {
    input %x: f32[2,3]
    input %y: f32[2,3]
    %a = Add(%x, %y)
    %b = Add(%y, %x)
    %m = Mul(%a, %b)
    %n = Mul(%b, %a)
    %p = Pow(%x, %y)
    %q = Pow(%y, %x)
    %s = Max(%m, %n, %p, %q)
    output %s
  })";
  auto P = passes::createCSEPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "nodes-merged"), 2); // %b into %a, then %n into %m.
  EXPECT_EQ(countOps(*G, OpKind::Add), 1u);
  EXPECT_EQ(countOps(*G, OpKind::Mul), 1u);
  EXPECT_EQ(countOps(*G, OpKind::Pow), 2u);
}
