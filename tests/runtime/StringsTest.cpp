//===- StringsTest.cpp - The string pool and str tensors -----------------===//
//
// Interning (equal strings share an id, the empty string is id 0, ids are
// stable across threads), str tensors (made from strings, moved by views and
// copies, compared, printed quoted as numpy does) and the refusal of numeric
// code (visitDType, getFlat, conversions) with a message that says strings
// are not taken.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Strings.h"
#include "nngraph/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace nng;
using nng::rt::Tensor;

namespace {

/// The message of the nng::Error F throws, or "" when it throws none.
template <typename Fn> std::string errorOf(Fn F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

TEST(Strings, DTypeProperties) {
  EXPECT_EQ(dtypeName(DType::String), "str");
  EXPECT_EQ(*parseDType("str"), DType::String);
  EXPECT_EQ(dtypeSize(DType::String), 8u);
  EXPECT_EQ(dtypeToOnnx(DType::String), 8);
  EXPECT_EQ(*dtypeFromOnnx(8), DType::String);
  EXPECT_FALSE(isFloatingPoint(DType::String));
  EXPECT_FALSE(isIntegral(DType::String));
  EXPECT_FALSE(isSigned(DType::String));
  EXPECT_TRUE(isString(DType::String));
  EXPECT_FALSE(isNumeric(DType::String));
  EXPECT_TRUE(isNumeric(DType::Bool));
  EXPECT_EQ(dtypeOf<StringId>(), DType::String);
}

TEST(Strings, InterningGivesEqualIdsForEqualStrings) {
  StringId A = rt::internString("monday");
  StringId B = rt::internString(std::string("mon") + "day");
  StringId C = rt::internString("Monday");
  EXPECT_EQ(A, B);
  EXPECT_NE(A, C);
  EXPECT_EQ(rt::stringOf(A), "monday");
  EXPECT_EQ(rt::stringOf(C), "Monday");
  EXPECT_EQ(rt::internString("").Id, 0u);
  EXPECT_EQ(rt::stringOf(StringId{0}), "");
  // Embedded zero bytes are part of the string.
  std::string Z("a\0b", 3);
  EXPECT_EQ(rt::stringOf(rt::internString(Z)), Z);
  EXPECT_NE(rt::internString(Z), rt::internString("a"));
  size_t Count = rt::internedStringCount();
  rt::internString("monday");
  EXPECT_EQ(rt::internedStringCount(), Count);
}

TEST(Strings, UnknownIdIsAnError) {
  std::string Msg = errorOf([] { rt::stringOf(StringId{1ull << 60}); });
  EXPECT_NE(Msg.find("was never interned"), std::string::npos) << Msg;
}

TEST(Strings, ConcurrentInterningAgrees) {
  constexpr int Threads = 4, Words = 500;
  std::vector<std::vector<StringId>> Ids(Threads);
  std::vector<std::thread> Pool;
  for (int T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      for (int I = 0; I < Words; ++I)
        Ids[T].push_back(rt::internString("word-" + std::to_string(I)));
    });
  for (std::thread &Th : Pool)
    Th.join();
  for (int T = 1; T < Threads; ++T)
    EXPECT_EQ(Ids[T], Ids[0]);
  for (int I = 0; I < Words; ++I)
    EXPECT_EQ(rt::stringOf(Ids[0][I]), "word-" + std::to_string(I));
}

TEST(Strings, TensorsHoldStrings) {
  Tensor T = Tensor::fromStrings({"a", "bb", "", "d"}, Shape{2, 2});
  EXPECT_EQ(T.dtype(), DType::String);
  EXPECT_EQ(T.nbytes(), 32u);
  EXPECT_EQ(T.toStrings(), (std::vector<std::string>{"a", "bb", "", "d"}));
  // Views and copies move the handles.
  Tensor P = T.permute({1, 0});
  EXPECT_FALSE(P.isContiguous());
  EXPECT_EQ(P.contiguous().toStrings(),
            (std::vector<std::string>{"a", "", "bb", "d"}));
  EXPECT_EQ(T.slice(1, 1, 2).clone().toStrings(),
            (std::vector<std::string>{"bb", "d"}));
  EXPECT_EQ(Tensor::fromStrings({"x"}, Shape{1})
                .broadcastTo(Shape{3})
                .contiguous()
                .toStrings(),
            (std::vector<std::string>{"x", "x", "x"}));
  EXPECT_TRUE(T.equals(T.clone()));
  EXPECT_FALSE(T.equals(Tensor::fromStrings({"a", "bb", "", "e"}, {2, 2})));
  // A new str tensor holds empty strings.
  EXPECT_EQ(Tensor::empty(Shape{2}, DType::String).toStrings(),
            (std::vector<std::string>{"", ""}));
}

TEST(Strings, PrintingQuotesLikeNumpy) {
  Tensor T = Tensor::fromStrings({"a", "it's", "say \"hi\"\n", ""}, Shape{4});
  EXPECT_EQ(T.toString(),
            "str[4] {'a', \"it's\", 'say \"hi\"\\n', ''}");
  EXPECT_EQ(rt::quoteForDisplay("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(rt::quoteForDisplay("tab\there\x01"), "'tab\\there\\x01'");
}

TEST(Strings, NumericCodeRefusesStrings) {
  Tensor T = Tensor::fromStrings({"1.5"}, Shape{1});
  std::string Msg = errorOf([&] {
    visitDType(T.dtype(), [](auto Tag) { return 0; });
  });
  EXPECT_NE(Msg.find("does not take string tensors (dtype str)"),
            std::string::npos)
      << Msg;
  try {
    visitDType(DType::String, [](auto Tag) { return 0; });
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported);
  }
  Msg = errorOf([&] { T.getFlat(0); });
  EXPECT_NE(Msg.find("string tensors"), std::string::npos) << Msg;
  Msg = errorOf([&] { T.to(DType::F32); });
  EXPECT_NE(Msg.find("only through the Cast op"), std::string::npos) << Msg;
  Msg = errorOf([&] { Tensor::scalar<float>(1.0f).toStrings(); });
  EXPECT_NE(Msg.find("only str tensors hold strings"), std::string::npos)
      << Msg;
  // visitDTypeOrString hands str to code that only moves elements.
  size_t Size = visitDTypeOrString(DType::String, [](auto Tag) {
    return sizeof(typename decltype(Tag)::type);
  });
  EXPECT_EQ(Size, 8u);
}

} // namespace
