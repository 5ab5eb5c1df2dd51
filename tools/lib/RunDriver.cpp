//===- RunDriver.cpp - The nngraph-run driver -----------------------------===//
//
// Command line -> load and verify the model -> read --inputs FILE.npz when
// given (checked against the model's inputs; it binds the symbolic dims) ->
// optimize it (-O, the nngraph-opt presets; -O2 by default, as ONNX Runtime
// optimizes a session's graph) -> bind symbolic dims -> take the file's
// arrays or make deterministic inputs -> compile on the chosen backend ->
// run (repeatedly when asked, reporting the median) -> save the outputs
// with --save-outputs -> print the outputs' shapes and first values and the
// times, as text or JSON.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/RunDriver.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "Progress.h"
#include "RunSetup.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/tools/CpuStatsReport.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"
#include "nngraph/tools/InputData.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <sys/resource.h>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-run";

struct RunOptions {
  std::string Model;
  uint64_t Seed = 0;
  std::string Backend = "reference";
  bool Json = false;
  DimBindings Dims;            ///< --dim, bound as parsed.
  std::string InputsPath;      ///< --inputs: arrays instead of random data.
  std::string SaveOutputsPath; ///< --save-outputs: where the outputs go.
  int Repeat = 1;
  int MaxValues = 8;
  bool Stats = false;
  bool Profile = false;
  bool PrintSchedule = false;
  int OptLevel = 2;
  int IdleMs = 0;
  int Threads = 0; ///< 0: the process default (nng::defaultNumThreads).
  bool Quiet = false;
};

void describeOptions(CLI::App &App, RunOptions &O) {
  App.description("nngraph-run: run a model on deterministic inputs (or "
                  "on arrays from an .npz file) and print its outputs and "
                  "the time taken.");
  App.add_option("model", O.Model,
                 "Model to run: .nng (text format) or .onnx.\n"
                 "  e.g. nngraph-run examples/models/small_cnn.nng")
      ->required();
  CLI::Option *Seed =
      App.add_option("--input-seed", O.Seed,
                     "Seed of the pseudo-random inputs (floats uniform in "
                     "[-1, 1), integers in [0, 10)); default 0.\n"
                     "  e.g. nngraph-run model.nng --input-seed 42")
          ->option_text("S");
  App.add_option("--inputs", O.InputsPath,
                 "Run on the arrays of FILE.npz instead of pseudo-random "
                 "inputs: one array per graph input, named after it, with "
                 "the input's dtype and shape (symbolic dims such as N take "
                 "the arrays' sizes).\n"
                 "  e.g. python3 -c 'import numpy; numpy.savez(\"x.npz\", "
                 "x=numpy.zeros((2,1,28,28), numpy.float32))'\n"
                 "       nngraph-run model.nng --inputs x.npz")
      ->excludes(Seed)
      ->option_text("FILE.npz");
  App.add_option("--save-outputs", O.SaveOutputsPath,
                 "Write the outputs of the last run to FILE.npz, one array "
                 "per graph output, named after it (numpy.load reads it; "
                 "a name a zip entry cannot carry, like torch's leading '/', "
                 "is percent-encoded: '/a/y' is entry '%2Fa/y'); replaced "
                 "atomically.\n"
                 "  e.g. nngraph-run model.nng --inputs x.npz "
                 "--save-outputs y.npz")
      ->option_text("FILE.npz");
  addBackendOption(App, O.Backend, "Backend to run on",
                   "nngraph-run model.nng --backend reference");
  addOptLevelOption(App, O.OptLevel,
                    "run before compiling (0 runs the graph as written); "
                    "default 2, as ONNX Runtime optimizes a session's graph",
                    "nngraph-run model.onnx --backend cpu -O0");
  addDimOption(App, O.Dims,
               "with --inputs the arrays' shapes bind them, and a --dim "
               "must agree",
               "nngraph-run model.nng --dim N=4");
  App.add_option("--repeat", O.Repeat,
                 "Run K times after compiling and report the median time; "
                 "default 1.\n  e.g. nngraph-run model.nng --repeat 10")
      ->check(CLI::Range(1, 1000000))
      ->option_text("K");
  App.add_option("--max-values", O.MaxValues,
                 "Print at most K values of each output; default 8.")
      ->check(CLI::Range(0, 1000000))
      ->option_text("K");
  App.add_flag("--stats", O.Stats,
               "After the runs, print what the backend did per run (cpu: "
               "steps, oneDNN primitives, layout reorders, fused and folded "
               "nodes, arena bytes, and the nodes that fell back to node "
               "kernels).\n  e.g. nngraph-run model.onnx --backend cpu --stats");
  App.add_flag("--profile", O.Profile,
               "Time every step of the cpu backend's schedule during the "
               "runs and print the steps that took longest (--json: all of "
               "them); cpu backend only.\n"
               "  e.g. nngraph-run model.onnx --backend cpu --repeat 20 "
               "--profile");
  App.add_flag("--print-schedule", O.PrintSchedule,
               "Print the cpu backend's compiled schedule for these input "
               "shapes: one line per step (a oneDNN primitive and its "
               "implementation, an own loop, a node kernel), with its "
               "operands' dtypes, shapes, arena ranges and layouts; cpu "
               "backend only.\n"
               "  e.g. nngraph-run model.onnx --backend cpu --dim N=1 "
               "--print-schedule");
  addThreadsOption(App, O.Threads, "",
                   "nngraph-run model.onnx --backend cpu --threads 4");
  App.add_option("--idle", O.IdleMs,
                 "After the runs, stay idle MS milliseconds and report the "
                 "CPU time the process used meanwhile (threads that spin "
                 "after a run show here; it should be ~0).\n"
                 "  e.g. nngraph-run model.onnx --backend cpu --repeat 20 "
                 "--idle 1000")
      ->check(CLI::Range(0, 600000))
      ->option_text("MS");
  App.add_flag("--json", O.Json,
               "Print one JSON object (model, inputs and where they came "
               "from, outputs with shapes and first values, times in ms) "
               "instead of text.\n"
               "  e.g. nngraph-run model.nng --json");
  App.set_version_flag(
      "--version", std::string(ToolName) + " " + std::string(toolsVersion()) + "\n" +
          nng::buildDescription(),
      "Print the version and exit.");
  addQuietFlag(App, O.Quiet);
  addExitStatusHelp(App, "the model or --inputs cannot be loaded, do not "
                         "fit, or the run fails");
}

