//===- OracleCase.h - PyTorch's results for the optim tests ---------------===//
//
// Runs tests/optim/scripts/optim_oracle.py (all cases at once, cached in
// the build folder) with the first Python that can import torch
// ($NNGRAPH_PYTHON, else /usr/bin/python3, else python3) and parses what it
// wrote for a case: initial parameters, per-step
// gradients, parameters after each step, the final optimizer state_dict,
// and for scheduler cases the lr of every epoch and the scheduler's
// state_dict. Helpers compare nngraph's results with it. Without torch the
// caller SKIPs with the reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/Subprocess.h"
#include "nngraph/frontend/optim/LRScheduler.h"
#include "nngraph/frontend/optim/Optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nng::optim::test {

/// A tensor as the script printed it.
struct OracleTensor {
  std::vector<int64_t> Dims;
  std::vector<double> Values;
};

/// One state entry: None, a tensor or a number.
struct OracleState {
  enum Kind { None, TensorKind, Number } K = None;
  OracleTensor T;
  double N = 0;
};

struct OracleGroup {
  std::vector<int64_t> Params;
  OptionDict Options;
};

/// Everything the script wrote for a case.
struct OracleCase {
  std::vector<OracleTensor> Params;
  /// Grads[Step][I]; nullopt where the parameter had no gradient.
  std::vector<std::vector<std::optional<OracleTensor>>> Grads;
  std::vector<std::vector<OracleTensor>> After;
  std::vector<OracleGroup> Groups;
  std::map<int64_t, std::map<std::string, OracleState>> State;
  /// Lrs[Epoch][Group] for scheduler cases (epoch 0: after construction).
  std::vector<std::vector<double>> Lrs;
  OptionDict Scheduler;
};

inline OracleTensor readTensor(std::istringstream &In) {
  OracleTensor T;
  size_t Rank = 0;
  In >> Rank;
  int64_t Numel = 1;
  for (size_t I = 0; I < Rank; ++I) {
    int64_t D;
    In >> D;
    T.Dims.push_back(D);
    Numel *= D;
  }
  for (int64_t I = 0; I < Numel; ++I) {
    std::string V;
    In >> V;
    T.Values.push_back(std::strtod(V.c_str(), nullptr));
  }
  return T;
}

inline OptionValue readValue(std::istringstream &In) {
  std::string Kind;
  In >> Kind;
  if (Kind == "none")
    return OptionValue();
  if (Kind == "bool") {
    int B;
    In >> B;
    return OptionValue(B != 0);
  }
  if (Kind == "int") {
    long long I;
    In >> I;
    return OptionValue(I);
  }
  std::string V;
  if (Kind == "float") {
    In >> V;
    return OptionValue(std::strtod(V.c_str(), nullptr));
  }
  size_t N = 0;
  In >> N;
  std::vector<double> T;
  for (size_t I = 0; I < N; ++I) {
    In >> V;
    T.push_back(std::strtod(V.c_str(), nullptr));
  }
  return OptionValue(std::move(T));
}

inline OracleCase parseOracle(const std::string &Path) {
  OracleCase C;
  std::ifstream File(Path);
  std::string Line;
  while (std::getline(File, Line)) {
    std::istringstream In(Line);
    std::string Tag;
    In >> Tag;
    if (Tag == "param") {
      size_t I;
      In >> I;
      C.Params.resize(std::max(C.Params.size(), I + 1));
      C.Params[I] = readTensor(In);
    } else if (Tag == "grad" || Tag == "after") {
      size_t Step, I;
      In >> Step >> I;
      if (Tag == "grad") {
        C.Grads.resize(std::max(C.Grads.size(), Step + 1));
        C.Grads[Step].resize(std::max(C.Grads[Step].size(), I + 1));
        std::streampos Pos = In.tellg();
        std::string Word;
        In >> Word;
        if (Word != "none") {
          In.seekg(Pos);
          C.Grads[Step][I] = readTensor(In);
        }
      } else {
        C.After.resize(std::max(C.After.size(), Step + 1));
        C.After[Step].resize(std::max(C.After[Step].size(), I + 1));
        C.After[Step][I] = readTensor(In);
      }
    } else if (Tag == "group") {
      size_t G, N;
      In >> G >> N;
      C.Groups.resize(std::max(C.Groups.size(), G + 1));
      for (size_t I = 0; I < N; ++I) {
        int64_t P;
        In >> P;
        C.Groups[G].Params.push_back(P);
      }
    } else if (Tag == "option") {
      size_t G;
      std::string Key;
      In >> G >> Key;
      C.Groups[G].Options.set(Key, readValue(In));
    } else if (Tag == "state") {
      int64_t I;
      std::string Key, Kind;
      In >> I >> Key >> Kind;
      OracleState S;
      if (Kind == "tensor") {
        S.K = OracleState::TensorKind;
        S.T = readTensor(In);
      } else if (Kind == "number") {
        S.K = OracleState::Number;
        In >> S.N;
      }
      C.State[I][Key] = S;
    } else if (Tag == "lr") {
      size_t Epoch;
      In >> Epoch;
      C.Lrs.resize(std::max(C.Lrs.size(), Epoch + 1));
      std::string V;
      while (In >> V)
        C.Lrs[Epoch].push_back(std::strtod(V.c_str(), nullptr));
    } else if (Tag == "sched") {
      std::string Key;
      In >> Key;
      C.Scheduler.set(Key, readValue(In));
    }
  }
  return C;
}

