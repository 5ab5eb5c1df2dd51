//===- TensorMapTest.cpp - TensorMap, selectTensors, format dispatch ------===//
//
// The data-level state dict: insertion order, unique keys, replace in
// place, erase; selectTensors over checkpoint trees (key paths with '/',
// integer keys as digits, nested dicts flattened to dotted keys, skipped
// non-tensor leaves, errors naming the missing component and the keys
// present); toObject; formatForPath and flat files read as a dict.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/TensorMap.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <unistd.h>

using namespace nng;
using namespace nng::weights;

namespace {

rt::Tensor vec(std::vector<float> V) {
  int64_t N = static_cast<int64_t>(V.size());
  return rt::Tensor::fromVector<float>(V, Shape{N});
}

Object str(const char *S) { return Object::string(S); }

/// {'model_state_dict': {'fc': {'weight': t, 'bias': t}, 'scale': t},
///  'optimizer_state_dict': {'state': {0: {'momentum_buffer': t}}},
///  'epoch': 3}
Object checkpoint() {
  Object Fc = Object::dict({{str("weight"), Object::tensor(vec({1, 2}))},
                            {str("bias"), Object::tensor(vec({3}))}});
  Object Model =
      Object::dict({{str("fc"), Fc}, {str("scale"), Object::tensor(vec({4}))}});
  Object State = Object::dict(
      {{Object::integer(0),
        Object::dict({{str("momentum_buffer"), Object::tensor(vec({5}))}})}});
  Object Opt =
      Object::dict({{str("state"), State}, {str("lr"), Object::floating(0.1)}});
  return Object::dict({{str("model_state_dict"), Model},
                       {str("optimizer_state_dict"), Opt},
                       {str("epoch"), Object::integer(3)}});
}

std::string messageOf(const std::function<void()> &F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "<no error>";
}

} // namespace