/// User plus system CPU time of the process (all threads), in ms.
double processCpuMs() {
  rusage U{};
  getrusage(RUSAGE_SELF, &U);
  auto Ms = [](const timeval &T) {
    return static_cast<double>(T.tv_sec) * 1e3 +
           static_cast<double>(T.tv_usec) / 1e3;
  };
  return Ms(U.ru_utime) + Ms(U.ru_stime);
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

std::string formatValue(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.6g", V);
  return Buf;
}

std::vector<double> firstValues(const Tensor &T, int64_t Max) {
  std::vector<double> Vals;
  int64_t N = std::min<int64_t>(T.numel(), Max);
  for (int64_t I = 0; I < N; ++I)
    Vals.push_back(T.getFlat(I));
  return Vals;
}

/// What one run produced, for printing.
struct RunResult {
  std::vector<Tensor> Inputs, Outputs;
  size_t LoadedNodes = 0; ///< Before -O's passes.
  double IdleCpuMs = 0;   ///< CPU time used during --idle.
  double OptimizeMs = 0, CompileMs = 0;
  std::vector<double> RunMs;
#if NNGRAPH_HAVE_ONEDNN
  std::optional<backends::CpuExecutableStats> Cpu; ///< With --stats.
  std::string Schedule; ///< With --print-schedule.
#endif
};
#if NNGRAPH_HAVE_ONEDNN

/// The --profile block as text: the slowest steps, per run.
void printProfile(std::ostream &Out, const backends::CpuExecutableStats &S) {
  if (S.ProfiledRuns == 0) {
    Out << "profile: nothing timed (the model ran node by node)\n";
    return;
  }
  double Total = 0;
  for (const auto &T : S.StepTimes)
    Total += T.Ms;
  double Runs = static_cast<double>(S.ProfiledRuns);
  char Buf[96];
  std::snprintf(Buf, sizeof(Buf), "%.3f ms per run", Total / Runs);
  Out << "profile: " << S.ProfiledRuns << " run(s), " << S.StepTimes.size()
      << " steps, " << Buf << " in steps; the slowest:\n";
  std::vector<size_t> Order(S.StepTimes.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return S.StepTimes[A].Ms > S.StepTimes[B].Ms;
  });
  constexpr size_t MaxRows = 15;
  for (size_t I = 0; I < Order.size() && I < MaxRows; ++I) {
    const auto &T = S.StepTimes[Order[I]];
    std::snprintf(Buf, sizeof(Buf), "  %5.1f%%  %8.3f ms  #%-4zu ",
                  Total > 0 ? 100 * T.Ms / Total : 0.0, T.Ms / Runs,
                  Order[I]);
    Out << Buf << T.Desc << "\n";
  }
}
#endif

