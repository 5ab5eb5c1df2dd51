//===- ZooTorchTest.cpp - The zoo against torchvision ----------------------===//
//
// For every zoo model, both directions of the state-dict round trip with
// Debian's torch 1.13 / torchvision 0.14 (random weights, no download):
//  - torchvision -> C++ (LoadsTorchvisionStateDict): zoo_reference.py
//    builds the model (seed 0, random BatchNorm/LayerNorm parameters,
//    BatchNorm statistics measured on random images), saves its state_dict
//    with torch.save and its eval output for a fixed input (batch 2; 64x64
//    images for the CNNs). C++ builds the zoo model, checks the state_dict
//    keys (order included), shapes, dtypes and print(model) against the
//    script's manifest (no weight reader involved), reads the .pt file with
//    weights::readStateDict, loads it with strict=true, runs forward in
//    eval mode and matches PyTorch's output (atol 1e-4, rtol 1e-5).
//  - C++ -> torchvision (WritesStateDictTorchLoads): C++ writes its freshly
//    initialized model's state dict to a .pt file (weights::saveWeights);
//    the script loads it with torch.load(weights_only=True), checks keys,
//    order, dtypes and values, loads it into the torchvision model with
//    strict=True and matches C++'s eval output (atol 1e-4, rtol 1e-5).
// SKIPPED when no Python imports torch and torchvision.
//
//===----------------------------------------------------------------------===//

#include "ZooReference.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/StateDict.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/runtime/DType.h"

// 1 once the .pt reader and writer (frontend/lib/weights) are built; the
// .pt tests SKIP with the reason otherwise.
#ifndef NNG_ZOO_HAVE_PT
#define NNG_ZOO_HAVE_PT 1
#endif
#if NNG_ZOO_HAVE_PT
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

using namespace nng;
using namespace nng::test;