TEST(TensorMap, KeepsInsertionOrderAndReplacesInPlace) {
  TensorMap M;
  M.insert("b", vec({1}));
  M.insert("a", vec({2}));
  M.insert("c", vec({3}));
  M.insert("a", vec({9, 9}));
  EXPECT_EQ(M.keys(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(M.at("a").numel(), 2);
  EXPECT_TRUE(M.contains("c"));
  EXPECT_FALSE(M.contains("d"));
}

TEST(TensorMap, EraseKeepsLookupsRight) {
  TensorMap M({{"x", vec({1})}, {"y", vec({2})}, {"z", vec({3})}});
  EXPECT_TRUE(M.erase("x"));
  EXPECT_FALSE(M.erase("x"));
  EXPECT_EQ(M.keys(), (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(M.at("z").getFlat(0), 3.0);
  EXPECT_EQ(M.at("y").getFlat(0), 2.0);
  M.insert("x", vec({7}));
  EXPECT_EQ(M.keys().back(), "x");
}

TEST(TensorMap, RepeatedKeyInConstructorIsAnError) {
  std::string Msg = messageOf([] {
    TensorMap M({{"w", vec({1})}, {"w", vec({2})}});
  });
  EXPECT_NE(Msg.find("'w'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("twice"), std::string::npos) << Msg;
}

TEST(TensorMap, AtNamesTheMissingKey) {
  TensorMap M({{"w", vec({1})}});
  std::string Msg = messageOf([&] { M.at("bias"); });
  EXPECT_NE(Msg.find("'bias'"), std::string::npos) << Msg;
}

TEST(SelectTensors, RootOfAFlatStateDict) {
  Object Root = Object::dict({{str("w"), Object::tensor(vec({1, 2}))},
                              {str("b"), Object::tensor(vec({3}))}});
  TensorMap M = selectTensors(Root);
  EXPECT_EQ(M.keys(), (std::vector<std::string>{"w", "b"}));
  // The tensors are shared, not copied.
  EXPECT_EQ(M.at("w").storage(), Root.find("w")->toTensor().storage());
}

TEST(SelectTensors, KeyPathPicksASubDictAndFlattensNestedDicts) {
  std::vector<std::string> Skipped;
  TensorMap M = selectTensors(checkpoint(), "model_state_dict", &Skipped);
  EXPECT_EQ(M.keys(),
            (std::vector<std::string>{"fc.weight", "fc.bias", "scale"}));
  EXPECT_TRUE(Skipped.empty());
}

TEST(SelectTensors, NestedPathWithIntegerKey) {
  TensorMap M = selectTensors(checkpoint(), "optimizer_state_dict/state/0");
  EXPECT_EQ(M.keys(), (std::vector<std::string>{"momentum_buffer"}));
  // Trailing and doubled slashes are tolerated.
  EXPECT_EQ(
      selectTensors(checkpoint(), "optimizer_state_dict//state/0/").size(), 1u);
}

TEST(SelectTensors, WholeTreeFlattensIntegerKeysAsDigitsAndSkipsLeaves) {
  std::vector<std::string> Skipped;
  TensorMap M = selectTensors(checkpoint(), "", &Skipped);
  EXPECT_EQ(M.keys(), (std::vector<std::string>{
                          "model_state_dict.fc.weight",
                          "model_state_dict.fc.bias", "model_state_dict.scale",
                          "optimizer_state_dict.state.0.momentum_buffer"}));
  EXPECT_EQ(Skipped,
            (std::vector<std::string>{"optimizer_state_dict.lr", "epoch"}));
}

TEST(SelectTensors, MissingComponentNamesItAndTheKeysPresent) {
  std::string Msg = messageOf(
      [] { selectTensors(checkpoint(), "model_state_dict/encoder"); });
  EXPECT_NE(Msg.find("'model_state_dict' has no key 'encoder'"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("'fc'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'scale'"), std::string::npos) << Msg;

  Msg = messageOf([] { selectTensors(checkpoint(), "model"); });
  EXPECT_NE(Msg.find("the root has no key 'model'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'model_state_dict' (dict)"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'epoch' (int)"), std::string::npos) << Msg;
}

TEST(SelectTensors, PathThroughANonDictIsAnError) {
  std::string Msg = messageOf([] { selectTensors(checkpoint(), "epoch/x"); });
  EXPECT_NE(Msg.find("'epoch' is an int"), std::string::npos) << Msg;
  Msg = messageOf([] { selectTensors(checkpoint(), "epoch"); });
  EXPECT_NE(Msg.find("not a dict"), std::string::npos) << Msg;
  Msg = messageOf([] { selectTensors(Object::tensor(vec({1}))); });
  EXPECT_NE(Msg.find("the root is a tensor"), std::string::npos) << Msg;
}

TEST(SelectTensors, FlatteningCollisionIsAnError) {
  Object Root = Object::dict(
      {{str("a.b"), Object::tensor(vec({1}))},
       {str("a"), Object::dict({{str("b"), Object::tensor(vec({2}))}})}});
  std::string Msg = messageOf([&] { selectTensors(Root); });
  EXPECT_NE(Msg.find("'a.b'"), std::string::npos) << Msg;
}

TEST(ToObject, IsADictOfTensorsInOrder) {
  TensorMap M({{"z", vec({1})}, {"a", vec({2, 3})}});
  Object O = toObject(M);
  ASSERT_TRUE(O.isDict());
  ASSERT_EQ(O.entries().size(), 2u);
  EXPECT_EQ(O.entries()[0].first.toStringRef(), "z");
  EXPECT_EQ(O.entries()[1].first.toStringRef(), "a");
  EXPECT_TRUE(O.entries()[1].second.toTensor().equals(vec({2, 3})));
  EXPECT_EQ(selectTensors(O).keys(), M.keys());
}

TEST(Formats, ExtensionDispatch) {
  EXPECT_EQ(formatForPath("a/b/model.pt"), Format::Pt);
  EXPECT_EQ(formatForPath("model.PTH"), Format::Pt);
  EXPECT_EQ(formatForPath("pytorch_model.bin"), Format::Pt);
  EXPECT_EQ(formatForPath("last.ckpt"), Format::Pt);
  EXPECT_EQ(formatForPath("m.safetensors"), Format::Safetensors);
  EXPECT_EQ(formatForPath("weights.npz"), Format::Npz);
  EXPECT_STREQ(formatName(Format::Safetensors), "safetensors");
  std::string Msg = messageOf([] { formatForPath("model.h5"); });
  EXPECT_NE(Msg.find("'model.h5'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'.h5'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find(".safetensors"), std::string::npos) << Msg;
  Msg = messageOf([] { formatForPath("dir.pt/model"); });
  EXPECT_NE(Msg.find("no extension"), std::string::npos) << Msg;
  Msg = messageOf([] { formatForPath(".npz"); });
  EXPECT_NE(Msg.find("no extension"), std::string::npos) << Msg;
}

TEST(Formats, FlatFilesReadAsADictAndRejectAKeyPath) {
  std::string P = ::testing::TempDir() + "nngraph-formats-test-" +
                  std::to_string(::getpid()) + ".safetensors";
  writeStateDict(P, TensorMap({{"w", vec({1, 2})}, {"b", vec({3})}}));
  Object O = readObject(P);
  ASSERT_TRUE(O.isDict());
  EXPECT_EQ(selectTensors(O).keys(), (std::vector<std::string>{"w", "b"}));
  std::string Msg = messageOf([&] { readStateDict(P, "model"); });
  EXPECT_NE(Msg.find("drop the key path"), std::string::npos) << Msg;
  std::remove(P.c_str());
}
