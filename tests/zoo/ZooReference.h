//===- ZooReference.h - PyTorch references for the zoo tests -----*- C++ -*-===//
//
// The C++ half of tests/zoo/scripts/zoo_reference.py: runs the script
// (export: torchvision builds a model, saves its state_dict as .pt, its
// keys, dtypes and shapes, the input and the output; check: torch.load(weights_only=
// True) of a .pt file C++ wrote), and reads and writes the raw tensor files
// and JSON manifests it exchanges with C++. Python is $NNGRAPH_PYTHON, else
// /usr/bin/python3, else python3 (as tests/nn/TorchOracle.cpp); a Python
// that cannot import torch and torchvision makes the tests SKIP.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Module.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace nng::test {

/// What export wrote for one model.
struct ZooExport {
  std::string Dir;
  /// One state_dict entry as torchvision reports it.
  struct Meta {
    std::string Key;
    /// nngraph's dtype name ("f32", "i64").
    std::string DType;
    std::vector<int64_t> Shape;
  };
  /// torchvision's state_dict entries, in order.
  std::vector<Meta> State;
  std::string Repr;
  Tensor Input, Output;
};

/// A fresh, empty folder for this test (under the gtest temp dir).
std::string zooTempDir(const std::string &Tag);

/// Runs zoo_reference.py Args... . Returns "" on exit status 0; "SKIP: why"
/// when no Python imports torch; else "FAIL: output".
std::string runZooScript(const std::vector<std::string> &Args);

/// Runs tests/zoo/scripts/Script Args... as runZooScript does; Needs names
/// what the SKIP reason says is missing ("torch").
std::string runTorchScript(const std::string &Script,
                           const std::vector<std::string> &Args,
                           const std::string &Needs);

/// Writes T as the raw file Dir/File; returns its manifest entry ({"file",
/// "dtype", "shape"}).
nlohmann::json writeRaw(const std::filesystem::path &Dir,
                        const std::string &File, const Tensor &T);
/// Reads the raw tensor a manifest entry of Dir names.
Tensor readRaw(const std::filesystem::path &Dir, const nlohmann::json &Ref);

/// Reads Dir/Name/manifest.json and the input and output tensors.
ZooExport readZooExport(const std::string &Dir, const std::string &Name);

/// Writes M's state dict as raw files plus Dir/Name/cpp.json (keys, dtypes,
/// shapes), with Input and Output, for the script's check command.
void writeCppManifest(const std::string &Dir, const std::string &Name,
                      const nn::ModuleBase &M, const Tensor &Input,
                      const Tensor &Output);

/// The largest |a - b| (infinity when the shapes differ).
double maxAbsDiff(const Tensor &A, const Tensor &B);

/// The largest |got - want| / (Atol + Rtol * |want|) over the elements
/// (torch.allclose holds when it is <= 1; infinity when the shapes differ).
double closeness(const Tensor &Got, const Tensor &Want, double Atol,
                 double Rtol);

} // namespace nng::test

/// Runs the script; SKIPs on "SKIP:", fails the test on "FAIL:".
#define NNG_RUN_ZOO_SCRIPT(...)                                                \
  do {                                                                         \
    std::string R_ = ::nng::test::runZooScript(__VA_ARGS__);                   \
    if (R_.rfind("SKIP:", 0) == 0)                                             \
      GTEST_SKIP() << "SKIPPED: " << R_.substr(6);                             \
    ASSERT_TRUE(R_.empty()) << R_;                                             \
  } while (0)