namespace {

/// |C++ - torch| <= Atol + Rtol * |torch| per element. The small Rtol
/// covers float32 rounding in the deepest model: for resnet50, torch's own
/// float32 output differs from its float64 one by ~1.3e-4 (|y| <= ~3).
constexpr double Atol = 1e-4;
constexpr double Rtol = 1e-5;

/// The same input shapes the script uses.
std::vector<int64_t> inputShape(const std::string &Name) {
  if (Name == "mlp")
    return {2, 784};
  if (Name == "transformer_encoder")
    return {2, 16, 256};
  return {2, 3, 64, 64};
}

Tensor runEval(nn::ModuleBase &M, const Tensor &X) {
  NoGradGuard NoGrad;
  M.eval();
  return M(X);
}

/// Removes its folder at the end of the test unless the test failed.
struct ScopedDir {
  std::string Path;
  explicit ScopedDir(std::string P) : Path(std::move(P)) {}
  ~ScopedDir() {
    std::error_code EC;
    if (!::testing::Test::HasFailure())
      std::filesystem::remove_all(Path, EC);
  }
};

class ZooTorch : public ::testing::TestWithParam<std::string> {};

/// Exports Name with the script into a fresh folder (removed afterwards).
#define NNG_EXPORT(Name, Dir, E)                                               \
  ScopedDir Dir(zooTempDir(Name));                                             \
  NNG_RUN_ZOO_SCRIPT({"export", Dir.Path, Name});                              \
  ZooExport E = readZooExport(Dir.Path, Name)

std::vector<std::string> keysOf(const ZooExport &E) {
  std::vector<std::string> Keys;
  for (const ZooExport::Meta &T : E.State)
    Keys.push_back(T.Key);
  return Keys;
}

/// Loads SD with strict=true, runs eval and compares with torchvision.
void loadAndCompare(const std::string &Name, nn::ModuleBase &M,
                    const nn::StateDict &SD, const ZooExport &E) {
  nn::LoadStateDictResult R = M.load_state_dict(SD, /*Strict=*/true);
  EXPECT_TRUE(R.missing_keys.empty());
  EXPECT_TRUE(R.unexpected_keys.empty());
  Tensor Y = runEval(M, E.Input);
  ASSERT_EQ(Y.shape(), E.Output.shape());
  double Err = maxAbsDiff(Y, E.Output);
  EXPECT_LE(closeness(Y, E.Output, Atol, Rtol), 1.0)
      << Name << ": eval output differs from torchvision's by up to " << Err
      << " (atol " << Atol << ", rtol " << Rtol << ")";
  std::cout << "[ INFO     ] " << Name << ": max |C++ - torch| = " << Err
            << "\n";
}

/// torchvision -> C++: keys in order, shapes, dtypes and printing against
/// the manifest (no weight reader involved), then torch.save's .pt file ->
/// readStateDict -> strict load -> the same eval output.
TEST_P(ZooTorch, LoadsTorchvisionStateDict) {
  const std::string Name = GetParam();
  NNG_EXPORT(Name, Dir, E);
  nn::ModulePtr M = zoo::create(Name);
  {
    nn::StateDict Mine = M->state_dict();
    ASSERT_EQ(Mine.keys(), keysOf(E));
    for (const ZooExport::Meta &T : E.State) {
      EXPECT_EQ(Mine.at(T.Key).shape().dims(), T.Shape) << T.Key;
      EXPECT_EQ(std::string(dtypeName(Mine.at(T.Key).dtype())), T.DType)
          << T.Key;
    }
    EXPECT_EQ(M->to_string(), E.Repr);
  }
#if !NNG_ZOO_HAVE_PT
  GTEST_SKIP() << "SKIPPED: keys, shapes, dtypes and printing match; the .pt "
                  "reader (nng::weights::readStateDict, frontend/lib/weights/"
                  "formats/Pt.cpp) is not in this build";
#else
  std::string Pt = (std::filesystem::path(E.Dir) / "state.pt").string();
  nn::StateDict SD = weights::toStateDict(weights::readStateDict(Pt));
  ASSERT_EQ(SD.keys(), keysOf(E)) << "keys read from " << Pt;
  // The one-call path docs/zoo.md shows (strict by default), then every
  // tensor of the module must equal the file's.
  weights::LoadResult R = weights::loadWeights(*M, Pt);
  EXPECT_TRUE(R.MissingKeys.empty());
  EXPECT_TRUE(R.UnexpectedKeys.empty());
  for (const auto &[K, T] : M->state_dict())
    EXPECT_EQ(maxAbsDiff(T, SD.at(K)), 0.0) << K;
  // And nn::Module::load_state_dict(strict=true) on the same tensors.
  loadAndCompare(Name, *M, SD, E);
#endif
}

TEST_P(ZooTorch, WritesStateDictTorchLoads) {
#if !NNG_ZOO_HAVE_PT
  GTEST_SKIP() << "SKIPPED: the .pt writer (nng::weights::writeStateDict, "
                  "frontend/lib/weights/formats/Pt.cpp) is not built yet";
#else
  const std::string Name = GetParam();
  ScopedDir Dir(zooTempDir(Name));
  manual_seed(7);
  nn::ModulePtr M = zoo::create(Name);
  Tensor X = randn(inputShape(Name));
  Tensor Y = runEval(*M, X);
  writeCppManifest(Dir.Path, Name, *M, X, Y);
  weights::saveWeights(
      *M, (std::filesystem::path(Dir.Path) / Name / "cpp.pt").string());
  NNG_RUN_ZOO_SCRIPT({"check", Dir.Path, Name});
#endif
}

INSTANTIATE_TEST_SUITE_P(Models, ZooTorch,
                         ::testing::Values("resnet18", "resnet34", "resnet50",
                                           "mobilenet_v2", "vgg11_bn", "mlp",
                                           "transformer_encoder"),
                         [](const auto &Info) { return Info.param; });

} // namespace
