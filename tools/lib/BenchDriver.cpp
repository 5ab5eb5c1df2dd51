//===- BenchDriver.cpp - The nngraph-bench driver -------------------------===//
//
// Command line -> load the model -> make its inputs (deterministic, or the
// arrays of --inputs FILE.npz) -> optimize (-O, -O2 by default) -> compile
// and specialise for the inputs (timed) -> --vs-ort: start ONNX Runtime on
// the same model (an .nng model is exported to ONNX first) and inputs ->
// warm-up runs of each engine -> rounds: R timed runs of nngraph, then R of
// ONNX Runtime, K times -> compare the outputs -> report latency
// percentiles, throughput, compile time and peak memory, and the ratio
// table, as text or JSON. Progress goes to the error stream. With
// --dim-range or --shapes, the timed runs are a list of requests, each at
// its own shape (BenchShapes.h), and the report adds the new-shape cost.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/BenchDriver.h"
#include "BenchShapes.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "OrtPeer.h"
#include "Progress.h"
#include "RunSetup.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"
#include "nngraph/tools/CpuStatsReport.h"
#include "nngraph/tools/InputData.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#ifndef NNGRAPH_ORT_PEER_SCRIPT
#define NNGRAPH_ORT_PEER_SCRIPT "ort_peer.mjs"
#endif

