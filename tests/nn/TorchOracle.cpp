//===- TorchOracle.cpp - PyTorch as the oracle of nn modules ---------------===//
//
// The C++ half of the harness of TorchOracle.h: runs each case's module
// (forward, backward with a fixed upstream gradient, optional SGD steps),
// writes the exchange folder (request.json and raw little-endian tensor
// files, one per tensor), runs TorchOracle.py once per batch with the first
// Python that imports torch, reads result.json back and compares. Tensor
// references in both JSON files are {"file", "dtype", "shape"} with
// nngraph's dtype names.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/optim/SGD.h"
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
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nng::test {

namespace {

/// A fresh folder for this test's exchange files.
fs::path freshDir() {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Name = Info ? std::string(Info->test_suite_name()) + "-" +
                                Info->name()
                          : std::string("x");
  std::replace(Name.begin(), Name.end(), '/', '_');
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-torch-oracle-" + Name + "-" + std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P;
}

/// T with autograd and views stripped: a contiguous copy of its data.
rt::Tensor snapshot(const Tensor &T) { return T.data().contiguous().clone(); }

std::string shapeText(const rt::Tensor &T) { return T.shape().toString(); }

/// What the C++ side of an add() case produced.
struct CppRun {
  std::string Name;
  double Atol = OracleAtol, Rtol = OracleRtol;
  std::vector<std::string> Keys;
  /// to_string() of the module ("" when not compared).
  std::string Repr;
  bool CheckRepr = true;
  std::vector<rt::Tensor> Outputs;
  std::vector<std::optional<rt::Tensor>> InputGrads;
  std::vector<std::pair<std::string, rt::Tensor>> ParamGrads;
  std::vector<std::pair<std::string, rt::Tensor>> StateAfter;
};

/// Entries of a JSON string array.
std::vector<std::string> strings(const json &J, const char *Key) {
  std::vector<std::string> R;
  if (J.contains(Key))
    for (const json &S : J.at(Key))
      R.push_back(S.get<std::string>());
  return R;
}

} // namespace

struct TorchOracle::Impl {
  std::string Prelude;
  fs::path Dir;
  int FileCount = 0;
  uint64_t GradSeed = 12345;
  json Cases = json::array();
  /// Per JSON case: the index into Runs (add cases) or -1 (reports).
  std::vector<int> RunOf;
  std::vector<CppRun> Runs;
  std::vector<TorchReport> Reports;
  std::string TorchVersion;
  bool Ran = false;

  const fs::path &dir() {
    if (Dir.empty())
      Dir = freshDir();
    return Dir;
  }

  /// Writes T's data as raw bytes; returns its reference.
  json write(const rt::Tensor &T, const std::string &Tag) {
    rt::Tensor C = T.contiguous();
    std::string File = "c" + std::to_string(FileCount++) + "_" + Tag + ".bin";
    std::ofstream OS(dir() / File, std::ios::binary);
    OS.write(static_cast<const char *>(C.rawData()),
             static_cast<std::streamsize>(C.nbytes()));
    NNG_CHECK(OS.good(), "TorchOracle: cannot write ", (dir() / File).string());
    return {{"file", File},
            {"dtype", std::string(dtypeName(C.dtype()))},
            {"shape", C.shape().dims()}};
  }

  /// Reads a tensor Python wrote.
  rt::Tensor read(const json &Ref) {
    std::string Name = Ref.at("dtype").get<std::string>();
    std::optional<DType> T = parseDType(Name);
    NNG_CHECK(T.has_value(), "TorchOracle: unknown dtype '", Name, "'");
    Shape Sh(Ref.at("shape").get<std::vector<int64_t>>());
    rt::Tensor R = rt::Tensor::empty(Sh, *T);
    std::ifstream IS(Dir / Ref.at("file").get<std::string>(), std::ios::binary);
    IS.read(static_cast<char *>(R.rawData()),
            static_cast<std::streamsize>(R.nbytes()));
    NNG_CHECK(IS.good() || R.nbytes() == 0, "TorchOracle: cannot read ",
              Ref.at("file").get<std::string>());
    return R;
  }

  /// A pseudo-random upstream gradient like Out: uniform in [-1, 1] for
  /// floating outputs, zeros otherwise.
  Tensor upstream(const Tensor &Out) {
    rt::Tensor G = rt::Tensor::empty(Out.shape(), Out.dtype());
    std::mt19937_64 Gen(GradSeed++);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    bool Float = Out.is_floating_point();
    for (int64_t I = 0; I < G.numel(); ++I)
      G.setFlat(I, Float ? U(Gen) : 0.0);
    return Tensor(G);
  }

  /// Python's run; returns "" or why torch is unavailable.
  std::string runPython();
  void checkRun(const CppRun &R, const json &Res);
};

TorchOracle::TorchOracle(std::string Prelude) : P(std::make_unique<Impl>()) {
  P->Prelude = std::move(Prelude);
}

TorchOracle::~TorchOracle() {
  if (P->Dir.empty())
    return;
  if (::testing::Test::HasFailure() || std::getenv("NNGRAPH_KEEP_ORACLE")) {
    std::cerr << "TorchOracle: exchange files kept in " << P->Dir.string()
              << "\n";
    return;
  }
  std::error_code EC;
  fs::remove_all(P->Dir, EC);
}

void TorchOracle::add(OracleCase C) {
  CppRun R;
  R.Name = C.Name + (C.Train ? " [train]" : " [eval]");
  R.Atol = C.Atol;
  R.Rtol = C.Rtol;
  R.CheckRepr = C.CheckRepr;
  json J = {{"kind", "forward"},
            {"module", C.TorchModule},
            {"call", C.TorchCall},
            {"setup", C.TorchSetup},
            {"train", C.Train},
            {"steps", C.Steps}};
  try {
    NNG_CHECK(C.Module, "the case has no C++ module");
    NNG_CHECK(C.Forward, "the case has no Forward function");
    C.Module->zero_grad(true);
    R.Repr = C.Module->to_string();
    json State = json::array();
    for (const auto &[Key, T] : C.Module->state_dict()) {
      State.push_back({Key, P->write(T.data(), "state")});
      R.Keys.push_back(Key);
    }
    J["state"] = State;
    C.Module->train(C.Train);

    std::vector<Tensor> X;
    json Inputs = json::array(), NeedsGrad = json::array();
    for (size_t I = 0; I < C.Inputs.size(); ++I) {
      const Tensor &In = C.Inputs[I];
      bool Needs = C.InputRequiresGrad.empty() ? In.is_floating_point()
                                               : C.InputRequiresGrad.at(I);
      X.emplace_back(snapshot(In), Needs);
      Inputs.push_back(P->write(X.back().data(), "in"));
      NeedsGrad.push_back(Needs);
    }
    J["inputs"] = Inputs;
    J["requires_grad"] = NeedsGrad;

    std::unique_ptr<optim::SGD> Opt;
    if (C.Sgd) {
      optim::SGDOptions O;
      O.lr = C.Sgd->Lr;
      O.momentum = C.Sgd->Momentum;
      O.dampening = C.Sgd->Dampening;
      O.weight_decay = C.Sgd->WeightDecay;
      O.nesterov = C.Sgd->Nesterov;
      Opt = std::make_unique<optim::SGD>(C.Module->parameters(), O);
      J["sgd"] = {{"lr", C.Sgd->Lr},
                  {"momentum", C.Sgd->Momentum},
                  {"dampening", C.Sgd->Dampening},
                  {"weight_decay", C.Sgd->WeightDecay},
                  {"nesterov", C.Sgd->Nesterov}};
    }
    std::vector<Tensor> Outs, Grads;
    json GradRefs = json::array();
    for (int S = 0; S < C.Steps; ++S) {
      if (Opt)
        Opt->zero_grad(true);
      for (Tensor &L : X)
        if (L.requires_grad())
          L.set_grad(Tensor());
      Outs.clear();
      for (const Tensor &O : C.Forward(X))
        if (O.defined())
          Outs.push_back(O);
      if (Grads.empty())
        for (const Tensor &O : Outs) {
          Grads.push_back(P->upstream(O));
          GradRefs.push_back(P->write(Grads.back().data(), "gout"));
        }
      NNG_CHECK(Grads.size() == Outs.size(), "Forward gave ", Outs.size(),
                " outputs at step ", S, ", ", Grads.size(), " before");
      std::vector<Tensor> Roots, RootGrads;
      for (size_t I = 0; I < Outs.size(); ++I)
        if (Outs[I].requires_grad()) {
          Roots.push_back(Outs[I]);
          RootGrads.push_back(Grads[I]);
        }
      if (!Roots.empty())
        autograd::backward(Roots, RootGrads);
      if (Opt)
        Opt->step();
    }
    J["out_grads"] = GradRefs;
    for (const Tensor &O : Outs)
      R.Outputs.push_back(snapshot(O));
    for (const Tensor &L : X)
      R.InputGrads.push_back(L.grad().defined()
                                 ? std::optional<rt::Tensor>(snapshot(L.grad()))
                                 : std::nullopt);
    for (const auto &[Name, Param] : C.Module->named_parameters())
      if (Param.grad().defined())
        R.ParamGrads.emplace_back(Name, snapshot(Param.grad()));
    for (const auto &[Key, T] : C.Module->state_dict())
      R.StateAfter.emplace_back(Key, snapshot(T));
  } catch (const std::exception &E) {
    ADD_FAILURE() << R.Name << ": the C++ module threw:\n" << E.what();
    return;
  }
  P->Cases.push_back(std::move(J));
  P->RunOf.push_back(static_cast<int>(P->Runs.size()));
  P->Runs.push_back(std::move(R));
}

size_t TorchOracle::describe(const std::string &Name,
                             const std::string &TorchModule,
                             std::vector<std::string> TorchSetup) {
  P->Cases.push_back({{"kind", "describe"},
                      {"name", Name},
                      {"module", TorchModule},
                      {"setup", TorchSetup}});
  P->RunOf.push_back(-1);
  return P->Cases.size() - 1;
}

size_t TorchOracle::initStats(const std::string &Name,
                              const std::string &TorchModule) {
  P->Cases.push_back({{"kind", "init"}, {"name", Name}, {"module", TorchModule}});
  P->RunOf.push_back(-1);
  return P->Cases.size() - 1;
}

size_t TorchOracle::loadReport(const std::string &Name,
                               const std::string &TorchModule,
                               const nn::StateDict &SD) {
  json State = json::array();
  for (const auto &[Key, T] : SD)
    State.push_back({Key, P->write(T.data(), "state")});
  P->Cases.push_back({{"kind", "load"},
                      {"name", Name},
                      {"module", TorchModule},
                      {"state", State}});
  P->RunOf.push_back(-1);
  return P->Cases.size() - 1;
}

std::string TorchOracle::Impl::runPython() {
  {
    std::ofstream OS(dir() / "request.json");
    OS << json{{"prelude", Prelude}, {"cases", Cases}}.dump(1);
  }
  const std::vector<std::string> Pythons = pythonCandidates();
  std::string Reasons;
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Reasons += Py + " does not exist; ";
      continue;
    }
    // OpenBLAS 0.3.21 does not recognise this CPU (DESIGN.md).
    std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 '" + Py +
                      "' '" NNGRAPH_SOURCE_DIR "/tests/nn/TorchOracle.py' '" +
                      Dir.string() + "'";
    std::string Out;
    int Status = runCommand(Cmd, Out);
    if (Status == 0)
      return "";
    if (Status == 127 && Out.find("TorchOracle") == std::string::npos) {
      Reasons += Py + ": command not found; ";
      continue;
    }
    if (Status != OracleSkipStatus) {
      ADD_FAILURE() << "TorchOracle.py failed (exit status " << Status
                    << ") with " << Py << ":\n"
                    << Out;
      return "";
    }
    while (!Out.empty() && Out.back() == '\n')
      Out.pop_back();
    Reasons += Out + "; ";
  }
  return "no Python with torch: " + Reasons;
}

