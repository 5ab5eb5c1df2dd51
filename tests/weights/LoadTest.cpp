//===- LoadTest.cpp - Weights into nn modules and graph initializers ------===//
//
// TensorMap <-> nn::StateDict without copies; loadWeights into a real
// nn::Sequential of nn::Linear (strict and not, with prefix stripping and
// renames, the module unchanged on error); saveWeights/loadWeights round
// trips through every format; a .pt checkpoint's sub-dict by key path;
// loadInitializers into an ir::Graph (strict, non-strict, mismatches
// listing both types, the graph unchanged on error).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <unistd.h>

using namespace nng;
using namespace nng::weights;
namespace fs = std::filesystem;

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

rt::Tensor filled(const Shape &S, float Start) {
  rt::Tensor T = rt::Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, Start + 0.5 * static_cast<double>(I));
  return T;
}

std::shared_ptr<nn::Sequential> mlp() {
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 2),
                                          std::make_shared<nn::Linear>(2, 1));
}

/// The weights of mlp() under Prefix, with recognisable values.
TensorMap mlpWeights(const std::string &Prefix = "") {
  return TensorMap({{Prefix + "0.weight", filled(Shape{2, 3}, 1)},
                    {Prefix + "0.bias", filled(Shape{2}, 10)},
                    {Prefix + "1.weight", filled(Shape{1, 2}, 20)},
                    {Prefix + "1.bias", filled(Shape{1}, 30)}});
}

void expectModuleHolds(nn::ModuleBase &M, const TensorMap &Expected) {
  nn::StateDict SD = M.state_dict();
  ASSERT_EQ(SD.size(), Expected.size());
  for (const auto &[K, T] : Expected)
    EXPECT_TRUE(SD.at(K).data().equals(T)) << K;
}

class LoadFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = fs::temp_directory_path() /
          ("nngraph-load-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(Dir);
    fs::create_directories(Dir);
  }
  void TearDown() override { fs::remove_all(Dir); }
  std::string path(const std::string &Name) { return (Dir / Name).string(); }
  fs::path Dir;
};

} // namespace

TEST(LoadConversions, StateDictAndTensorMapShareData) {
  TensorMap M = mlpWeights();
  nn::StateDict SD = toStateDict(M);
  EXPECT_EQ(SD.keys(), M.keys());
  EXPECT_EQ(SD.at("0.weight").data().storage(), M.at("0.weight").storage());
  TensorMap Back = fromStateDict(SD);
  EXPECT_EQ(Back.keys(), M.keys());
  EXPECT_EQ(Back.at("1.bias").storage(), M.at("1.bias").storage());
}

TEST(LoadModule, StrictLoadCopiesValues) {
  auto Net = mlp();
  LoadResult R = loadWeights(*Net, mlpWeights());
  EXPECT_TRUE(R.MissingKeys.empty());
  EXPECT_TRUE(R.UnexpectedKeys.empty());
  expectModuleHolds(*Net, mlpWeights());
}

TEST(LoadModule, StripsDataParallelPrefix) {
  auto Net = mlp();
  LoadOptions O;
  O.Remap.StripPrefix = "module.";
  LoadResult R = loadWeights(*Net, mlpWeights("module."), O);
  expectModuleHolds(*Net, mlpWeights());
  ASSERT_EQ(R.Remap.Steps.size(), 1u);
  EXPECT_EQ(R.Remap.Steps[0].Changed, 4u);
}

TEST(LoadModule, RenameRulesApply) {
  auto Net = mlp();
  LoadOptions O;
  O.Remap.Renames = {parseRenameRule("^layers\\.(\\d+)\\.=$1.")};
  TensorMap Src = remapKeys(mlpWeights(), RemapOptions{"", {}, "layers."});
  loadWeights(*Net, Src, O);
  expectModuleHolds(*Net, mlpWeights());
}

TEST(LoadModule, StrictMissingKeyFailsAndChangesNothing) {
  auto Net = mlp();
  nn::StateDict Before = Net->state_dict();
  std::vector<rt::Tensor> Copies;
  for (const auto &[K, T] : Before)
    Copies.push_back(T.data().clone());
  TensorMap W = mlpWeights();
  W.erase("1.bias");
  std::string Msg = messageOf([&] { loadWeights(*Net, W); });
  EXPECT_NE(Msg.find("1.bias"), std::string::npos) << Msg;
  size_t I = 0;
  for (const auto &[K, T] : Net->state_dict())
    EXPECT_TRUE(T.data().equals(Copies[I++])) << K << " changed";
}

TEST(LoadModule, NonStrictReportsMissingAndUnexpected) {
  auto Net = mlp();
  TensorMap W = mlpWeights();
  W.erase("1.bias");
  W.insert("extra.weight", filled(Shape{1}, 0));
  LoadOptions O;
  O.Strict = false;
  LoadResult R = loadWeights(*Net, W, O);
  EXPECT_EQ(R.MissingKeys, (Keys{"1.bias"}));
  EXPECT_EQ(R.UnexpectedKeys, (Keys{"extra.weight"}));
  EXPECT_TRUE(Net->state_dict().at("0.weight").data().equals(W.at("0.weight")));
}

