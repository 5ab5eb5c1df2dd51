//===- RemapTest.cpp - Key remapping of state dicts -----------------------===//
//
// Strip prefix, regex renames in order, add prefix; the per-step report
// (counts, steps that matched nothing); collisions naming both keys; rule
// parsing errors.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Remap.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <functional>

using namespace nng;
using namespace nng::weights;

namespace {

using Keys = std::vector<std::string>;

std::string messageOf(const std::function<void()> &F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "<no error>";
}

} // namespace

TEST(Remap, StripPrefixKeepsOtherKeys) {
  RemapOptions O;
  O.StripPrefix = "module.";
  RemapReport R;
  Keys Out =
      remapKeyList({"module.fc.weight", "module.fc.bias", "step"}, O, &R);
  EXPECT_EQ(Out, (Keys{"fc.weight", "fc.bias", "step"}));
  ASSERT_EQ(R.Steps.size(), 1u);
  EXPECT_EQ(R.Steps[0].Description, "strip-prefix 'module.'");
  EXPECT_EQ(R.Steps[0].Changed, 2u);
  EXPECT_TRUE(R.unmatched().empty());
  EXPECT_EQ(R.Renamed.size(), 2u);
}

TEST(Remap, StepsRunInOrderStripRenameAdd) {
  RemapOptions O;
  O.StripPrefix = "module.";
  O.Renames = {parseRenameRule("^features\\.(\\d+)\\.=layers.$1."),
               parseRenameRule("layers\\.0=stem")};
  O.AddPrefix = "backbone.";
  RemapReport R;
  Keys Out = remapKeyList(
      {"module.features.0.weight", "module.features.12.bias", "module.fc.w"}, O,
      &R);
  EXPECT_EQ(Out, (Keys{"backbone.stem.weight", "backbone.layers.12.bias",
                       "backbone.fc.w"}));
  ASSERT_EQ(R.Steps.size(), 4u);
  EXPECT_EQ(R.Steps[0].Changed, 3u);
  EXPECT_EQ(R.Steps[1].Changed, 2u);
  EXPECT_EQ(R.Steps[2].Changed, 1u);
  EXPECT_EQ(R.Steps[3].Changed, 3u);
  EXPECT_NE(R.toString().find("rename '^features"), std::string::npos);
}

TEST(Remap, EveryMatchIsReplacedLikeReSub) {
  RemapOptions O;
  O.Renames = {parseRenameRule("_=.")};
  EXPECT_EQ(remapKeyList({"a_b_c"}, O), (Keys{"a.b.c"}));
}

TEST(Remap, ReportsStepsThatMatchedNothing) {
  RemapOptions O;
  O.StripPrefix = "module.";
  O.Renames = {parseRenameRule("^encoder\\.=enc."), parseRenameRule("fc=head")};
  RemapReport R;
  Keys Out = remapKeyList({"fc.weight"}, O, &R);
  EXPECT_EQ(Out, (Keys{"head.weight"}));
  EXPECT_EQ(R.unmatched(),
            (Keys{"strip-prefix 'module.'", "rename '^encoder\\.=enc.'"}));
  EXPECT_NE(R.toString().find("(matched nothing)"), std::string::npos);
}

TEST(Remap, CollisionNamesBothKeys) {
  RemapOptions O;
  O.StripPrefix = "module.";
  std::string Msg = messageOf([&] { remapKeyList({"module.w", "w", "b"}, O); });
  EXPECT_NE(Msg.find("'module.w'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'w'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("both become 'w'"), std::string::npos) << Msg;
}

TEST(Remap, KeyBecomingEmptyIsAnError) {
  RemapOptions O;
  O.Renames = {parseRenameRule(".*=")};
  std::string Msg = messageOf([&] { remapKeyList({"w"}, O); });
  EXPECT_NE(Msg.find("'w' becomes empty"), std::string::npos) << Msg;
}

TEST(Remap, RuleParsingErrors) {
  EXPECT_NE(messageOf([] { parseRenameRule("noequals"); }).find("no '='"),
            std::string::npos);
  EXPECT_NE(messageOf([] { parseRenameRule("=x"); }).find("empty pattern"),
            std::string::npos);
  std::string Msg = messageOf([] { parseRenameRule("(unclosed=x"); });
  EXPECT_NE(Msg.find("'(unclosed'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("not a valid regular expression"), std::string::npos)
      << Msg;
  // The split is at the first '='; the replacement may contain '='.
  RenameRule R = parseRenameRule("a=b=c");
  EXPECT_EQ(R.Pattern, "a");
  EXPECT_EQ(R.Replacement, "b=c");
}

TEST(Remap, RemapKeysSharesTensorsAndKeepsOrder) {
  rt::Tensor A = rt::Tensor::scalar<float>(1), B = rt::Tensor::scalar<float>(2);
  TensorMap M({{"module.a", A}, {"module.b", B}});
  RemapOptions O;
  O.StripPrefix = "module.";
  TensorMap R = remapKeys(M, O);
  EXPECT_EQ(R.keys(), (Keys{"a", "b"}));
  EXPECT_EQ(R.at("b").storage(), B.storage());
}
