//===- LayerArgsTest.cpp - Layer argument types and Python reprs ----------===//
//
// IntOrTuple expansion like PyTorch's _pair, and the Python formatting of
// floats and tuples that extra_repr strings rely on (expected strings are
// Python 3's repr of the same values).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::nn;

TEST(LayerArgsTest, PyFloatMatchesPythonRepr) {
  struct Case {
    double V;
    const char *Repr;
  } Cases[] = {{1e-5, "1e-05"},
               {0.1, "0.1"},
               {1.0, "1.0"},
               {1e-12, "1e-12"},
               {1e16, "1e+16"},
               {1e15, "1000000000000000.0"},
               {123456789.0, "123456789.0"},
               {0.0001, "0.0001"},
               {0.00012345, "0.00012345"},
               {2.5e-7, "2.5e-07"},
               {-0.5, "-0.5"},
               {0.01, "0.01"},
               {1.0 / 3, "0.3333333333333333"},
               {100.0, "100.0"},
               {1e300, "1e+300"},
               {5e-324, "5e-324"},
               {0.3, "0.3"},
               {12345678901234567.0, "1.2345678901234568e+16"},
               {0.0, "0.0"},
               {-0.0, "-0.0"},
               {INFINITY, "inf"},
               {NAN, "nan"}};
  for (const Case &C : Cases)
    EXPECT_EQ(repr::pyFloat(C.V), C.Repr);
}

TEST(LayerArgsTest, TuplesAndBools) {
  EXPECT_EQ(repr::pyTuple({3, 3}), "(3, 3)");
  EXPECT_EQ(repr::pyTuple({4}), "(4,)");
  EXPECT_EQ(repr::pyTuple({}), "()");
  EXPECT_EQ(repr::pyBool(true), "True");
  EXPECT_EQ(repr::pyStr("tanh"), "'tanh'");
}

TEST(LayerArgsTest, IntOrTupleKeepsItsForm) {
  IntOrTuple I = 3;
  EXPECT_FALSE(I.isTuple());
  EXPECT_EQ(I.repr(), "3");
  EXPECT_EQ(I.expand(2, "k"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(I.asTuple(2, "k").repr(), "(3, 3)");
  // Any integral type converts (size_t, int64_t, int).
  EXPECT_EQ(IntOrTuple(size_t{4}).repr(), "4");
  EXPECT_EQ(IntOrTuple(int64_t{-1}).values(), (std::vector<int64_t>{-1}));
  IntOrTuple T = {2, 5};
  EXPECT_TRUE(T.isTuple());
  EXPECT_EQ(T.repr(), "(2, 5)");
  EXPECT_EQ(T.expand(2, "k"), (std::vector<int64_t>{2, 5}));
  try {
    T.expand(1, "Conv1d kernel_size");
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("Conv1d kernel_size"),
              std::string::npos);
    EXPECT_NE(std::string(E.what()).find("(2, 5)"), std::string::npos);
  }
}

TEST(LayerArgsTest, ConvPaddingStringsAndSizes) {
  ConvPadding Same = "same";
  EXPECT_TRUE(Same.isString());
  EXPECT_EQ(Same.mode(), "same");
  ConvPadding Sizes = {1, 2};
  EXPECT_FALSE(Sizes.isString());
  EXPECT_EQ(Sizes.sizes().repr(), "(1, 2)");
  ConvPadding One = 1;
  EXPECT_EQ(One.sizes().expand(2, "p"), (std::vector<int64_t>{1, 1}));
}