void printText(std::ostream &Out, const RunOptions &O, const ir::Graph &G,
               const DimBindings &Dims, const RunResult &R) {
  Out << "model: " << O.Model << " (graph \"" << G.name() << "\", "
      << R.LoadedNodes << (R.LoadedNodes == 1 ? " node)\n" : " nodes)\n");
  if (O.OptLevel > 0)
    Out << "optimized: -O" << O.OptLevel << ", " << G.numNodes()
        << (G.numNodes() == 1 ? " node\n" : " nodes\n");
  Out << "backend: " << O.Backend << " (" << nng::numThreads()
      << (nng::numThreads() == 1 ? " thread" : " threads") << ")\n";
  if (std::string D = dimsText(G, Dims); !D.empty())
    Out << "dims:" << D << "\n";
  printInputLines(Out, G, R.Inputs, O.InputsPath, O.Seed);
  for (size_t I = 0; I < R.Outputs.size(); ++I) {
    const Tensor &T = R.Outputs[I];
    Out << "output %" << G.outputs()[I]->name() << ": " << dtypeName(T.dtype())
        << T.shape().toString() << " = [";
    std::vector<double> Vals = firstValues(T, O.MaxValues);
    for (size_t J = 0; J < Vals.size(); ++J)
      Out << (J ? ", " : "") << formatValue(Vals[J]);
    if (T.numel() > static_cast<int64_t>(Vals.size()))
      Out << (Vals.empty() ? "" : ", ") << "... (" << T.numel() << " values)";
    Out << "]\n";
  }
  if (!O.SaveOutputsPath.empty()) {
    Out << "saved: " << R.Outputs.size()
        << (R.Outputs.size() == 1 ? " output to " : " outputs to ")
        << O.SaveOutputsPath << "\n";
    std::vector<std::string> Names;
    for (const ir::Value *V : G.outputs())
      Names.push_back(V->name());
    std::vector<std::string> Keys = npzEntryNames(Names);
    for (size_t I = 0; I < Names.size(); ++I)
      if (Keys[I] != Names[I])
        Out << "  output '" << Names[I] << "' is entry '" << Keys[I]
            << "' (a zip entry cannot carry its name)\n";
  }
  char Buf[160];
  std::snprintf(Buf, sizeof(Buf),
                "time: optimize %.3f ms, compile %.3f ms, run %.3f ms",
                R.OptimizeMs, R.CompileMs, median(R.RunMs));
  Out << Buf;
  if (R.RunMs.size() > 1)
    Out << " (median of " << R.RunMs.size() << " runs)";
  Out << "\n";
  if (O.IdleMs > 0) {
    std::snprintf(Buf, sizeof(Buf),
                  "idle: %d ms after the last run, %.3f ms of CPU (%.1f%%)\n",
                  O.IdleMs, R.IdleCpuMs, 100.0 * R.IdleCpuMs / O.IdleMs);
    Out << Buf;
  }
#if NNGRAPH_HAVE_ONEDNN
  if (R.Cpu && O.Stats)
    printCpuStats(Out, *R.Cpu);
  if (R.Cpu && O.Profile)
    printProfile(Out, *R.Cpu);
#endif
  Out << R.Schedule;
}

void printJson(std::ostream &Out, const RunOptions &O, const ir::Graph &G,
               const DimBindings &Dims, const RunResult &R) {
  using nlohmann::json;
  auto Describe = [&](const ir::Value *V, const Tensor &T) {
    return json{{"name", V->name()},
                {"dtype", std::string(dtypeName(T.dtype()))},
                {"shape", T.shape().dims()}};
  };
  json J = setupJson(O.Model, G, Dims, {O.OptLevel, O.Seed, O.Backend},
                     R.LoadedNodes, R.Inputs, O.InputsPath);
  J["outputs"] = json::array();
  for (size_t I = 0; I < R.Outputs.size(); ++I) {
    json OJ = Describe(G.outputs()[I], R.Outputs[I]);
    OJ["numel"] = R.Outputs[I].numel();
    OJ["values"] = firstValues(R.Outputs[I], O.MaxValues);
    J["outputs"].push_back(std::move(OJ));
  }
  if (!O.SaveOutputsPath.empty()) {
    J["saved_outputs"] = O.SaveOutputsPath;
    std::vector<std::string> Names;
    for (const ir::Value *V : G.outputs())
      Names.push_back(V->name());
    std::vector<std::string> Keys = npzEntryNames(Names);
    nlohmann::json Entries = nlohmann::json::object();
    for (size_t I = 0; I < Names.size(); ++I)
      Entries[Names[I]] = Keys[I];
    J["saved_entries"] = Entries; // Output name -> its .npz entry.
  }
  if (O.IdleMs > 0)
    J["idle"] = {{"ms", O.IdleMs}, {"cpu_ms", R.IdleCpuMs}};
  J["time_ms"] = {{"optimize", R.OptimizeMs},
                  {"compile", R.CompileMs},
                  {"run_median", median(R.RunMs)},
                  {"runs", R.RunMs}};
#if NNGRAPH_HAVE_ONEDNN
  if (R.Cpu && O.Profile) {
    json P = json::array();
    for (const auto &T : R.Cpu->StepTimes)
      P.push_back({{"step", T.Desc},
                   {"ms_per_run", T.Ms / std::max<int64_t>(
                                             R.Cpu->ProfiledRuns, 1)}});
    J["profile"] = {{"runs", R.Cpu->ProfiledRuns}, {"steps", P}};
  }
  if (R.Cpu && O.Stats)
    J["stats"] = cpuStatsJson(*R.Cpu);
#endif
  if (O.PrintSchedule)
    J["schedule"] = R.Schedule;
  Out << J.dump(2) << "\n";
}

} // namespace

