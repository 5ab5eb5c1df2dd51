//===- NumericCheckTest.cpp - compareOnReference --------------------------===//
//
// Equal graphs match, a changed constant is reported with the output name,
// index and errors, tolerances and trials are honoured, and symbolic dims
// take their bound values.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/NumericCheck.h"
#include "nngraph/ir/Parser.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::passes;

namespace {

std::unique_ptr<ir::Graph> graphWithScale(const char *Scale) {
  std::string Text = std::string("graph \"g\" {\n"
                                 "  input %x: f32[N,3]\n"
                                 "  init %w: f32[3] = [") +
                     Scale + ", " + Scale + ", " + Scale +
                     "]\n"
                     "  %y: f32[N,3] = Mul(%x, %w)\n"
                     "  output %y\n"
                     "}\n";
  return ir::parseGraph(Text, "<test>");
}

TEST(NumericCheckTest, IdenticalGraphsMatch) {
  auto A = graphWithScale("2.0"), B = graphWithScale("2.0");
  NumericCheckOptions O;
  O.Trials = 3;
  NumericCheckResult R = compareOnReference(*A, *B, O);
  EXPECT_TRUE(R.Ok) << R.Message;
  EXPECT_EQ(R.MaxAbsError, 0.0);
  EXPECT_NE(R.Message.find("3 trial"), std::string::npos) << R.Message;
}

TEST(NumericCheckTest, ChangedValuesAreReported) {
  auto A = graphWithScale("2.0"), B = graphWithScale("2.5");
  NumericCheckResult R = compareOnReference(*A, *B, {});
  EXPECT_FALSE(R.Ok);
  EXPECT_NE(R.Message.find("output %y"), std::string::npos) << R.Message;
  EXPECT_NE(R.Message.find("flat index"), std::string::npos) << R.Message;
  EXPECT_NE(R.Message.find("abs error"), std::string::npos) << R.Message;
  EXPECT_GT(R.MaxAbsError, 0.0);
}

TEST(NumericCheckTest, ToleranceIsHonoured) {
  auto A = graphWithScale("2.0"), B = graphWithScale("2.00001");
  NumericCheckOptions Loose;
  Loose.RTol = 1e-3;
  EXPECT_TRUE(compareOnReference(*A, *B, Loose).Ok);
  NumericCheckOptions Strict;
  Strict.RTol = 0;
  Strict.ATol = 0;
  EXPECT_FALSE(compareOnReference(*A, *B, Strict).Ok);
}

TEST(NumericCheckTest, DimBindingsAndShapeChanges) {
  auto A = graphWithScale("1.0");
  auto B = ir::parseGraph("graph \"g\" {\n"
                          "  input %x: f32[N,3]\n"
                          "  %y: f32[3,N] = Transpose(%x) {perm = [1, 0]}\n"
                          "  output %y\n"
                          "}\n",
                          "<test>");
  NumericCheckOptions O;
  O.Dims = {{"N", 4}};
  NumericCheckResult R = compareOnReference(*A, *B, O);
  EXPECT_FALSE(R.Ok);
  EXPECT_NE(R.Message.find("changed type"), std::string::npos) << R.Message;
}

} // namespace