namespace {

/// A gradient that one side lacks counts as zeros (PyTorch's None for an
/// unused input); "" when the other side's is all zeros too.
std::string compareOptional(const std::optional<rt::Tensor> &Cpp,
                            const std::optional<rt::Tensor> &Torch,
                            double Atol, double Rtol) {
  if (!Cpp && !Torch)
    return "";
  if (Cpp && Torch)
    return compareTensors(Tensor(*Cpp), Tensor(*Torch), Atol, Rtol);
  const rt::Tensor &Have = Cpp ? *Cpp : *Torch;
  for (double V : Have.toDoubleVector())
    if (V != 0)
      return std::string(Cpp ? "torch has no gradient (None)"
                             : "C++ has no gradient") +
             ", the other side's is nonzero (shape " + shapeText(Have) + ")";
  return "";
}

} // namespace

void TorchOracle::Impl::checkRun(const CppRun &R, const json &Res) {
  if (Res.contains("error")) {
    ADD_FAILURE() << R.Name << ": PyTorch's side failed:\n"
                  << Res.at("error").get<std::string>();
    return;
  }
  if (std::string D = compareKeys(R.Keys, strings(Res, "keys")); !D.empty())
    ADD_FAILURE() << R.Name << ": " << D;
  auto Fail = [&](const std::string &What, const std::string &Msg) {
    if (!Msg.empty())
      ADD_FAILURE() << R.Name << ": " << What << ": " << Msg;
  };
  if (R.CheckRepr && R.Repr != Res.value("repr", ""))
    Fail("print(module) differs",
         "\n  C++:   " + R.Repr + "\n  torch: " + Res.value("repr", ""));
  const json &Outs = Res.at("outputs");
  if (Outs.size() != R.Outputs.size()) {
    ADD_FAILURE() << R.Name << ": C++ gave " << R.Outputs.size()
                  << " output tensors, torch " << Outs.size();
  } else {
    for (size_t I = 0; I < Outs.size(); ++I)
      Fail("output " + std::to_string(I),
           compareTensors(Tensor(R.Outputs[I]), Tensor(read(Outs[I])), R.Atol,
                          R.Rtol));
  }
  const json &InGrads = Res.at("input_grads");
  for (size_t I = 0; I < InGrads.size() && I < R.InputGrads.size(); ++I) {
    std::optional<rt::Tensor> Want;
    if (!InGrads[I].is_null())
      Want = read(InGrads[I]);
    Fail("gradient of input " + std::to_string(I),
         compareOptional(R.InputGrads[I], Want, R.Atol, R.Rtol));
  }
  const json &PGrads = Res.at("param_grads");
  std::set<std::string> Seen;
  for (const auto &[Name, G] : R.ParamGrads) {
    Seen.insert(Name);
    std::optional<rt::Tensor> Want;
    if (PGrads.contains(Name))
      Want = read(PGrads.at(Name));
    Fail("gradient of " + Name, compareOptional(G, Want, R.Atol, R.Rtol));
  }
  for (const auto &[Name, Ref] : PGrads.items())
    if (!Seen.count(Name))
      Fail("gradient of " + Name, compareOptional(std::nullopt, read(Ref),
                                                  R.Atol, R.Rtol));
  const json &After = Res.at("state_after");
  for (const auto &[Key, T] : R.StateAfter) {
    if (!After.contains(Key))
      continue; // A key difference is reported above.
    Fail("state_dict['" + Key + "'] after the step",
         compareTensors(Tensor(T), Tensor(read(After.at(Key))), R.Atol,
                        R.Rtol));
  }
}