namespace nng::tools {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char *ToolName = "nngraph-bench";

struct BenchOptions {
  std::string Model;
  std::string Backend = NNGRAPH_HAVE_ONEDNN ? "cpu" : "reference";
  DimBindings Dims; ///< --dim, bound as parsed.
  std::string InputsPath;
  uint64_t Seed = 0;
  int OptLevel = 2;
  int Threads = 0; ///< 0: the process default.
  int Warmup = 2, Runs = 10, Rounds = 3;
  bool Json = false, Quiet = false, Stats = false, VsOrt = false;
  std::string OrtScript;
  double Tolerance = 1e-3;
  int PauseMs = 100; ///< Between the engines' turns (--vs-ort).
  std::vector<std::string> DimRangeTexts; ///< --dim-range.
  std::string ShapesPath;                 ///< --shapes.
  uint64_t ShapeSeed = 0;
  /// A list of requests at varying shapes instead of repeated runs.
  bool shapeList() const {
    return !DimRangeTexts.empty() || !ShapesPath.empty();
  }
};

void describeOptions(CLI::App &App, BenchOptions &O) {
  App.description(
      "nngraph-bench: measure a model on a backend: compile time, latency "
      "percentiles (p50/p90/p99) over timed runs after warm-up runs, "
      "throughput and peak memory; with --vs-ort, side by side with ONNX "
      "Runtime on the same inputs.");
  App.add_option("model", O.Model,
                 "Model to measure: .nng (text format) or .onnx.\n"
                 "  e.g. nngraph-bench examples/models/small_cnn.nng")
      ->required();
  addBackendOption(App, O.Backend, "Backend to run on",
                   "nngraph-bench model.onnx --backend reference");
  addDimOption(App, O.Dims, "", "nngraph-bench model.onnx --dim N=8");
  CLI::Option *Seed =
      App.add_option("--input-seed", O.Seed,
                     "Seed of the pseudo-random inputs (as nngraph-run's); "
                     "default 0.")
          ->option_text("S");
  CLI::Option *Inputs =
      App.add_option("--inputs", O.InputsPath,
                     "Run on the arrays of FILE.npz (one per graph input, "
                     "named after it) instead of pseudo-random inputs.")
          ->excludes(Seed)
          ->option_text("FILE.npz");
  addOptLevelOption(App, O.OptLevel,
                    "run before compiling; default 2, as nngraph-run");
  addThreadsOption(App, O.Threads, "also ONNX Runtime's intra-op threads");
  App.add_option("--warmup", O.Warmup,
                 "Untimed runs after compiling, per engine; default 2.")
      ->check(CLI::Range(0, 1000000))
      ->option_text("W");
  App.add_option("--runs", O.Runs, "Timed runs per round; default 10.")
      ->check(CLI::Range(1, 1000000))
      ->option_text("R");
  App.add_option("--rounds", O.Rounds,
                 "Rounds of R timed runs; with --vs-ort the engines take "
                 "turns round by round; default 3.\n"
                 "  e.g. nngraph-bench model.onnx --runs 20 --rounds 5")
      ->check(CLI::Range(1, 100000))
      ->option_text("K");
  App.add_flag("--stats", O.Stats,
               "Also report what the cpu backend did per run (steps, "
               "oneDNN primitives, fused nodes, arena bytes).");
  CLI::Option *VsOrt =
      App.add_flag("--vs-ort", O.VsOrt,
                   "Run ONNX Runtime (npm onnxruntime-node, CPU EP, same "
                   "threads) on the same model and inputs, interleaved round "
                   "by round; check the outputs agree and print min and median "
                   "per engine and their ratios (nngraph / ORT). An .nng model "
                   "is exported to ONNX for it. Needs node and "
                   "`scripts/setup.sh --tests`.\n"
                   "  e.g. nngraph-bench model.onnx --vs-ort");
  CLI::Option *Range =
      App.add_option(
             "--dim-range", O.DimRangeTexts,
             "Shape-list mode: the timed runs are R x K requests (--runs x "
             "--rounds), each at its own shape: NAME drawn uniformly from "
             "LO..HI (both included) per request, from a stream seeded by "
             "--shape-seed (repeatable, one per dim; other dims as --dim). "
             "The first run at a shape new to the process is followed by a "
             "repeat run; the report gives per-request latency and the "
             "new-shape cost (first minus repeat run).\n"
             "  e.g. nngraph-bench encoder.onnx --dim-range S=8:256 "
             "--dim N=4")
          ->option_text("NAME=LO:HI")
          ->excludes(Inputs)
          ->excludes(VsOrt);
  App.add_option("--shapes", O.ShapesPath,
                 "Shape-list mode with the requests of FILE, in order, once "
                 "per round (--rounds): one request per line, NAME=VALUE "
                 "bindings separated by spaces or commas (\"S=17 N=2\"); "
                 "blank lines and # comments are skipped; dims a line does "
                 "not bind are --dim's, else 1.\n"
                 "  e.g. nngraph-bench encoder.onnx --shapes requests.txt "
                 "--rounds 1")
      ->option_text("FILE")
      ->excludes(Inputs)
      ->excludes(VsOrt)
      ->excludes(Range);
  App.add_option("--shape-seed", O.ShapeSeed,
                 "Seed of the shapes --dim-range draws; default 0.")
      ->option_text("S");
  App.add_option("--ort-script", O.OrtScript,
                 "The ONNX Runtime side of --vs-ort; default "
                 "$NNGRAPH_ORT_SCRIPT, else tools/nngraph-bench/ort_peer.mjs "
                 "of the source tree. node is $NNGRAPH_NODE, else node on "
                 "PATH.")
      ->option_text("FILE.mjs");
  App.add_option("--pause", O.PauseMs,
                 "--vs-ort: idle MS milliseconds whenever the engines take "
                 "turns, so that one's worker threads, still spinning after "
                 "its runs, do not slow the other's first runs; default "
                 "100.")
      ->check(CLI::Range(0, 60000))
      ->option_text("MS");
  App.add_option("--tolerance", O.Tolerance,
                 "--vs-ort: outputs agree when |a - b| <= T + T*|b| "
                 "everywhere; default 1e-3.")
      ->check(CLI::PositiveNumber)
      ->option_text("T");
  App.add_flag("--json", O.Json,
               "Print one JSON object (latency_ms with min/p50/p90/p99/max/"
               "mean and every run, throughput, memory, time_ms, ort) "
               "instead of text.");
  addQuietFlag(App, O.Quiet);
  App.set_version_flag("--version",
                       std::string(ToolName) + " " +
                           std::string(toolsVersion()) + "\n" +
                           nng::buildDescription(),
                       "Print the version and exit.");
  addExitStatusHelp(
      App,
      "the model or --inputs cannot be loaded or run (by nngraph, or by ONNX "
      "Runtime with --vs-ort)",
      "",
      {{ExitOrtUnavailable, "--vs-ort but ONNX Runtime is not installed "
                            "(nngraph's part is still reported)"},
       {ExitOutputsDiffer,
        "--vs-ort and the outputs differ beyond --tolerance"}});
}

/// A "VmRSS"/"VmHWM" line of /proc/self/status in bytes; for VmHWM,
/// getrusage's high-water mark when /proc is not there; else 0.
int64_t memoryBytes(const std::string &Key) {
  std::ifstream IS("/proc/self/status");
  std::string Line;
  while (std::getline(IS, Line))
    if (Line.rfind(Key + ":", 0) == 0)
      return std::atoll(Line.c_str() + Key.size() + 1) * 1024;
  if (Key != "VmHWM")
    return 0;
  rusage U{};
  getrusage(RUSAGE_SELF, &U);
  return static_cast<int64_t>(U.ru_maxrss) * 1024;
}

/// How the two engines' outputs compare.
struct Agreement {
  bool Agree = true;
  double MaxAbsDiff = 0;
  std::string Problem; ///< The first difference beyond the tolerance.
};

Agreement compareOutputs(const ir::Graph &G, const std::vector<Tensor> &Ours,
                         const std::vector<Tensor> &Theirs, double Tol) {
  Agreement A;
  if (Ours.size() != Theirs.size()) {
    A.Agree = false;
    A.Problem = "nngraph gave " + std::to_string(Ours.size()) +
                " outputs, ONNX Runtime " + std::to_string(Theirs.size());
    return A;
  }
  for (size_t I = 0; I < Ours.size(); ++I) {
    std::string Name = G.outputs()[I]->name();
    if (Ours[I].shape() != Theirs[I].shape()) {
      A.Agree = false;
      A.Problem = "output '" + Name + "': nngraph's shape is " +
                  Ours[I].shape().toString() + ", ONNX Runtime's " +
                  Theirs[I].shape().toString();
      return A;
    }
    for (int64_t J = 0; J < Ours[I].numel(); ++J) {
      double X = Ours[I].getFlat(J), Y = Theirs[I].getFlat(J);
      double D = std::fabs(X - Y);
      if (std::isnan(X) != std::isnan(Y))
        D = INFINITY;
      else if (std::isnan(X) || X == Y)
        D = 0;
      A.MaxAbsDiff = std::max(A.MaxAbsDiff, D);
      if (D > Tol + Tol * std::fabs(Y) && A.Agree) {
        A.Agree = false;
        A.Problem = "output '" + Name + "', element " + std::to_string(J) +
                    ": nngraph " + fixed(X, 6) + ", ONNX Runtime " +
                    fixed(Y, 6);
      }
    }
  }
  return A;
}

/// What ONNX Runtime did under --vs-ort.
struct OrtResult {
  bool Available = false;
  bool Failed = false; ///< It was there but could not run the model.
  std::string Reason;  ///< Why it is not available, or how it failed.
  std::string Version;
  std::string ModelPath; ///< The .onnx it ran ("" for a temporary export).
  double CompileMs = 0;
  std::vector<double> RunMs;
  int64_t PeakRss = 0;
  Agreement Outputs;
};

/// Everything measured.
struct BenchResult {
  size_t LoadedNodes = 0;
  std::vector<Tensor> Inputs, Outputs;
  double OptimizeMs = 0, CompileMs = 0;
  std::vector<double> RunMs; ///< Every timed run, in order.
  int64_t RssBefore = 0, PeakRss = 0;
#if NNGRAPH_HAVE_ONEDNN
  std::optional<backends::CpuExecutableStats> Cpu;
#endif
  std::optional<OrtResult> Ort;
  /// Shape-list mode: the requests as run, in order (RunMs holds their
  /// runs' times too).
  std::vector<ShapeRun> ShapeRuns;
  ShapeListSource Shapes;
  int64_t Specializations = -1; ///< The cpu backend's; -1: not known.
  int64_t Reshapes = -1;        ///< Its programs reshaped; -1: not known.
};

/// The batch of a run: dim 0 of the first input (1 for a scalar or none).
int64_t batchOf(const std::vector<Tensor> &Inputs) {
  if (Inputs.empty() || Inputs[0].shape().rank() == 0)
    return 1;
  return Inputs[0].shape().dims()[0];
}

std::string mib(int64_t Bytes) {
  return fixed(static_cast<double>(Bytes) / (1024.0 * 1024.0), 1) + " MiB";
}

void printText(std::ostream &Out, const BenchOptions &O, const ir::Graph &G,
               const DimBindings &Dims, const BenchResult &R) {
  Out << "model: " << O.Model << " (graph \"" << G.name() << "\", "
      << R.LoadedNodes << " nodes; -O" << O.OptLevel << ": " << G.numNodes()
      << " nodes)\n";
  Out << "backend: " << O.Backend << " (" << nng::numThreads()
      << (nng::numThreads() == 1 ? " thread" : " threads") << ")";
  if (std::string D = dimsText(G, Dims); !D.empty())
    Out << ", dims:" << D
        << (O.shapeList() ? " (the warm-up's; each request binds its own)"
                          : "");
  Out << "\n";
  printInputLines(Out, G, R.Inputs, O.InputsPath, O.Seed);
  Out << "compile: optimize " << fixed(R.OptimizeMs) << " ms, compile "
      << fixed(R.CompileMs) << " ms\n";
  if (O.shapeList()) {
    printShapeListText(Out, R.Shapes, R.ShapeRuns, O.Rounds, R.Specializations,
                       R.Reshapes);
    Out << "memory: peak RSS " << mib(R.PeakRss) << " (" << mib(R.RssBefore)
        << " before loading the model)\n";
    return;
  }
  Latency L = summarize(R.RunMs);
  Out << "latency: " << R.RunMs.size() << " runs (" << O.Rounds
      << (O.Rounds == 1 ? " round" : " rounds") << " of " << O.Runs
      << ", after " << O.Warmup << " warm-up): min " << fixed(L.Min)
      << " ms, p50 " << fixed(L.P50) << " ms, p90 " << fixed(L.P90)
      << " ms, p99 " << fixed(L.P99) << " ms, max " << fixed(L.Max)
      << " ms, mean " << fixed(L.Mean) << " ms\n";
  int64_t Batch = batchOf(R.Inputs);
  double Ips = L.Mean > 0 ? 1000.0 / L.Mean : 0;
  Out << "throughput: " << fixed(Ips, 1) << " inferences/s";
  if (Batch != 1)
    Out << " (" << fixed(Ips * static_cast<double>(Batch), 1)
        << " samples/s at batch " << Batch << ")";
  Out << "\n";
  Out << "memory: peak RSS " << mib(R.PeakRss) << " (" << mib(R.RssBefore)
      << " before loading the model)";
#if NNGRAPH_HAVE_ONEDNN
  if (R.Cpu && R.Cpu->Compiled)
    Out << ", arena " << R.Cpu->ArenaBytes << " bytes";
#endif
  Out << "\n";
#if NNGRAPH_HAVE_ONEDNN
  if (R.Cpu && O.Stats)
    printCpuStats(Out, *R.Cpu);
#endif
  if (!R.Ort)
    return;
  const OrtResult &T = *R.Ort;
  if (!T.Available) {
    Out << "vs ONNX Runtime: " << (T.Failed ? "failed: " : "not available: ")
        << T.Reason << "\n";
    return;
  }
  Latency M = summarize(T.RunMs);
  Out << "vs ONNX Runtime " << T.Version << " (onnxruntime-node, CPU EP, "
      << nng::numThreads() << (nng::numThreads() == 1 ? " thread" : " threads")
      << "; " << O.Rounds << " interleaved "
      << (O.Rounds == 1 ? "round" : "rounds") << " of " << O.Runs
      << " runs each):\n";
  char Buf[200];
  auto Row = [&](const char *Name, double C, double Mn, double Md, double P9,
                 const std::string &Rss) {
    std::snprintf(Buf, sizeof(Buf),
                  "  %-16s %12.3f %10.3f %10.3f %10.3f %14s\n", Name, C, Mn, Md,
                  P9, Rss.c_str());
    Out << Buf;
  };
  std::snprintf(Buf, sizeof(Buf), "  %-16s %12s %10s %10s %10s %14s\n",
                "engine", "compile ms", "min ms", "median ms", "p90 ms",
                "peak RSS");
  Out << Buf;
  std::string Ours = "nngraph " + O.Backend;
  Row(Ours.c_str(), R.CompileMs, L.Min, L.P50, L.P90, mib(R.PeakRss));
  Row("ONNX Runtime", T.CompileMs, M.Min, M.P50, M.P90, mib(T.PeakRss));
  auto Ratio = [](double A, double B) { return B > 0 ? A / B : 0.0; };
  Row("nngraph / ORT", Ratio(R.CompileMs, T.CompileMs), Ratio(L.Min, M.Min),
      Ratio(L.P50, M.P50), Ratio(L.P90, M.P90),
      fixed(
          Ratio(static_cast<double>(R.PeakRss), static_cast<double>(T.PeakRss)),
          3));
  double RMed = Ratio(L.P50, M.P50);
  Out << "ratio of medians nngraph / ORT: " << fixed(RMed) << " ("
      << (RMed <= 1
              ? "nngraph " + fixed(RMed > 0 ? 1 / RMed : 0, 2) + "x as fast"
              : "ONNX Runtime " + fixed(RMed, 2) + "x as fast")
      << ")\n";
  Out << "outputs: "
      << (T.Outputs.Agree ? "agree" : "DIFFER: " + T.Outputs.Problem)
      << " (max |diff| " << T.Outputs.MaxAbsDiff << ", tolerance "
      << O.Tolerance << ")\n";
}

void printJson(std::ostream &Out, const BenchOptions &O, const ir::Graph &G,
               const DimBindings &Dims, const BenchResult &R) {
  json J = setupJson(O.Model, G, Dims, {O.OptLevel, O.Seed, O.Backend},
                     R.LoadedNodes, R.Inputs, O.InputsPath);
  J["warmup"] = O.Warmup;
  J["rounds"] = O.Rounds;
  J["runs_per_round"] = O.Runs;
  J["runs"] = R.RunMs.size();
  J["time_ms"] = {{"optimize", R.OptimizeMs}, {"compile", R.CompileMs}};
  Latency L = summarize(R.RunMs);
  J["latency_ms"] = latencyJson(L);
  if (O.shapeList()) {
    // The requests' shapes differ: no single batch or throughput.
    J.erase("runs_per_round");
    J["shapes"] = shapeListJson(R.Shapes, R.ShapeRuns, R.Specializations,
                                R.Reshapes);
    J["memory"] = {{"rss_before_bytes", R.RssBefore},
                   {"peak_rss_bytes", R.PeakRss}};
    Out << J.dump(2) << "\n";
    return;
  }
  int64_t Batch = batchOf(R.Inputs);
  double Ips = L.Mean > 0 ? 1000.0 / L.Mean : 0;
  J["throughput"] = {{"inferences_per_s", Ips},
                     {"batch", Batch},
                     {"samples_per_s", Ips * static_cast<double>(Batch)}};
  J["memory"] = {{"rss_before_bytes", R.RssBefore},
                 {"peak_rss_bytes", R.PeakRss}};
#if NNGRAPH_HAVE_ONEDNN
  if (R.Cpu && R.Cpu->Compiled)
    J["memory"]["arena_bytes"] = R.Cpu->ArenaBytes;
  if (R.Cpu && O.Stats)
    J["stats"] = cpuStatsJson(*R.Cpu);
#endif
  if (R.Ort) {
    const OrtResult &T = *R.Ort;
    json OJ = {{"available", T.Available}};
    if (!T.Available) {
      OJ["failed"] = T.Failed;
      OJ["reason"] = T.Reason;
    } else {
      Latency M = summarize(T.RunMs);
      OJ["version"] = T.Version;
      OJ["model"] = T.ModelPath.empty() ? json("exported from " + O.Model)
                                        : json(T.ModelPath);
      OJ["compile_ms"] = T.CompileMs;
      OJ["latency_ms"] = latencyJson(M);
      OJ["peak_rss_bytes"] = T.PeakRss;
      OJ["ratio"] = {{"median", M.P50 > 0 ? L.P50 / M.P50 : 0.0},
                     {"min", M.Min > 0 ? L.Min / M.Min : 0.0}};
      OJ["outputs"] = {{"agree", T.Outputs.Agree},
                       {"max_abs_diff", T.Outputs.MaxAbsDiff},
                       {"tolerance", O.Tolerance}};
      if (!T.Outputs.Agree)
        OJ["outputs"]["problem"] = T.Outputs.Problem;
    }
    J["ort"] = std::move(OJ);
  }
  Out << J.dump(2) << "\n";
}

/// The ONNX Runtime script: --ort-script, $NNGRAPH_ORT_SCRIPT, the source
/// tree's, or the installed one (share/nngraph).
std::string ortScript(const BenchOptions &O) {
  if (!O.OrtScript.empty())
    return O.OrtScript;
  if (const char *S = std::getenv("NNGRAPH_ORT_SCRIPT"); S && *S)
    return S;
  return dataFile(NNGRAPH_ORT_PEER_SCRIPT, "tools/nngraph-bench/ort_peer.mjs");
}

/// A fresh temporary folder, removed when this goes out of scope.
class TempDir {
public:
  TempDir() {
    std::string Tmpl =
        (fs::temp_directory_path() / "nngraph-bench-XXXXXX").string();
    if (!mkdtemp(Tmpl.data()))
      fail(ErrorKind::IO, "cannot create a temporary folder in ",
           fs::temp_directory_path().string());
    Path = Tmpl;
  }
  ~TempDir() {
    std::error_code Ec;
    fs::remove_all(Path, Ec);
  }
  const std::string &path() const { return Path; }

private:
  std::string Path;
};

/// The shape list's requests: --shapes FILE's once per round, or R x K
/// drawn by --dim-range; empty without either. Every dim they bind must
/// be a symbolic dim of G's inputs.
std::vector<DimBindings> shapeRequests(const BenchOptions &O,
                                       const ShapeListSource &Src,
                                       const ir::Graph &G) {
  std::vector<DimBindings> Requests;
  if (!Src.File.empty()) {
    std::vector<DimBindings> File = readShapesFile(Src.File);
    for (int K = 0; K < O.Rounds; ++K)
      Requests.insert(Requests.end(), File.begin(), File.end());
  } else if (!Src.Ranges.empty()) {
    Requests = drawShapes(
        Src.Ranges, static_cast<size_t>(O.Runs) * static_cast<size_t>(O.Rounds),
        Src.ShapeSeed);
  }
  std::set<DimBindings> Checked;
  for (const DimBindings &D : Requests)
    if (Checked.insert(D).second)
      checkDimBindings(G, D);
  return Requests;
}

/// Shape-list mode's timed part: the requests in order, round by round, on
/// the executable warmed up at Base's shape.
void runShapeList(backends::Executable &Exe, const ir::Graph &G,
                  const DimBindings &Base, const BenchOptions &O,
                  const std::vector<DimBindings> &Requests, BenchResult &R,
                  Progress &P) {
  ShapeListRunner Runner(Exe, G, Base, O.Seed);
  Runner.markSeen({});
  size_t PerRound = Requests.size() / static_cast<size_t>(O.Rounds);
  for (int K = 0; K < O.Rounds; ++K) {
    std::vector<ShapeRun> Round;
    for (size_t I = 0; I < PerRound; ++I)
      Round.push_back(Runner.run(Requests[K * PerRound + I]));
    ShapeListSummary S = summarizeShapeList(Round);
    P.step("round " + std::to_string(K + 1) + "/" + std::to_string(O.Rounds) +
           ": " + std::to_string(Round.size()) + " requests, p50 " +
           fixed(S.Requests.P50) + " ms, " +
           std::to_string(S.NewCost.Runs.size()) + " new shapes");
    for (ShapeRun &Run : Round) {
      R.RunMs.push_back(Run.Ms);
      R.ShapeRuns.push_back(std::move(Run));
    }
  }
}

} // namespace

