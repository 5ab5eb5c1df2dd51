//===- FuseReshapesTest.cpp - fuse-reshapes keeps the numbers -------------===//
//
// fuse-reshapes on the lit test graph and on a flatten/unsqueeze-heavy
// block: outputs agree before and after on the reference backend, chains
// become one Reshape, dynamic chains are declined with a reason.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/passes/Passes.h"

using namespace nng;
using namespace nng::simplify_test;
using ir::OpKind;

TEST(FuseReshapesTest, LitGraphKeepsTheNumbers) {
  // tests/lit/passes/fuse-reshapes.nng without its zero-size case (the
  // reference backend cannot run Flatten of f32[5,0] yet).
  const char *Text = R"(graph "reshapes" {
    input %x: f32[2,3,4]
    input %xn: f32[N,12]
    input %xd: f32[N,M]
    init %s6: i64[2] = [6, 4]
    init %s234: i64[3] = [2, 3, 4]
    init %sn: i64[3] = [0, 3, 4]
    init %ax0: i64[1] = [0]
    init %ax2: i64[1] = [2]
    %r = Reshape(%x, %s6)
    %u = Unsqueeze(%r, %ax0)
    %s = Squeeze(%u, %ax0)
    %f = Flatten(%s)
    %u2 = Unsqueeze(%x, %ax0)
    %s2 = Squeeze(%u2, %ax0)
    %r2 = Reshape(%s2, %s234)
    %back = Relu(%r2)
    %fu = Unsqueeze(%xn, %ax2)
    %fn = Reshape(%fu, %sn)
    %d1 = Unsqueeze(%xd, %ax2)
    %d2 = Squeeze(%d1, %ax2)
    %lone = Flatten(%x)
    output %f, %back, %fn, %d2, %lone
  })";
  auto P = passes::createFuseReshapesPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "noop-chains-removed"), 2);
  EXPECT_GE(stat(*P, "declined: collapse-reshape-chain: result shape is not "
                     "static"),
            1);
  EXPECT_EQ(countOps(*G, OpKind::Flatten), 1u); // The lone one.
  EXPECT_EQ(countOps(*G, OpKind::Squeeze), 1u); // The dynamic one.
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(FuseReshapesTest, MixedChainWithSideUses) {
  const char *Text = R"(graph {
    input %x: f32[N,2,3,4]
    init %ax: i64[2] = [1, 4]
    init %s: i64[3] = [0, 6, 4]
    init %one: i64[1] = [1]
    %f = Flatten(%x) {axis = 1}
    %r = Reshape(%x, %s)
    %u = Unsqueeze(%r, %ax)
    %side = Relu(%u)
    %q = Squeeze(%u, %one)
    %g = Flatten(%q) {axis = 1}
    %h = Add(%g, %f)
    output %h, %side
  })";
  auto P = passes::createFuseReshapesPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_GE(stat(*P, "collapse-reshape-chain"), 2);
  EXPECT_EQ(countOps(*G, OpKind::Squeeze), 0u);
  // %u (kept for %side) and %g each read %x through one Reshape.
  EXPECT_EQ(countOps(*G, OpKind::Unsqueeze), 0u);
  EXPECT_EQ(countOps(*G, OpKind::Flatten), 1u); // %f: not a chain.
  EXPECT_EQ(countOps(*G, OpKind::Reshape), 2u);
  for (const auto &N : G->nodes())
    if (N->op() == OpKind::Reshape)
      EXPECT_EQ(N->input(0)->name(), "x");
}
