//===- RecoverHardSwishTest.cpp - recover-hardswish -----------------------===//
//
// recover-hardswish on random inputs spread past both bends of the Clip
// (x from -8 to 8): the Div-by-6 and Mul-by-1/6 forms, operands in either
// order, in f32 and f64, become HardSwish computing the same to rounding;
// the cpu backend then fuses it into the convolution before it. Near-miss
// constants are declined and counted.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {

std::string chains(const std::string &T) {
  return "  init %four: " + T + "[] = [4.0]\n  init %zero: " + T +
         "[] = [0.0]\n  init %three: " + T + "[] = [3.0]\n  init %six: " + T +
         "[] = [6.0]\n  init %sixth: " + T + "[] = [0.16666666666666666]\n" +
         "  %x = Mul(%x0, %four)\n"
         "  %s1 = Add(%x, %three)\n  %c1 = Clip(%s1, %zero, %six)\n"
         "  %m1 = Mul(%x, %c1)\n  %y1 = Div(%m1, %six)\n"
         "  %s2 = Add(%three, %x)\n  %c2 = Clip(%s2, %zero, %six)\n"
         "  %m2 = Mul(%c2, %x)\n  %y2 = Mul(%sixth, %m2)\n"
         "  output %y1, %y2\n}\n";
}

} // namespace

TEST(RecoverHardSwishTest, BothFormsBecomeHardSwishAndMatch) {
  for (std::string T : {"f32", "f64"}) {
    SCOPED_TRACE(T);
    std::string Text =
        "graph \"hardswish\" {\n  input %x0: " + T + "[N,16]\n" + chains(T);
    auto G = parseWithRandomWeights(Text);
    PassRun R =
        runAndCompare(*G, "recover-hardswish", T == "f32" ? 1e-6 : 1e-12);
    EXPECT_TRUE(R.Changed);
    EXPECT_EQ(stat(R, "recover-hardswish"), 2);
    EXPECT_EQ(countOps(*G, OpKind::HardSwish), 2);
    EXPECT_EQ(countOps(*G, OpKind::Clip), 0);
  }
}

TEST(RecoverHardSwishTest, NearMissesAreDeclined) {
  std::string Text = "graph \"declines\" {\n  input %x0: f32[4,8]\n"
                     "  init %five: f32[] = [5.0]\n" +
                     chains("f32");
  // Bounds 0 and 5, and a division by 5.
  size_t At = Text.find("%c1 = Clip(%s1, %zero, %six)");
  Text.replace(At, 28, "%c1 = Clip(%s1, %zero, %five)");
  At = Text.find("%y2 = Mul(%sixth, %m2)");
  Text.replace(At, 22, "%y2 = Div(%m2, %five)");
  auto G = parseWithRandomWeights(Text);
  PassRun R = runAndCompare(*G, "recover-hardswish", 0.0);
  EXPECT_FALSE(R.Changed);
  EXPECT_EQ(stat(R, "declined: recover-hardswish: bounds are not the "
                    "constants 0 and 6"),
            1);
  EXPECT_EQ(stat(R, "declined: recover-hardswish: product is not divided "
                    "by 6"),
            1);
}