/// Runs the oracle script for every case into the cache folder
/// (build/tests/optim-oracle: one torch start instead of one per test) and
/// returns Case's results; nullopt with Skip set when no Python with torch
/// is available. Cached results are reused while they are newer than the
/// script. A script failure fails the test.
inline std::optional<OracleCase> runOracle(const std::string &Case,
                                           std::string &Skip) {
  namespace fs = std::filesystem;
  const fs::path Script =
      NNGRAPH_SOURCE_DIR "/tests/optim/scripts/optim_oracle.py";
  const fs::path Cache = NNGRAPH_BINARY_DIR "/tests/optim-oracle";
  const fs::path File = Cache / (Case + ".txt");
  std::error_code EC;
  if (fs::exists(File, EC) &&
      fs::last_write_time(File, EC) >= fs::last_write_time(Script, EC))
    return parseOracle(File.string());

  const std::vector<std::string> Pythons = nng::test::pythonCandidates();
  // Each process writes into its own folder, then renames the files into
  // the cache (atomic, so parallel tests never read half a file).
  fs::path Tmp = Cache / ("tmp-" + std::to_string(::getpid()));
  fs::create_directories(Tmp, EC);
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Skip += Py + " does not exist; ";
      continue;
    }
    // OpenBLAS 0.3.21 does not recognise this CPU (DESIGN.md).
    std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 '" + Py +
                      "' '" + Script.string() + "' '" + Tmp.string() + "' 2>&1";
    FILE *P = ::popen(Cmd.c_str(), "r");
    if (!P) {
      Skip += "popen failed; ";
      continue;
    }
    std::string Output;
    char Buf[4096];
    size_t N;
    while ((N = std::fread(Buf, 1, sizeof(Buf), P)) > 0)
      Output.append(Buf, N);
    int Status = ::pclose(P);
    int Code = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
    if (Code == 0) {
      for (const auto &E : fs::directory_iterator(Tmp))
        fs::rename(E.path(), Cache / E.path().filename(), EC);
      fs::remove_all(Tmp, EC);
      if (!fs::exists(File)) {
        ADD_FAILURE() << "optim_oracle.py wrote no " << File << ":\n" << Output;
        return std::nullopt;
      }
      return parseOracle(File.string());
    }
    if (Code == 77 ||
        (Code == 127 && Output.find("optim_oracle") == std::string::npos)) {
      Skip += Py + ": " + Output + "; ";
      continue;
    }
    fs::remove_all(Tmp, EC);
    ADD_FAILURE() << "optim_oracle.py failed (exit status " << Code << ") with "
                  << Py << ":\n"
                  << Output;
    return std::nullopt;
  }
  fs::remove_all(Tmp, EC);
  return std::nullopt;
}

