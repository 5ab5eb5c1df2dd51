//===- ModuleTestUtils.h - Small modules and a PyTorch runner ------------===//
//
// Helpers shared by the nn::Module and container tests: tiny modules built
// only from register_parameter and tensor ops (so the tests do not depend on
// the layer library), and runTorch(), which runs a Python script with the
// first interpreter that can import torch ($NNGRAPH_PYTHON, else Debian's
// /usr/bin/python3, else python3) and returns its stdout, or nullopt with
// the reason when no interpreter has torch (the test then SKIPs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Subprocess.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nng::nn::testing {

/// y = x W^T + b, with PyTorch Linear's parameter names and a
/// deterministic initialisation (W[i][j] = 0.1 * (i + 1) - 0.05 * j).
struct Lin : Module<Lin> {
  int64_t In, Out;
  Tensor weight, bias;
  Lin(int64_t In, int64_t Out, bool Bias = true) : In(In), Out(Out) {
    std::vector<double> W;
    for (int64_t I = 0; I < Out; ++I)
      for (int64_t J = 0; J < In; ++J)
        W.push_back(0.1 * static_cast<double>(I + 1) -
                    0.05 * static_cast<double>(J));
    weight =
        register_parameter("weight", tensor(W, std::vector<int64_t>{Out, In}));
    std::vector<double> B;
    for (int64_t I = 0; I < Out; ++I)
      B.push_back(0.01 * static_cast<double>(I));
    bias = register_parameter(
        "bias", Bias ? tensor(B, std::vector<int64_t>{Out}) : Tensor());
  }
  Tensor forward(const Tensor &X) {
    Tensor Y = matmul(X, weight.t());
    return bias.defined() ? Y + bias : Y;
  }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(In) +
           ", out_features=" + std::to_string(Out) +
           ", bias=" + (bias.defined() ? "True" : "False");
  }
};

/// relu, with no state.
struct Act : Module<Act> {
  Tensor forward(const Tensor &X) { return X.relu(); }
};

/// A normalisation-like module with buffers: running_mean (persistent),
/// num_batches_tracked (i64, persistent) and scratch (non-persistent).
struct Norm : Module<Norm> {
  Tensor weight, running_mean, num_batches_tracked, scratch;
  explicit Norm(int64_t N) {
    weight = register_parameter("weight", ones({N}));
    running_mean = register_buffer("running_mean", zeros({N}));
    num_batches_tracked =
        register_buffer("num_batches_tracked", zeros({}, DType::I64));
    scratch = register_buffer("scratch", zeros({N}), false);
  }
  Tensor forward(const Tensor &X) { return X * weight; }
};

/// Runs Script with a Python that has torch; nullopt (with Why) when none.
/// A script failure other than a missing torch is returned as
/// "SCRIPT-FAILED\n" + output so the test fails visibly.
inline std::optional<std::string> runTorch(const std::string &Script,
                                           std::string &Why) {
  namespace fs = std::filesystem;
  const std::vector<std::string> Pythons = nng::test::pythonCandidates();
  fs::path Dir =
      fs::temp_directory_path() / ("nng-nn-test-" + std::to_string(::getpid()));
  fs::create_directories(Dir);
  fs::path File = Dir / "script.py";
  {
    std::ofstream OS(File);
    OS << "import sys\ntry:\n    import torch\n    import torch.nn as nn\n"
          "except Exception as e:\n    print('no torch:', e)\n"
          "    sys.exit(77)\n"
       << Script;
  }
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Why += Py + " does not exist; ";
      continue;
    }
    std::string Cmd =
        "OMP_NUM_THREADS=1 '" + Py + "' '" + File.string() + "' 2>&1";
    FILE *P = ::popen(Cmd.c_str(), "r");
    if (!P)
      continue;
    std::string Out;
    char Buf[4096];
    size_t N;
    while ((N = std::fread(Buf, 1, sizeof(Buf), P)) > 0)
      Out.append(Buf, N);
    int Status = ::pclose(P);
    int Code = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
    if (Code == 0)
      return Out;
    if (Code == 77 || Code == 127) {
      Why += Py + ": " + Out + "; ";
      continue;
    }
    return "SCRIPT-FAILED\n" + Out;
  }
  return std::nullopt;
}

/// Splits S into lines (no trailing empty line).
inline std::vector<std::string> lines(const std::string &S) {
  std::vector<std::string> R;
  std::istringstream IS(S);
  std::string L;
  while (std::getline(IS, L))
    R.push_back(L);
  return R;
}

/// The keys of named pairs, in order.
template <typename T>
std::vector<std::string>
namesOf(const std::vector<std::pair<std::string, T>> &V) {
  std::vector<std::string> R;
  for (const auto &P : V)
    R.push_back(P.first);
  return R;
}

/// The message of the nng::Error Fn throws; "" when it throws none.
inline std::string errorText(const std::function<void()> &Fn) {
  try {
    Fn();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

} // namespace nng::nn::testing
