//===- ZooReference.cpp - PyTorch references for the zoo tests -------------===//
//
// Running zoo_reference.py (or another script of tests/zoo/scripts) with
// the first Python that imports torch, and the raw tensor files and JSON
// manifests it exchanges with the tests.
//
//===----------------------------------------------------------------------===//

#include "ZooReference.h"

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Error.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nng::test {

json writeRaw(const fs::path &Dir, const std::string &File, const Tensor &T) {
  rt::Tensor C = T.data().contiguous();
  std::ofstream OS(Dir / File, std::ios::binary);
  OS.write(static_cast<const char *>(C.rawData()),
           static_cast<std::streamsize>(C.nbytes()));
  NNG_CHECK(OS.good(), "zoo test: cannot write ", (Dir / File).string());
  return {{"file", File},
          {"dtype", std::string(dtypeName(C.dtype()))},
          {"shape", C.shape().dims()}};
}

Tensor readRaw(const fs::path &Dir, const json &Ref) {
  std::string Name = Ref.at("dtype").get<std::string>();
  std::optional<DType> T = parseDType(Name);
  NNG_CHECK(T.has_value(), "zoo test: unknown dtype '", Name, "'");
  rt::Tensor R = rt::Tensor::empty(
      Shape(Ref.at("shape").get<std::vector<int64_t>>()), *T);
  std::string File = Ref.at("file").get<std::string>();
  std::ifstream IS(Dir / File, std::ios::binary);
  IS.read(static_cast<char *>(R.rawData()),
          static_cast<std::streamsize>(R.nbytes()));
  NNG_CHECK(IS.good() || R.nbytes() == 0, "zoo test: cannot read ",
            (Dir / File).string());
  return Tensor(R);
}

std::string zooTempDir(const std::string &Tag) {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Name = Info ? std::string(Info->test_suite_name()) + "-" +
                                Info->name()
                          : Tag;
  std::replace(Name.begin(), Name.end(), '/', '_');
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-zoo-" + Name + "-" + std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P.string();
}

std::string runZooScript(const std::vector<std::string> &Args) {
  return runTorchScript("zoo_reference.py", Args, "torch and torchvision");
}

std::string runTorchScript(const std::string &Script,
                           const std::vector<std::string> &Args,
                           const std::string &Needs) {
  const std::vector<std::string> Pythons = pythonCandidates();
  std::string Reasons;
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Reasons += Py + " does not exist; ";
      continue;
    }
    // OpenBLAS 0.3.21 does not recognise this CPU (DESIGN.md).
    std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 " +
                      shellQuote(Py) + " " +
                      shellQuote(NNGRAPH_SOURCE_DIR "/tests/zoo/scripts/" +
                                 Script);
    for (const std::string &A : Args)
      Cmd += " " + shellQuote(A);
    std::string Out;
    int Status = runCommand(Cmd, Out);
    if (Status == 0)
      return "";
    if (Status == 127 && Out.find(Script) == std::string::npos) {
      Reasons += Py + ": command not found; ";
      continue;
    }
    if (Status != OracleSkipStatus)
      return "FAIL: " + Script + " " + Args.front() + " failed (exit " +
             std::to_string(Status) + ") with " + Py + ":\n" + Out;
    while (!Out.empty() && Out.back() == '\n')
      Out.pop_back();
    Reasons += Out + "; ";
  }
  return "SKIP: no Python with " + Needs + ": " + Reasons;
}

ZooExport readZooExport(const std::string &Dir, const std::string &Name) {
  fs::path Folder = fs::path(Dir) / Name;
  std::ifstream IS(Folder / "manifest.json");
  NNG_CHECK(IS.good(), "zoo test: no manifest in ", Folder.string());
  json J = json::parse(IS);
  ZooExport E;
  E.Dir = Folder.string();
  for (const json &Ref : J.at("state"))
    E.State.push_back({Ref.at("key").get<std::string>(),
                       Ref.at("dtype").get<std::string>(),
                       Ref.at("shape").get<std::vector<int64_t>>()});
  E.Repr = J.at("repr").get<std::string>();
  E.Input = readRaw(Folder, J.at("input"));
  E.Output = readRaw(Folder, J.at("output"));
  return E;
}

void writeCppManifest(const std::string &Dir, const std::string &Name,
                      const nn::ModuleBase &M, const Tensor &Input,
                      const Tensor &Output) {
  fs::path Folder = fs::path(Dir) / Name;
  fs::create_directories(Folder);
  json State = json::array();
  int I = 0;
  for (const auto &[Key, T] : M.state_dict()) {
    json Ref = writeRaw(Folder, "c" + std::to_string(I++) + ".bin", T);
    Ref["key"] = Key;
    State.push_back(Ref);
  }
  json J = {{"state", State},
            {"input", writeRaw(Folder, "cpp_input.bin", Input)},
            {"output", writeRaw(Folder, "cpp_output.bin", Output)}};
  std::ofstream OS(Folder / "cpp.json");
  OS << J.dump();
  NNG_CHECK(OS.good(), "zoo test: cannot write ", (Folder / "cpp.json").string());
}

double maxAbsDiff(const Tensor &A, const Tensor &B) {
  if (A.shape() != B.shape())
    return std::numeric_limits<double>::infinity();
  std::vector<double> VA = A.data().toDoubleVector();
  std::vector<double> VB = B.data().toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < VA.size(); ++I) {
    double D = std::fabs(VA[I] - VB[I]);
    if (!(D <= M)) // NaN propagates as infinity
      M = std::isnan(D) ? std::numeric_limits<double>::infinity() : D;
  }
  return M;
}

double closeness(const Tensor &Got, const Tensor &Want, double Atol,
                 double Rtol) {
  if (Got.shape() != Want.shape())
    return std::numeric_limits<double>::infinity();
  std::vector<double> G = Got.data().toDoubleVector();
  std::vector<double> W = Want.data().toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < G.size(); ++I) {
    double R = std::fabs(G[I] - W[I]) / (Atol + Rtol * std::fabs(W[I]));
    if (!(R <= M))
      M = std::isnan(R) ? std::numeric_limits<double>::infinity() : R;
  }
  return M;
}

} // namespace nng::test