std::string TorchOracle::run() {
  NNG_CHECK(!P->Ran, "TorchOracle::run() called twice");
  P->Ran = true;
  P->Reports.assign(P->Cases.size(), TorchReport());
  if (P->Cases.empty())
    return "";
  std::string WhyNot = P->runPython();
  if (!WhyNot.empty())
    return WhyNot;
  json Result;
  {
    std::ifstream IS(P->Dir / "result.json");
    if (!IS) {
      for (TorchReport &R : P->Reports)
        R.Error = "TorchOracle.py wrote no result";
      if (!::testing::Test::HasFailure())
        ADD_FAILURE() << "TorchOracle.py wrote no result.json";
      return "";
    }
    IS >> Result;
  }
  P->TorchVersion = Result.value("torch_version", "");
  const json &Cases = Result.at("cases");
  for (size_t I = 0; I < Cases.size() && I < P->RunOf.size(); ++I) {
    const json &Res = Cases[I];
    if (P->RunOf[I] >= 0) {
      P->checkRun(P->Runs[P->RunOf[I]], Res);
      continue;
    }
    TorchReport &R = P->Reports[I];
    R.Error = Res.value("error", "");
    R.Keys = strings(Res, "keys");
    R.ParamNames = strings(Res, "param_names");
    R.BufferNames = strings(Res, "buffer_names");
    R.ModuleNames = strings(Res, "module_names");
    R.Missing = strings(Res, "missing");
    R.Unexpected = strings(Res, "unexpected");
    R.StrictError = Res.value("strict_error", "");
    R.NonStrictError = Res.value("nonstrict_error", "");
    R.Repr = Res.value("repr", "");
    R.NumParams = Res.value("num_params", int64_t(0));
    if (Res.contains("state_dtypes"))
      for (const auto &[K, V] : Res.at("state_dtypes").items())
        R.StateDTypes[K] = V.get<std::string>();
    if (Res.contains("state_shapes"))
      for (const auto &[K, V] : Res.at("state_shapes").items())
        R.StateShapes[K] = V.get<std::vector<int64_t>>();
    if (Res.contains("init_stats"))
      for (const auto &[K, V] : Res.at("init_stats").items())
        R.InitStats[K] = {V.at("numel").get<int64_t>(), V.at("mean").get<double>(),
                          V.at("std").get<double>(), V.at("min").get<double>(),
                          V.at("max").get<double>()};
  }
  return "";
}