TEST(LoadModule, ShapeMismatchIsAnErrorEvenNonStrict) {
  auto Net = mlp();
  TensorMap W = mlpWeights();
  W.insert("0.weight", filled(Shape{3, 2}, 0));
  LoadOptions O;
  O.Strict = false;
  std::string Msg = messageOf([&] { loadWeights(*Net, W, O); });
  EXPECT_NE(Msg.find("0.weight"), std::string::npos) << Msg;
}

TEST_F(LoadFileTest, SaveAndLoadEveryFormat) {
  for (const char *Ext : {".safetensors", ".npz", ".pt"}) {
    SCOPED_TRACE(Ext);
    auto Src = mlp();
    loadWeights(*Src, mlpWeights());
    std::string P = path(std::string("w") + Ext);
    saveWeights(*Src, P);
    auto Dst = mlp();
    LoadResult R = loadWeights(*Dst, P);
    EXPECT_TRUE(R.MissingKeys.empty());
    expectModuleHolds(*Dst, mlpWeights());
    EXPECT_EQ(readStateDict(P).keys(), mlpWeights().keys());
  }
}

TEST_F(LoadFileTest, KeyPathPicksTheModelOfACheckpoint) {
  std::string P = path("ckpt.pt");
  writePt(P, Object::dict({{Object::string("model_state_dict"),
                            toObject(mlpWeights("module."))},
                           {Object::string("epoch"), Object::integer(3)}}));
  auto Net = mlp();
  LoadOptions O;
  O.KeyPath = "model_state_dict";
  O.Remap.StripPrefix = "module.";
  loadWeights(*Net, P, O);
  expectModuleHolds(*Net, mlpWeights());

  O.KeyPath = "model";
  std::string Msg = messageOf([&] { loadWeights(*Net, P, O); });
  EXPECT_NE(Msg.find("'model_state_dict'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("ckpt.pt"), std::string::npos) << Msg;
}

TEST_F(LoadFileTest, NonTensorEntriesAreSkippedAndReported) {
  std::string P = path("with_epoch.pt");
  Object Root = toObject(mlpWeights());
  Root.entries().emplace_back(Object::string("epoch"), Object::integer(3));
  writePt(P, Root);
  auto Net = mlp();
  LoadResult R = loadWeights(*Net, P);
  EXPECT_EQ(R.Skipped, (Keys{"epoch"}));
  expectModuleHolds(*Net, mlpWeights());
}

TEST_F(LoadFileTest, BadExtensionIsRejectedBeforeWriting) {
  auto Net = mlp();
  std::string Msg = messageOf([&] { saveWeights(*Net, path("w.h5")); });
  EXPECT_NE(Msg.find("'.h5'"), std::string::npos) << Msg;
  EXPECT_FALSE(fs::exists(path("w.h5")));
}

namespace {

std::unique_ptr<ir::Graph> graphWithInits() {
  auto G = std::make_unique<ir::Graph>();
  G->addInitializer("fc.weight", rt::Tensor::empty(Shape{2, 3}, DType::F32));
  G->addInitializer("fc.bias", rt::Tensor::empty(Shape{2}, DType::F32));
  return G;
}

} // namespace

TEST(LoadGraph, StrictInstallsEveryInitializer) {
  auto G = graphWithInits();
  TensorMap W({{"fc.weight", filled(Shape{2, 3}, 1)},
               {"fc.bias", filled(Shape{2}, 5)}});
  LoadResult R = loadInitializers(*G, W);
  EXPECT_TRUE(R.MissingKeys.empty());
  EXPECT_TRUE(G->initializers()[0]->data().equals(W.at("fc.weight")));
  EXPECT_TRUE(G->initializers()[1]->data().equals(W.at("fc.bias")));
}

TEST(LoadGraph, MismatchesListEveryKeyWithBothTypesAndChangeNothing) {
  auto G = graphWithInits();
  TensorMap W({{"fc.weight", filled(Shape{3, 2}, 1)},
               {"fc.bias", rt::Tensor::empty(Shape{2}, DType::F64)}});
  std::string Msg = messageOf([&] { loadInitializers(*G, W, false); });
  EXPECT_NE(Msg.find("'fc.weight': the file has f32[3,2], the graph expects "
                     "f32[2,3]"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("'fc.bias'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("f64[2]"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("unchanged"), std::string::npos) << Msg;
  EXPECT_EQ(G->initializers()[0]->data().getFlat(0), 0.0);
}

TEST(LoadGraph, StrictMissingAndUnexpectedAreErrors) {
  auto G = graphWithInits();
  TensorMap W({{"fc.weight", filled(Shape{2, 3}, 1)},
               {"head.bias", filled(Shape{2}, 5)}});
  std::string Msg = messageOf([&] { loadInitializers(*G, W); });
  EXPECT_NE(Msg.find("'fc.bias': missing"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("'head.bias': not an initializer"), std::string::npos)
      << Msg;
  EXPECT_EQ(G->initializers()[0]->data().getFlat(0), 0.0);
}

TEST(LoadGraph, NonStrictReturnsMissingAndUnexpected) {
  auto G = graphWithInits();
  TensorMap W({{"fc.weight", filled(Shape{2, 3}, 1)},
               {"head.bias", filled(Shape{2}, 5)}});
  LoadResult R = loadInitializers(*G, W, false);
  EXPECT_EQ(R.MissingKeys, (Keys{"fc.bias"}));
  EXPECT_EQ(R.UnexpectedKeys, (Keys{"head.bias"}));
  EXPECT_TRUE(G->initializers()[0]->data().equals(W.at("fc.weight")));
}
