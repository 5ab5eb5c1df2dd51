//===- ProgressTest.cpp - The tools' progress reporter --------------------===//
//
// Progress (tools/lib/Progress.h) on a stream that is not a terminal: plain
// "TOOL: ..." lines, one per step and one per 10% milestone of counted work
// (every item when there are ten or fewer), none with --quiet, none before
// the delay has passed, then the step still running; never a carriage
// return or an escape sequence.
//
//===----------------------------------------------------------------------===//

#include "../../tools/lib/Progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <thread>

using namespace nng::tools;

namespace {

size_t countLines(const std::string &S) {
  return static_cast<size_t>(std::count(S.begin(), S.end(), '\n'));
}

} // namespace

TEST(ProgressTest, PlainLinesPerStepAndPerTenPercent) {
  std::ostringstream Err;
  {
    Progress P(Err, "tool", /*Quiet=*/false);
    EXPECT_FALSE(P.terminal());
    P.step("loading m.onnx");
    P.begin("converting", 25, "tensors");
    for (size_t I = 1; I <= 25; ++I)
      P.advance(I, "t" + std::to_string(I));
  }
  std::string S = Err.str();
  EXPECT_EQ(S.rfind("tool: loading m.onnx\n", 0), 0u) << S;
  // 1/25 (4%), then the first item past each of 10%, 20%, ... 100%.
  EXPECT_EQ(countLines(S), 1u + 11u) << S;
  EXPECT_NE(S.find("tool: converting: 1/25 tensors (4%)\n"), std::string::npos)
      << S;
  EXPECT_NE(S.find("tool: converting: 3/25 tensors (12%)\n"), std::string::npos)
      << S;
  EXPECT_NE(S.find("tool: converting: 25/25 tensors (100%)\n"),
            std::string::npos)
      << S;
  EXPECT_EQ(S.find('\r'), std::string::npos);
  EXPECT_EQ(S.find('\033'), std::string::npos);
}

TEST(ProgressTest, QuietAndDelayPrintNothing) {
  std::ostringstream Quiet, Delayed;
  {
    Progress P(Quiet, "tool", /*Quiet=*/true);
    P.step("loading");
    P.begin("running", 3);
    P.advance(3);
  }
  {
    Progress P(Delayed, "tool", /*Quiet=*/false, std::chrono::hours(1));
    P.step("loading");
    P.begin("running", 3);
    P.advance(3);
  }
  EXPECT_EQ(Quiet.str(), "");
  EXPECT_EQ(Delayed.str(), "");

  // Once the delay has passed, lines flow.
  std::ostringstream Late;
  Progress P(Late, "tool", false, std::chrono::milliseconds(0));
  P.step("compiling");
  EXPECT_EQ(Late.str(), "tool: compiling\n");
}

TEST(ProgressTest, AStepStillRunningWhenTheDelayPassesShows) {
  std::ostringstream Err;
  {
    Progress P(Err, "tool", false, std::chrono::milliseconds(50));
    P.step("loading");   // Over before the delay: never shown.
    P.step("compiling"); // Still running when the delay passes.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  EXPECT_EQ(Err.str(), "tool: compiling\n");

  // clear() (before the driver's own stderr output) withdraws it.
  std::ostringstream Cleared;
  {
    Progress P(Cleared, "tool", false, std::chrono::milliseconds(50));
    P.step("compiling");
    P.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(Cleared.str(), "");
}
