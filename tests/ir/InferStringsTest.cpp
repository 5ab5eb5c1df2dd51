//===- InferStringsTest.cpp - Inference of the string ops ----------------===//
//
// StringNormalizer: str [C] or [1, C] in, same rank out with a data-dependent
// last extent (static only without stopwords), and the checks of the input
// type, the shape and case_change_action.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferStrings : public IrTest {};

TEST_F(InferStrings, StringNormalizerShapes) {
  Attribute Stop(std::vector<std::string>{"monday"});
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[4]")},
                  attrs({{"stopwords", Stop}})),
            "str[?]");
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[1,6]")},
                  attrs({{"stopwords", Stop}})),
            "str[1,?]");
  // Without stopwords nothing is dropped; an empty input gives one "".
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[4]")}), "str[4]");
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[0]")}), "str[1]");
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[N]")}), "str[?]");
  EXPECT_EQ(infer(OpKind::StringNormalizer, {in("str[*]")}), "str[*]");
}

TEST_F(InferStrings, StringNormalizerErrors) {
  EXPECT_NE(inferError(OpKind::StringNormalizer, {in("f32[4]")})
                .find("must be a str tensor"),
            std::string::npos);
  EXPECT_NE(inferError(OpKind::StringNormalizer, {in("str[2,3]")})
                .find("[1, C]"),
            std::string::npos);
  EXPECT_NE(inferError(OpKind::StringNormalizer, {in("str[1,2,3]")})
                .find("[C] or [1, C]"),
            std::string::npos);
  EXPECT_NE(inferError(OpKind::StringNormalizer, {in("str[3]")},
                       attrs({{"case_change_action", "TITLE"}}))
                .find("'NONE', 'LOWER' or 'UPPER'"),
            std::string::npos);
}

} // namespace
