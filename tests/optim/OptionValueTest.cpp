//===- OptionValueTest.cpp - OptionValue and OptionDict -------------------===//
//
// The Python values that options and scheduler fields hold: kinds, Python's
// repr, conversions and their errors, and the insertion-ordered dict with
// set / set_default / at.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/Optimizer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::optim;

TEST(OptionValueTest, KindsAndPythonRepr) {
  EXPECT_EQ(OptionValue().repr(), "None");
  EXPECT_EQ(OptionValue(nullptr).describe(), "None");
  EXPECT_EQ(OptionValue(true).repr(), "True");
  EXPECT_EQ(OptionValue(3).repr(), "3");
  EXPECT_EQ(OptionValue(0.1).repr(), "0.1");
  EXPECT_EQ(OptionValue(0.0).repr(), "0.0");
  EXPECT_EQ(OptionValue(1e-8).repr(), "1e-08");
  EXPECT_EQ(OptionValue({0.9, 0.999}).repr(), "(0.9, 0.999)");
  EXPECT_EQ(OptionValue(std::vector<double>{0.5}).repr(), "(0.5,)");
  EXPECT_EQ(OptionValue(0.25).describe(), "float 0.25");
  EXPECT_TRUE(OptionValue(2).is_number());
  EXPECT_FALSE(OptionValue(true).is_number());
  EXPECT_EQ(OptionValue(2).to_double(), 2.0);
  EXPECT_EQ(OptionValue(4.0).to_int(), 4);
}

TEST(OptionValueTest, ConversionErrorsSayWhatTheValueIs) {
  auto Msg = [](auto Fn) -> std::string {
    try {
      Fn();
    } catch (const Error &E) {
      return E.what();
    }
    return "";
  };
  EXPECT_NE(Msg([] {
              OptionValue(true).to_double();
            }).find("expected a number, got bool True"),
            std::string::npos);
  EXPECT_NE(Msg([] {
              OptionValue(2.5).to_int();
            }).find("expected an int, got float 2.5"),
            std::string::npos);
  EXPECT_NE(Msg([] { OptionValue(1).to_bool(); }).find("expected a bool"),
            std::string::npos);
  EXPECT_NE(Msg([] { OptionValue().to_tuple(); }).find("got None"),
            std::string::npos);
}

TEST(OptionValueTest, DictKeepsInsertionOrder) {
  OptionDict D{{"lr", 0.1}, {"betas", {0.9, 0.99}}};
  D.set("eps", 1e-8);
  D.set("lr", 0.2); // Replaced in place.
  D.set_default("lr", 5.0);
  D.set_default("amsgrad", false);
  std::vector<std::string> Keys;
  for (const auto &E : D)
    Keys.push_back(E.first);
  EXPECT_EQ(Keys, (std::vector<std::string>{"lr", "betas", "eps", "amsgrad"}));
  EXPECT_EQ(D.number("lr"), 0.2);
  EXPECT_FALSE(D.flag("amsgrad"));
  try {
    D.at("momentum");
    FAIL() << "no error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find(
                  "no option 'momentum' (the keys are: lr, betas, eps, "
                  "amsgrad)"),
              std::string::npos)
        << E.what();
  }
}