int runRunDriver(const std::vector<std::string> &Args, std::ostream &Out,
                 std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  RunOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;

  if (O.Threads > 0)
    nng::setNumThreads(O.Threads);
  DimBindings &Dims = O.Dims;
  try {
    const std::string_view Npz = ".npz";
    NNG_CHECK(O.SaveOutputsPath.empty() ||
                  (O.SaveOutputsPath.size() > Npz.size() &&
                   O.SaveOutputsPath.ends_with(Npz)),
              "--save-outputs '", O.SaveOutputsPath,
              "': the outputs are saved as an .npz archive; name the file "
              "FILE.npz");
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }

  // A large model's compile and long --repeat runs show progress; quick runs
  // print no progress lines into logs.
  Progress P(Err, ToolName, O.Quiet, std::chrono::milliseconds(1000));
  try {
    LoadedModel M = loadForRun(O.Model, O.InputsPath, Dims, P);
    std::unique_ptr<ir::Graph> &G = M.Graph;
    std::vector<std::string> OutputNames;
    for (const ir::Value *V : G->outputs())
      OutputNames.push_back(V->name());
    if (!O.SaveOutputsPath.empty())
      npzEntryNames(OutputNames); // Refused names fail before the run.
    RunResult R;
    R.LoadedNodes = M.LoadedNodes;
    CompiledModel C =
        optimizeAndCompile(M, Dims, {O.OptLevel, O.Seed, O.Backend}, P);
    std::unique_ptr<backends::Executable> Exe = std::move(C.Exe);
    R.Inputs = std::move(C.Inputs);
    R.OptimizeMs = C.OptimizeMs;
    R.CompileMs = C.CompileMs;
#if NNGRAPH_HAVE_ONEDNN
    if (O.Profile && !backends::setCpuProfiling(*Exe, true))
      fail(ErrorKind::InvalidArgument, "--profile times the cpu backend's "
           "steps; backend '", O.Backend, "' has none (use --backend cpu)");
#else
    if (O.Profile)
      fail(ErrorKind::InvalidArgument, "--profile needs the cpu backend, and "
           "this build has none (built without oneDNN)");
#endif
    P.begin("running", static_cast<size_t>(O.Repeat), "runs");
    for (int I = 0; I < O.Repeat; ++I) {
      auto Start = std::chrono::steady_clock::now();
      R.Outputs = Exe->run(R.Inputs);
      R.RunMs.push_back(millisSince(Start));
      P.advance(static_cast<size_t>(I + 1));
    }
    P.clear();
    if (O.IdleMs > 0) {
      double Before = processCpuMs();
      std::this_thread::sleep_for(std::chrono::milliseconds(O.IdleMs));
      R.IdleCpuMs = processCpuMs() - Before;
    }
#if NNGRAPH_HAVE_ONEDNN
    if (O.Stats || O.Profile)
      R.Cpu = backends::cpuExecutableStats(*Exe);
    if (O.PrintSchedule) {
      std::optional<std::string> S = backends::cpuSchedule(*Exe);
      if (!S)
        fail(ErrorKind::InvalidArgument, "--print-schedule prints the cpu "
             "backend's schedule; backend '", O.Backend, "' has none (use "
             "--backend cpu)");
      R.Schedule = *S;
    }
#else
    if (O.PrintSchedule)
      fail(ErrorKind::InvalidArgument, "--print-schedule needs the cpu "
           "backend, and this build has none (built without oneDNN)");
#endif
    if (!O.SaveOutputsPath.empty())
      saveOutputsNpz(O.SaveOutputsPath, OutputNames, R.Outputs);
    if (O.Json)
      printJson(Out, O, *G, Dims, R);
    else
      printText(Out, O, *G, Dims, R);
    Out.flush();
    return ExitSuccess;
  } catch (const std::exception &E) {
    P.clear();
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace nng::tools
