//===- TorchOracle.h - PyTorch as the oracle of nn modules -------*- C++ -*-===//
//
// A test harness that checks a C++ nn module against the same PyTorch
// module. A test adds cases to a TorchOracle; each case runs the C++ module
// at once (state_dict before forward, forward on the inputs, backward with a
// fixed pseudo-random upstream gradient, optional SGD steps) and records
// everything. run() writes the state dicts, inputs and upstream gradients
// as raw tensor files plus request.json into a temporary folder, runs
// tests/nn/TorchOracle.py once for all cases with Debian's torch
// ($NNGRAPH_PYTHON, else /usr/bin/python3, else python3), and compares what
// PyTorch reports: state_dict keys (order included), outputs, input
// gradients, parameter gradients and the state after the step (running
// statistics), with |got - torch| <= Atol + Rtol * |torch|. Each mismatch is
// a test failure naming the case, the tensor and the worst error. Without a
// Python that imports torch, run() returns the reason and the test SKIPs
// through NNG_RUN_TORCH_ORACLE.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng::test {

/// The default tolerances against PyTorch (float32).
inline constexpr double OracleAtol = 1e-5;
inline constexpr double OracleRtol = 1e-5;

/// SGD steps after backward (torch.optim.SGD's arguments).
struct OracleSgd {
  double Lr = 0.1;
  double Momentum = 0;
  double Dampening = 0;
  double WeightDecay = 0;
  bool Nesterov = false;
};

/// One comparison of a C++ module with the same torch module.
struct OracleCase {
  /// Names the case in failure messages: "Conv2d(3, 4, 3, stride=2)".
  std::string Name;
  /// The C++ module; its state_dict() (taken before forward) is what the
  /// torch module loads.
  nn::ModulePtr Module;
  /// A Python expression building the torch module; torch, nn, F, math and
  /// the prelude's names are in scope.
  std::string TorchModule;
  /// A Python expression calling it: m is the module, x the input list.
  std::string TorchCall = "m(*x)";
  /// Python statements run after building the module (m in scope; may
  /// rebind m), e.g. "m.double()".
  std::vector<std::string> TorchSetup;
  /// The inputs (copied into fresh leaves).
  std::vector<Tensor> Inputs;
  /// Which inputs require grad; empty: the floating-point ones.
  std::vector<bool> InputRequiresGrad;
  /// Runs the C++ module on the inputs and returns its output tensors in
  /// the order of the flattened torch result (undefined ones dropped).
  std::function<std::vector<Tensor>(const std::vector<Tensor> &)> Forward;
  /// Runs in training mode (else eval).
  bool Train = false;
  /// SGD steps (forward, backward, step, Steps times; the last forward's
  /// outputs and gradients are compared).
  std::optional<OracleSgd> Sgd;
  int Steps = 1;
  double Atol = OracleAtol;
  double Rtol = OracleRtol;
  /// Also compare the C++ module's to_string() with repr(torch module).
  bool CheckRepr = true;
};

/// What PyTorch reports about a module it built (describe/init/load cases).
struct TorchReport {
  /// A Python error of the case ("" when none).
  std::string Error;
  std::vector<std::string> Keys, ParamNames, BufferNames, ModuleNames;
  std::map<std::string, std::string> StateDTypes;
  std::map<std::string, std::vector<int64_t>> StateShapes;
  int64_t NumParams = 0;
  /// repr(m), what print(m) shows.
  std::string Repr;
  /// load_state_dict(strict=False)'s report and strict=True's message.
  /// NonStrictError: what strict=False raised (a shape mismatch).
  std::vector<std::string> Missing, Unexpected;
  std::string StrictError, NonStrictError;
  /// Default-initialization statistics per state_dict key.
  struct Stats {
    int64_t Numel = 0;
    double Mean = 0, Std = 0, Min = 0, Max = 0;
  };
  std::map<std::string, Stats> InitStats;
};

/// Statistics of T (flattened, in double; population std).
TorchReport::Stats tensorStats(const Tensor &T);

/// "" when Got matches Want (shape, then every value within Atol + Rtol *
/// |want|), else a message with the shapes or the worst element, its
/// index and the maximal absolute error.
std::string compareTensors(const Tensor &Got, const Tensor &Want, double Atol,
                           double Rtol);

/// "" when the key lists are equal (order included), else both lists.
std::string compareKeys(const std::vector<std::string> &Cpp,
                        const std::vector<std::string> &Torch);

/// A batch of cases run through one Python invocation.
class TorchOracle {
public:
  /// Prelude: Python code run once before the cases (class definitions).
  explicit TorchOracle(std::string Prelude = "");
  ~TorchOracle();
  TorchOracle(const TorchOracle &) = delete;
  TorchOracle &operator=(const TorchOracle &) = delete;

  /// Runs C's C++ side now and queues the comparison with PyTorch. A C++
  /// exception is a test failure naming the case.
  void add(OracleCase C);
  /// Queues a report of the torch module built by TorchModule (after
  /// TorchSetup); its index for report().
  size_t describe(const std::string &Name, const std::string &TorchModule,
                  std::vector<std::string> TorchSetup = {});
  /// Like describe(), plus default-initialization statistics (torch seeded
  /// with 0).
  size_t initStats(const std::string &Name, const std::string &TorchModule);
  /// Queues load_state_dict(SD) into the torch module, strict=False (missing
  /// and unexpected keys) and strict=True (the message).
  size_t loadReport(const std::string &Name, const std::string &TorchModule,
                    const nn::StateDict &SD);

  /// Runs Python once for everything queued and checks the add() cases.
  /// Returns "" when it ran, else why PyTorch is unavailable (the test
  /// should SKIP; see NNG_RUN_TORCH_ORACLE). A Python failure other than
  /// "cannot import torch" is a test failure.
  std::string run();
  /// The report of a describe/initStats/loadReport case (after run()).
  const TorchReport &report(size_t Index) const;
  /// The torch version Python reported.
  const std::string &torchVersion() const;

  struct Impl;

private:
  std::unique_ptr<Impl> P;
};

} // namespace nng::test

/// Runs the oracle; SKIPs the test (with the reason) when torch is
/// unavailable.
#define NNG_RUN_TORCH_ORACLE(Oracle)                                           \
  do {                                                                         \
    std::string WhyNot_ = (Oracle).run();                                      \
    if (!WhyNot_.empty())                                                      \
      GTEST_SKIP() << "SKIPPED: " << WhyNot_;                                  \
  } while (0)