/// Runs the oracle or SKIPs the calling test (a macro: GTEST_SKIP returns).
#define NNG_ORACLE_OR_SKIP(Var, Case)                                          \
  std::string Var##Skip;                                                       \
  std::optional<::nng::optim::test::OracleCase> Var##Opt =                     \
      ::nng::optim::test::runOracle(Case, Var##Skip);                          \
  if (!Var##Opt) {                                                             \
    if (::testing::Test::HasFailure())                                         \
      return;                                                                  \
    GTEST_SKIP() << "SKIPPED: no Python with torch: " << Var##Skip;            \
  }                                                                            \
  const ::nng::optim::test::OracleCase &Var = *Var##Opt

/// An nng tensor (float32) with T's shape and values.
inline Tensor toTensor(const OracleTensor &T, bool RequiresGrad = false) {
  std::vector<float> V(T.Values.begin(), T.Values.end());
  return Tensor(rt::Tensor::fromVector<float>(V, Shape(T.Dims)), RequiresGrad);
}

/// Expects Got to have Want's shape and values within Atol.
inline void expectNear(const Tensor &Got, const OracleTensor &Want, double Atol,
                       const std::string &What) {
  ASSERT_TRUE(Got.defined()) << What << ": undefined";
  ASSERT_EQ(Got.sizes(), Want.Dims) << What << ": shape";
  std::vector<double> G = Got.to_vector<double>();
  double Worst = 0;
  size_t WorstAt = 0;
  for (size_t I = 0; I < G.size(); ++I) {
    double E = std::fabs(G[I] - Want.Values[I]);
    if (!(E <= Worst)) {
      Worst = E;
      WorstAt = I;
    }
  }
  EXPECT_LE(Worst, Atol) << What << ": element " << WorstAt << " is "
                         << G[WorstAt] << ", PyTorch has "
                         << Want.Values[WorstAt];
}

/// Option values equal as Python sees them (an int equals the same float).
inline bool sameValue(const OptionValue &A, const OptionValue &B) {
  if (A.is_number() && B.is_number())
    return A.to_double() == B.to_double();
  return A == B;
}

/// Expects Got's options to equal Want's: same keys in the same order, the
/// same values.
inline void expectSameOptions(const OptionDict &Got, const OptionDict &Want,
                              const std::string &What) {
  std::vector<std::string> GotKeys, WantKeys;
  for (const auto &E : Got)
    GotKeys.push_back(E.first);
  for (const auto &E : Want)
    WantKeys.push_back(E.first);
  EXPECT_EQ(GotKeys, WantKeys) << What << ": keys";
  for (const auto &[Key, V] : Want)
    if (const OptionValue *G = Got.find(Key))
      EXPECT_TRUE(sameValue(*G, V))
          << What << ": " << Key << " is " << G->repr() << ", PyTorch has "
          << V.repr();
}

/// Expects SD to be what torch's optimizer.state_dict() held.
inline void expectStateDict(const OptimizerStateDict &SD, const OracleCase &C,
                            double Atol = 1e-6) {
  ASSERT_EQ(SD.param_groups.size(), C.Groups.size());
  for (size_t G = 0; G < C.Groups.size(); ++G) {
    EXPECT_EQ(SD.param_groups[G].params, C.Groups[G].Params) << "group " << G;
    expectSameOptions(SD.param_groups[G].options, C.Groups[G].Options,
                      "param group " + std::to_string(G));
  }
  std::vector<int64_t> GotIdx, WantIdx;
  for (const auto &E : SD.state)
    GotIdx.push_back(E.first);
  for (const auto &E : C.State)
    WantIdx.push_back(E.first);
  ASSERT_EQ(GotIdx, WantIdx) << "state indices";
  for (const auto &[Index, Want] : C.State) {
    const ParamState &Got = SD.state.at(Index);
    std::vector<std::string> GotKeys, WantKeys;
    for (const auto &E : Got)
      GotKeys.push_back(E.first);
    for (const auto &E : Want)
      WantKeys.push_back(E.first);
    EXPECT_EQ(GotKeys, WantKeys) << "state keys of parameter " << Index;
    for (const auto &[Key, W] : Want) {
      auto It = Got.find(Key);
      if (It == Got.end())
        continue;
      std::string What = "state " + std::to_string(Index) + "." + Key;
      const StateValue &V = It->second;
      switch (W.K) {
      case OracleState::None:
        EXPECT_TRUE(std::holds_alternative<std::monostate>(V)) << What;
        break;
      case OracleState::Number:
        ASSERT_TRUE(std::holds_alternative<double>(V)) << What;
        EXPECT_EQ(std::get<double>(V), W.N) << What;
        break;
      case OracleState::TensorKind:
        ASSERT_TRUE(std::holds_alternative<Tensor>(V)) << What;
        expectNear(std::get<Tensor>(V), W.T, Atol, What);
        if (Key == "step")
          EXPECT_EQ(std::get<Tensor>(V).dtype(), DType::F32) << What;
        break;
      }
    }
  }
}

} // namespace nng::optim::test