int runBenchDriver(const std::vector<std::string> &Args, std::ostream &Out,
                   std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  BenchOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;

  BenchResult R;
  R.RssBefore = memoryBytes("VmRSS");
  if (O.Threads > 0)
    nng::setNumThreads(O.Threads);
  DimBindings &Dims = O.Dims;
  try {
    for (const std::string &D : O.DimRangeTexts)
      R.Shapes.Ranges.push_back(parseDimRange(D));
    R.Shapes.File = O.ShapesPath;
    R.Shapes.ShapeSeed = O.ShapeSeed;
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }

  Progress P(Err, ToolName, O.Quiet);
  std::unique_ptr<ir::Graph> G;
  std::unique_ptr<TempDir> Work;
  std::unique_ptr<OrtPeer> Peer;
  // Runs F, which talks to ONNX Runtime, unless it failed before; a
  // failure there ends the peer and is reported after nngraph's results.
  auto withOrt = [&](const auto &F) {
    if (!R.Ort || R.Ort->Failed)
      return;
    try {
      F();
    } catch (const Error &E) {
      Peer.reset();
      R.Ort->Available = false;
      R.Ort->Failed = true;
      R.Ort->Reason = E.what();
    }
  };
  try {
    LoadedModel M = loadForRun(O.Model, O.InputsPath, Dims, P);
    R.LoadedNodes = M.LoadedNodes;
    std::vector<DimBindings> Requests = shapeRequests(O, R.Shapes, *M.Graph);
    std::string OrtModel = O.Model, ExportError;
    if (O.VsOrt) {
      Work = std::make_unique<TempDir>();
      if (frontend::formatForPath(O.Model) != frontend::ModelFormat::Onnx) {
        OrtModel = (fs::path(Work->path()) / "model.onnx").string();
        P.step("exporting " + O.Model + " to ONNX for ONNX Runtime");
        try {
          frontend::saveModel(*M.Graph, OrtModel);
        } catch (const Error &E) {
          ExportError = "cannot export " + O.Model +
                        " to ONNX for ONNX Runtime: " + E.what();
        }
      }
    }
    CompiledModel C =
        optimizeAndCompile(M, Dims, {O.OptLevel, O.Seed, O.Backend}, P);
    G = std::move(M.Graph);
    std::unique_ptr<backends::Executable> Exe = std::move(C.Exe);
    R.Inputs = std::move(C.Inputs);
    R.OptimizeMs = C.OptimizeMs;
    R.CompileMs = C.CompileMs;

    if (O.VsOrt) {
      R.Ort.emplace();
      R.Ort->ModelPath = OrtModel == O.Model ? OrtModel : "";
      OrtPeerOptions PO;
      PO.Node = "node";
      if (const char *N = std::getenv("NNGRAPH_NODE"); N && *N)
        PO.Node = N;
      PO.Script = ortScript(O);
      PO.Model = OrtModel;
      PO.WorkDir = Work->path();
      PO.Threads = nng::numThreads();
      if (!ExportError.empty())
        withOrt([&] { fail(ErrorKind::Unsupported, ExportError); });
      std::vector<std::string> Names;
      for (const ir::Value *V : G->inputs())
        Names.push_back(V->name());
      P.step("starting ONNX Runtime on " + OrtModel);
      withOrt([&] {
        Peer = OrtPeer::start(PO, Names, R.Inputs, R.Ort->Reason);
        R.Ort->Available = Peer != nullptr;
        if (Peer) {
          R.Ort->Version = Peer->version();
          R.Ort->CompileMs = Peer->compileMs();
        }
      });
    }

    std::string Engines = Peer ? "nngraph and ONNX Runtime" : "nngraph";
    auto Pause = [&] {
      if (Peer)
        std::this_thread::sleep_for(std::chrono::milliseconds(O.PauseMs));
    };
    if (O.Warmup > 0) {
      P.step("warming up " + Engines + " (" + std::to_string(O.Warmup) +
             " runs)");
      for (int I = 0; I < O.Warmup; ++I)
        R.Outputs = Exe->run(R.Inputs);
      Pause();
      if (Peer)
        withOrt([&] { Peer->run(O.Warmup); });
    }
    if (O.shapeList())
      runShapeList(*Exe, *G, Dims, O, Requests, R, P);
    for (int K = 0; K < O.Rounds && !O.shapeList(); ++K) {
      Pause();
      std::vector<double> Round;
      for (int I = 0; I < O.Runs; ++I) {
        auto Start = std::chrono::steady_clock::now();
        R.Outputs = Exe->run(R.Inputs);
        Round.push_back(millisSince(Start));
      }
      R.RunMs.insert(R.RunMs.end(), Round.begin(), Round.end());
      std::string Line = "round " + std::to_string(K + 1) + "/" +
                         std::to_string(O.Rounds) + ": nngraph median " +
                         fixed(summarize(Round).P50) + " ms";
      Pause();
      if (Peer)
        withOrt([&] {
          std::vector<double> Theirs = Peer->run(O.Runs);
          R.Ort->RunMs.insert(R.Ort->RunMs.end(), Theirs.begin(), Theirs.end());
          Line +=
              ", ONNX Runtime median " + fixed(summarize(Theirs).P50) + " ms";
        });
      P.step(Line);
    }
#if NNGRAPH_HAVE_ONEDNN
    R.Cpu = backends::cpuExecutableStats(*Exe);
    if (R.Cpu && R.Cpu->Compiled) {
      R.Specializations = R.Cpu->Specializations;
      R.Reshapes = R.Cpu->Reshapes;
    }
#endif
    if (Peer)
      withOrt([&] {
        P.step("comparing the outputs");
        R.Ort->Outputs =
            compareOutputs(*G, R.Outputs, Peer->outputs(), O.Tolerance);
        R.Ort->PeakRss = Peer->quit();
        Peer.reset();
      });
    R.PeakRss = memoryBytes("VmHWM");
  } catch (const std::exception &E) {
    P.clear();
    Peer.reset();
    printError(Err, ToolName, E);
    return ExitInputError;
  }
  P.clear();
  if (O.Json)
    printJson(Out, O, *G, Dims, R);
  else
    printText(Out, O, *G, Dims, R);
  Out.flush();
  if (R.Ort && R.Ort->Failed) {
    Err << ToolName << ": error: " << R.Ort->Reason << "\n";
    return ExitInputError;
  }
  if (R.Ort && !R.Ort->Available) {
    Err << ToolName << ": ONNX Runtime is not available: " << R.Ort->Reason
        << "\n";
    return ExitOrtUnavailable;
  }
  if (R.Ort && !R.Ort->Outputs.Agree)
    return ExitOutputsDiffer;
  return ExitSuccess;
}

} // namespace nng::tools
