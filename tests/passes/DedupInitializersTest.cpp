//===- DedupInitializersTest.cpp - dedup-initializers keeps the numbers ---===//
//
// dedup-initializers on graphs with copied weights: outputs agree before and
// after on the reference backend, the first name survives, bytes saved are
// counted, and copies that differ in shape, dtype or bytes stay.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/passes/Passes.h"

using namespace nng;
using namespace nng::simplify_test;

TEST(DedupInitializersTest, SharesCopiesAndCountsBytes) {
  const char *Text = R"(graph {
    input %x: f32[2,3]
    init %w1: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w2: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w3: f32[3,2] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w4: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %b1: f32[3] = [0.0, 0.0, 0.0]
    init %b2: f32[3] = [-0.0, 0.0, 0.0]
    %a = Add(%x, %w1)
    %b = Mul(%a, %w2)
    %c = MatMul(%b, %w3)
    %d = Sub(%b, %w4)
    %e = Add(%d, %b1)
    %f = Add(%e, %b2)
    output %c, %f
  })";
  auto P = passes::createDedupInitializersPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "initializers-merged"), 2);
  EXPECT_EQ(stat(*P, "bytes-saved"), 2 * 6 * 4);
  EXPECT_EQ(G->initializers().size(), 4u);
  EXPECT_NE(G->lookup("w1"), nullptr);
  EXPECT_EQ(G->lookup("w2"), nullptr);
  EXPECT_NE(G->lookup("w3"), nullptr); // Same bytes, other shape.
  EXPECT_NE(G->lookup("b2"), nullptr); // -0.0 is other bytes than 0.0.
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(DedupInitializersTest, ElidedDataAndOutputCopiesAreDeclined) {
  const char *Text = R"(graph {
    input %x: f32[2]
    init %e1: f32[2] = elided("fnv1a64:0123456789abcdef")
    init %e2: f32[2] = elided("fnv1a64:0123456789abcdef")
    init %w: f32[2] = [1.0, 2.0]
    init %o: f32[2] = [1.0, 2.0]
    %a = Add(%x, %e1)
    %b = Add(%a, %e2)
    %c = Mul(%b, %w)
    output %c, %o
  })";
  auto G = ir::parseGraph(Text);
  auto P = passes::createDedupInitializersPass();
  EXPECT_FALSE(P->run(*G));
  EXPECT_EQ(stat(*P, "declined: data is elided"), 2);
  EXPECT_EQ(stat(*P, "declined: duplicate is a graph output"), 1);
  EXPECT_EQ(G->initializers().size(), 4u);
}
