//===- OrtTestUtils.cpp - ONNX Runtime and PyTorch checks of exports -----===//
//
// The C++ side of OrtTestUtils.h: tensor folders (tensors.json + raw files),
// running tests/ort/run_onnx.mjs with node and tests/fx/scripts/
// torch_check.py with the first Python that imports torch ($NNGRAPH_PYTHON,
// else /usr/bin/python3, else python3), both of which exit with status 77
// and a "SKIP: reason" line when their runtime is missing.
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"

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
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nng::test {

namespace {

std::string trimmed(std::string S) {
  while (!S.empty() && (S.back() == '\n' || S.back() == ' '))
    S.pop_back();
  return S;
}

/// The "SKIP: ..." line of a script's output (or all of it).
std::string skipLine(const std::string &Out) {
  size_t At = Out.find("SKIP: ");
  if (At == std::string::npos)
    return trimmed(Out);
  size_t End = Out.find('\n', At);
  return Out.substr(At + 6, End == std::string::npos ? End : End - At - 6);
}

std::vector<NamedTensor> unnamed(const std::vector<rt::Tensor> &Ts) {
  std::vector<NamedTensor> Out;
  for (size_t I = 0; I < Ts.size(); ++I)
    Out.push_back({"input" + std::to_string(I), Ts[I]});
  return Out;
}

/// Runs a torch_check.py command line (after the script path) with each
/// candidate Python until one can import torch. Returns the skip reasons
/// when none can; throws when the script fails otherwise.
std::string runTorchScript(const std::string &Args, std::string &Output) {
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
                      shellQuote(NNGRAPH_SOURCE_DIR
                            "/tests/fx/scripts/torch_check.py") +
                      " " + Args;
    Output.clear();
    int Status = runCommand(Cmd, Output);
    if (Status == 0)
      return "";
    if (Status == 127 && Output.find("torch_check") == std::string::npos) {
      Reasons += Py + ": command not found; ";
      continue;
    }
    if (Status != OracleSkipStatus)
      fail(ErrorKind::Internal, "torch_check.py failed (exit status ", Status,
           ") with ", Py, ":\n", Output);
    Reasons += Py + ": " + skipLine(Output) + "; ";
  }
  return "no Python with torch and torchvision (install python3-torch "
         "python3-torchvision: scripts/setup.sh --tests, or set "
         "NNGRAPH_PYTHON): " +
         Reasons;
}

} // namespace

void writeTensorDir(const std::string &Dir, const std::vector<NamedTensor> &Ts) {
  fs::create_directories(Dir);
  json List = json::array();
  for (size_t I = 0; I < Ts.size(); ++I) {
    NNG_CHECK(Ts[I].T.defined(), "writeTensorDir: tensor '", Ts[I].Name,
              "' is undefined");
    rt::Tensor C = Ts[I].T.contiguous();
    std::string File = std::to_string(I) + ".bin";
    std::ofstream OS(fs::path(Dir) / File, std::ios::binary | std::ios::trunc);
    OS.write(static_cast<const char *>(C.rawData()),
             static_cast<std::streamsize>(C.nbytes()));
    if (!OS)
      fail(ErrorKind::IO, "cannot write ", (fs::path(Dir) / File).string());
    List.push_back({{"name", Ts[I].Name},
                    {"dtype", std::string(dtypeName(C.dtype()))},
                    {"shape", C.shape().dims()},
                    {"file", File}});
  }
  std::ofstream OS(fs::path(Dir) / "tensors.json", std::ios::trunc);
  OS << json{{"tensors", List}}.dump(1);
  if (!OS)
    fail(ErrorKind::IO, "cannot write ", Dir, "/tensors.json");
}

std::vector<NamedTensor> readTensorDir(const std::string &Dir) {
  fs::path Manifest = fs::path(Dir) / "tensors.json";
  std::ifstream IS(Manifest);
  if (!IS)
    fail(ErrorKind::IO, "cannot read ", Manifest.string());
  json J;
  try {
    IS >> J;
  } catch (const std::exception &E) {
    fail(ErrorKind::Parse, Manifest.string(), ": ", E.what());
  }
  std::vector<NamedTensor> Out;
  for (const json &E : J.at("tensors")) {
    std::string DT = E.at("dtype").get<std::string>();
    std::optional<DType> T = parseDType(DT);
    if (!T)
      fail(ErrorKind::Parse, Manifest.string(), ": unknown dtype '", DT, "'");
    Shape S(E.at("shape").get<std::vector<int64_t>>());
    rt::Tensor X = rt::Tensor::empty(S, *T);
    fs::path File = fs::path(Dir) / E.at("file").get<std::string>();
    std::ifstream In(File, std::ios::binary);
    In.read(static_cast<char *>(X.rawData()),
            static_cast<std::streamsize>(X.nbytes()));
    if (!In || static_cast<size_t>(In.gcount()) != X.nbytes())
      fail(ErrorKind::IO, File.string(), ": expected ", X.nbytes(),
           " bytes for ", DT, S.toString());
    Out.push_back({E.at("name").get<std::string>(), std::move(X)});
  }
  return Out;
}

