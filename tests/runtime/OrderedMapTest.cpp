//===- OrderedMapTest.cpp - The state dicts' ordered map ------------------===//
//
// Insertion order, replacement in place, erase keeping the order and the
// index of the entries after it, and insertNew leaving a refused entry
// untouched.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/OrderedMap.h"

#include <gtest/gtest.h>

using namespace nng;

using Strs = std::vector<std::string>;

TEST(OrderedMap, KeepsInsertionOrderAndReplacesInPlace) {
  OrderedMap<int> M;
  M.insert("b", 1);
  M.insert("a", 2);
  M.insert("c", 3);
  M.insert("a", 20);
  EXPECT_EQ(M.keys(), (Strs{"b", "a", "c"}));
  ASSERT_NE(M.find("a"), nullptr);
  EXPECT_EQ(*M.find("a"), 20);
  EXPECT_EQ(M.find("z"), nullptr);
  EXPECT_TRUE(M.contains("c"));
  EXPECT_EQ(M.size(), 3u);
}

TEST(OrderedMap, EraseKeepsTheRestFindable) {
  OrderedMap<int> M;
  for (int I = 0; I < 5; ++I)
    M.insert(std::string(1, static_cast<char>('a' + I)), I);
  EXPECT_TRUE(M.erase("b"));
  EXPECT_FALSE(M.erase("b"));
  EXPECT_EQ(M.keys(), (Strs{"a", "c", "d", "e"}));
  for (const auto &[K, V] : M)
    EXPECT_EQ(*M.find(K), V) << K;
  M.insert("b", 9);
  EXPECT_EQ(M.keys(), (Strs{"a", "c", "d", "e", "b"}));
  EXPECT_EQ(M.items().back().second, 9);
}

TEST(OrderedMap, InsertNewRefusesARepeatedKey) {
  OrderedMap<std::string> M;
  OrderedMap<std::string>::Entry E{"k", "first"};
  EXPECT_TRUE(M.insertNew(std::move(E)));
  OrderedMap<std::string>::Entry Again{"k", "second"};
  EXPECT_FALSE(M.insertNew(std::move(Again)));
  EXPECT_EQ(Again.first, "k"); // Left as it was, for the caller's message.
  EXPECT_EQ(Again.second, "second");
  EXPECT_EQ(*M.find("k"), "first");
  EXPECT_EQ(M.size(), 1u);
}