const TorchReport &TorchOracle::report(size_t Index) const {
  NNG_CHECK(P->Ran, "TorchOracle::report() before run()");
  NNG_CHECK(Index < P->Reports.size() && P->RunOf[Index] < 0,
            "TorchOracle::report(", Index, "): not a report case");
  return P->Reports[Index];
}

const std::string &TorchOracle::torchVersion() const { return P->TorchVersion; }

TorchReport::Stats tensorStats(const Tensor &T) {
  std::vector<double> V = T.data().toDoubleVector();
  TorchReport::Stats S;
  S.Numel = static_cast<int64_t>(V.size());
  if (V.empty())
    return S;
  double Sum = 0;
  S.Min = S.Max = V[0];
  for (double X : V) {
    Sum += X;
    S.Min = std::min(S.Min, X);
    S.Max = std::max(S.Max, X);
  }
  S.Mean = Sum / static_cast<double>(V.size());
  double SS = 0;
  for (double X : V)
    SS += (X - S.Mean) * (X - S.Mean);
  S.Std = std::sqrt(SS / static_cast<double>(V.size()));
  return S;
}

std::string compareTensors(const Tensor &Got, const Tensor &Want, double Atol,
                           double Rtol) {
  const rt::Tensor &G = Got.data(), &W = Want.data();
  if (G.dtype() != W.dtype() || G.shape() != W.shape())
    return "C++ gives " + std::string(dtypeName(G.dtype())) + shapeText(G) +
           ", torch " + std::string(dtypeName(W.dtype())) + shapeText(W);
  std::vector<double> GV = G.toDoubleVector(), WV = W.toDoubleVector();
  int64_t Bad = 0, Worst = -1;
  double MaxErr = 0, WorstExcess = 0;
  for (size_t I = 0; I < GV.size(); ++I) {
    if (std::isnan(GV[I]) && std::isnan(WV[I]))
      continue;
    double Err = std::fabs(GV[I] - WV[I]);
    if (GV[I] == WV[I])
      Err = 0; // Equal infinities.
    if (std::isnan(Err))
      Err = INFINITY;
    MaxErr = std::max(MaxErr, Err);
    double Excess = Err - (Atol + Rtol * std::fabs(WV[I]));
    if (Excess > 0) {
      ++Bad;
      if (Worst < 0 || Excess > WorstExcess) {
        Worst = static_cast<int64_t>(I);
        WorstExcess = Excess;
      }
    }
  }
  if (!Bad)
    return "";
  std::ostringstream OS;
  OS << "max abs error " << MaxErr << "; " << Bad << " of " << GV.size()
     << " values beyond atol " << Atol << " + rtol " << Rtol
     << " * |torch| (shape " << shapeText(G) << "); worst at flat index "
     << Worst << ": C++ " << GV[Worst] << ", torch " << WV[Worst];
  return OS.str();
}

std::string compareKeys(const std::vector<std::string> &Cpp,
                        const std::vector<std::string> &Torch) {
  if (Cpp == Torch)
    return "";
  auto List = [](const std::vector<std::string> &Ks) {
    std::string S = "[";
    for (size_t I = 0; I < Ks.size(); ++I)
      S += (I ? ", " : "") + Ks[I];
    return S + "]";
  };
  return "state_dict keys differ from PyTorch's (order included)\n  C++:   " +
         List(Cpp) + "\n  torch: " + List(Torch);
}

} // namespace nng::test