ExternalRun runOrt(const std::string &ModelPath,
                   const std::vector<rt::Tensor> &Inputs, int Threads) {
  ExternalRun R;
  std::string Node = "node";
  if (const char *N = std::getenv("NNGRAPH_NODE"); N && *N)
    Node = N;
  std::string Probe;
  if (runCommand(shellQuote(Node) + " --version", Probe) != 0) {
    R.SkipReason = "node (Node.js) not found as '" + Node +
                   "' (install nodejs and npm, then run scripts/setup.sh "
                   "--tests, or set NNGRAPH_NODE)";
    return R;
  }
  fs::path Dir = freshTestDir("ort");
  writeTensorDir((Dir / "in").string(), unnamed(Inputs));
  std::string Cmd = shellQuote(Node) + " " +
                    shellQuote(NNGRAPH_SOURCE_DIR "/tests/ort/run_onnx.mjs") + " " +
                    shellQuote(ModelPath) + " " + shellQuote((Dir / "in").string()) +
                    " " + shellQuote((Dir / "out").string()) + " --threads " +
                    std::to_string(Threads);
  std::string Out;
  int Status = runCommand(Cmd, Out);
  if (Status == OracleSkipStatus) {
    R.SkipReason = skipLine(Out);
    return R;
  }
  if (Status != 0)
    fail(ErrorKind::Internal, "ONNX Runtime could not run ", ModelPath,
         " (run_onnx.mjs exit status ", Status, "):\n", Out);
  R.Outputs = readTensorDir((Dir / "out").string());
  std::ifstream IS(Dir / "out" / "tensors.json");
  json J;
  IS >> J;
  R.Version = "onnxruntime-node " + J.value("ort_version", std::string("?"));
  return R;
}

ExternalRun runTorchCheck(const std::string &Arch,
                          const std::string &WeightsPath,
                          const std::vector<rt::Tensor> &Inputs) {
  ExternalRun R;
  fs::path Dir = freshTestDir("torch-" + Arch);
  writeTensorDir((Dir / "in").string(), unnamed(Inputs));
  std::string Out;
  R.SkipReason = runTorchScript(
      "run --arch " + shellQuote(Arch) + " --weights " + shellQuote(WeightsPath) +
          " --inputs " + shellQuote((Dir / "in").string()) + " --out " +
          shellQuote((Dir / "out").string()),
      Out);
  if (R.skipped())
    return R;
  R.Outputs = readTensorDir((Dir / "out").string());
  std::ifstream IS(Dir / "out" / "tensors.json");
  json J;
  IS >> J;
  R.Version = "torch " + J.value("torch_version", std::string("?"));
  return R;
}

std::string makeTorchReference(const std::string &Arch,
                               const std::string &WeightsDir,
                               const std::string &OnnxPath,
                               const std::string &ExtraArgs) {
  std::string Args = "make --arch " + shellQuote(Arch) + " --weights-out " +
                     shellQuote(WeightsDir);
  if (!OnnxPath.empty())
    Args += " --onnx-out " + shellQuote(OnnxPath);
  if (!ExtraArgs.empty())
    Args += " " + ExtraArgs;
  std::string Out;
  return runTorchScript(Args, Out);
}

std::string makeTorchQdqExport(const std::string &OnnxPath,
                               const std::string &OutDir) {
  std::string Out;
  return runTorchScript("qdq --onnx-out " + shellQuote(OnnxPath) + " --out " +
                            shellQuote(OutDir),
                        Out);
}

std::string freshTestDir(const std::string &Tag) {
  static int Counter = 0;
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Name = Info ? std::string(Info->test_suite_name()) + "-" +
                                Info->name()
                          : std::string("x");
  std::replace(Name.begin(), Name.end(), '/', '_');
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-ort-" + Name + "-" + Tag + "-" +
                std::to_string(::getpid()) + "-" + std::to_string(++Counter));
  fs::remove_all(P);
  fs::create_directories(P);
  return P.string();
}

std::string compareTensors(const rt::Tensor &A, const rt::Tensor &B,
                           double Atol, double Rtol) {
  if (A.shape() != B.shape())
    return "shapes differ: " + A.shape().toString() + " vs " +
           B.shape().toString();
  std::vector<double> X = A.toDoubleVector(), Y = B.toDoubleVector();
  double Worst = 0;
  size_t At = 0, Bad = 0;
  for (size_t I = 0; I < X.size(); ++I) {
    double D = std::abs(X[I] - Y[I]);
    bool Ok = D <= Atol + Rtol * std::abs(Y[I]) || (std::isnan(X[I]) &&
                                                    std::isnan(Y[I]));
    if (!Ok) {
      ++Bad;
      if (D > Worst || std::isnan(D)) {
        Worst = D;
        At = I;
      }
    }
  }
  if (!Bad)
    return "";
  std::ostringstream OS;
  OS << Bad << " of " << X.size() << " elements differ; worst at flat index "
     << At << ": " << X[At] << " vs " << Y[At] << " (|diff| " << Worst
     << ", atol " << Atol << ", rtol " << Rtol << ")";
  return OS.str();
}

double maxAbsDiff(const rt::Tensor &A, const rt::Tensor &B) {
  if (A.shape() != B.shape())
    return std::nan("");
  std::vector<double> X = A.toDoubleVector(), Y = B.toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < X.size(); ++I)
    M = std::max(M, std::abs(X[I] - Y[I]));
  return M;
}

rt::Tensor seededTensor(const Shape &S, uint32_t Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  rt::Tensor T = rt::Tensor::empty(S, DType::F32);
  float *P = T.data<float>();
  for (int64_t I = 0; I < T.numel(); ++I)
    P[I] = U(Gen);
  return T;
}

} // namespace nng::test
