//===- FusePadIntoConvTest.cpp - fuse-pad-into-conv -----------------------===//
//
// fuse-pad-into-conv on random weights: zero constant Pads of the spatial
// axes of 1-d, 2-d and 3-d inputs fold into the Convs' pads (adding to
// existing ones, a Pad shared by two Convs) and compute the same; declines
// are counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {
const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";
} // namespace

TEST(FusePadIntoConvTest, PadsFoldAndMatch) {
  std::string Text =
      std::string("graph \"pads\" {\n"
                  "  input %x: f32[2,3,5,6]\n"
                  "  input %s: f32[2,3,7]\n"
                  "  input %v: f32[1,2,3,4,3]\n"
                  "  init %p: i64[8] = [0, 0, 1, 2, 0, 0, 2, 0]\n"
                  "  init %ps: i64[6] = [0, 0, 3, 0, 0, 1]\n"
                  "  init %pv: i64[10] = [0, 0, 1, 0, 1, 0, 0, "
                  "1, 0, 1]\n"
                  "  init %zero: f32[] = [0.0]\n") +
      "  init %w: f32[4,3,3,2]" + Elided + "  init %ws: f32[4,3,3]" + Elided +
      "  init %wv: f32[2,2,2,2,2]" + Elided +
      "  %p1 = Pad(%x, %p, %zero)\n"
      "  %y1 = Conv(%p1, %w) {pads = [1, 0, 0, 1], strides = "
      "[2, 1]}\n"
      "  %y2 = Conv(%p1, %w) {dilations = [1, 2]}\n"
      "  %p3 = Pad(%s, %ps)\n  %y3 = Conv(%p3, %ws)\n"
      "  %p4 = Pad(%v, %pv)\n  %y4 = Conv(%p4, %wv)\n"
      "  output %y1, %y2, %y3, %y4\n}\n";
  auto G = parseWithRandomWeights(Text, 23);
  PassRun R = runAndCompare(*G, "fuse-pad-into-conv", 1e-5);
  EXPECT_EQ(stat(R, "fuse-pad-into-conv"), 4);
  EXPECT_EQ(countOps(*G, OpKind::Pad), 0);
  EXPECT_EQ(G->lookup("y1")->producer()->attrInts("pads"),
            (std::vector<int64_t>{2, 2, 2, 1}));
  EXPECT_EQ(G->lookup("p"), nullptr);
}

TEST(FusePadIntoConvTest, DeclinesAreCounted) {
  std::string Text =
      std::string("graph \"declines\" {\n"
                  "  input %x: f32[1,2,4,4]\n"
                  "  input %pin: i64[8]\n"
                  "  input %val: f32[]\n"
                  "  init %p: i64[8] = [0, 0, 1, 1, 0, 0, 1, 1]\n"
                  "  init %pc: i64[8] = [0, 1, 0, 0, 0, 0, 0, 0]\n"
                  "  init %pn: i64[8] = [0, 0, 0, -1, 0, 0, 0, 0]\n"
                  "  init %one: f32[] = [1.0]\n") +
      "  init %w: f32[2,2,1,1]" + Elided + "  init %w3: f32[2,3,1,1]" + Elided +
      "  %p1 = Pad(%x, %p) {mode = \"edge\"}\n"
      "  %y1 = Conv(%p1, %w)\n"
      "  %p2 = Pad(%x, %p, %one)\n  %y2 = Conv(%p2, %w)\n"
      "  %p3 = Pad(%x, %p, %val)\n  %y3 = Conv(%p3, %w)\n"
      "  %p4 = Pad(%x, %pc)\n  %y4 = Conv(%p4, %w3)\n"
      "  %p5 = Pad(%x, %pn)\n  %y5 = Conv(%p5, %w)\n"
      "  %p6 = Pad(%x, %p)\n"
      "  %y6 = Conv(%p6, %w) {auto_pad = \"VALID\"}\n"
      "  %y7 = Conv(%x, %w)\n"
      "  %p8 = Pad(%x, %pin)\n  %y8 = Conv(%p8, %w)\n"
      "  output %y1, %y2, %y3, %y4, %y5, %y6, %y7, %y8\n}\n";
  auto G = parseWithRandomWeights(Text, 24);
  auto P = passes::createPass("fuse-pad-into-conv");
  EXPECT_FALSE(P->run(*G));
  EXPECT_EQ(countOps(*G, OpKind::Pad), 7);
  const passes::Statistics &S = P->statistics();
  for (const char *Why :
       {"Pad mode is not 'constant'", "Pad value is not zero",
        "Pad value is not a constant scalar",
        "Pad pads the batch or channel axis", "Pad crops (negative pads)",
        "Conv auto_pad is not NOTSET", "input is not produced by a Pad",
        "Pad amounts are not constant"}) {
    auto It = S.find(std::string("declined: fuse-pad-into-conv: ") + Why);
    EXPECT_TRUE(It != S.end() && It->second == 1) << Why;
  }
}
