//===- ConformanceDriver.cpp - The nngraph-onnx-conformance driver -------===//
//
// Command line -> discover test folders (each with model.onnx and
// test_data_set_*) under the given suite folders -> for each test: skip it
// when its model uses an operator of the skip file, else import the model,
// compile it on the backend, run every data set and compare the outputs ->
// one line per test, per-folder summaries, optional JSON report (to a file,
// or with --json - on stdout instead of the text) and baseline check;
// progress over the tests on stderr (Progress.h). With --isolate each test
// runs in a child process (this program with the hidden --run-one option), so
// a crash or a hang in one kernel fails that test only; --jobs runs tests
// concurrently. With --pipeline (e.g. O2) each imported model is optimized
// before it runs, so the suite checks that the passes keep the expected
// outputs.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ConformanceDriver.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "Conformance.h"
#include "Progress.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Strings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fs = std::filesystem;

namespace nng::tools {
namespace {
using namespace conformance;

std::string selfExe() {
  std::error_code Ec;
  fs::path P = fs::read_symlink("/proc/self/exe", Ec);
  return Ec ? std::string() : P.string();
}

/// Runs one test in a child process (this program with --run-one).
Outcome runIsolated(const TestCase &T, const Options &O,
                    const std::string &Exe) {
  auto Start = std::chrono::steady_clock::now();
  Outcome R;
  int Pipe[2];
  if (::pipe2(Pipe, O_CLOEXEC) != 0) {
    R.Message = std::string("cannot create a pipe: ") + std::strerror(errno);
    return R;
  }
  char Rtol[32], Atol[32];
  std::snprintf(Rtol, sizeof(Rtol), "%.17g", O.Rtol);
  std::snprintf(Atol, sizeof(Atol), "%.17g", O.Atol);
  std::vector<std::string> Args = {Exe,       "--run-one", T.Dir,   "--backend",
                                   O.Backend, "--skips",   O.Skips, "--rtol",
                                   Rtol,      "--atol",    Atol};
  if (!O.Pipeline.empty()) {
    Args.push_back("--pipeline");
    Args.push_back(O.Pipeline);
  }
  std::vector<char *> Argv;
  for (std::string &A : Args)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_adddup2(&FA, Pipe[1], 1);
  posix_spawn_file_actions_adddup2(&FA, Pipe[1], 2);
  pid_t Pid;
  int Rc = posix_spawn(&Pid, Exe.c_str(), &FA, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  ::close(Pipe[1]);
  if (Rc != 0) {
    ::close(Pipe[0]);
    R.Message = "cannot start '" + Exe + "': " + std::strerror(Rc);
    return R;
  }
  std::string Output;
  bool TimedOut = false;
  auto Deadline = Start + std::chrono::seconds(O.TimeoutS);
  char Buf[4096];
  for (;;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    Deadline - std::chrono::steady_clock::now())
                    .count();
    if (Left <= 0) {
      TimedOut = true;
      ::kill(Pid, SIGKILL);
      break;
    }
    pollfd P{Pipe[0], POLLIN, 0};
    int N = ::poll(&P, 1, static_cast<int>(std::min<long long>(Left, 1000)));
    if (N < 0 && errno != EINTR)
      break;
    if (N <= 0)
      continue;
    ssize_t Got = ::read(Pipe[0], Buf, sizeof(Buf));
    if (Got <= 0)
      break;
    if (Output.size() < (1u << 20))
      Output.append(Buf, static_cast<size_t>(Got));
  }
  ::close(Pipe[0]);
  int WStatus = 0;
  ::waitpid(Pid, &WStatus, 0);
  R.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (size_t NT = Output.rfind(NodesTag); !TimedOut && NT != std::string::npos)
    std::sscanf(Output.c_str() + NT + std::strlen(NodesTag), "%ld %ld",
                &R.NodesBefore, &R.NodesAfter);
  size_t Tag = Output.rfind(ResultTag);
  if (!TimedOut && Tag != std::string::npos) {
    std::string Line = Output.substr(Tag + std::strlen(ResultTag));
    Line = Line.substr(0, Line.find('\n'));
    std::string Word = Line.substr(0, 4);
    R.S = Word == "PASS"   ? Status::Pass
          : Word == "SKIP" ? Status::Skip
                           : Status::Fail;
    R.Message = Line.size() > 5 ? Line.substr(5) : "";
    return R;
  }
  R.S = Status::Fail;
  if (TimedOut) {
    R.Message = "timed out after " + std::to_string(O.TimeoutS) + " s";
    return R;
  }
  std::string Last(rt::trimSpace(Output));
  if (size_t NL = Last.rfind('\n'); NL != std::string::npos)
    Last = Last.substr(NL + 1);
  if (WIFSIGNALED(WStatus))
    R.Message = std::string("crashed (signal ") +
                std::to_string(WTERMSIG(WStatus)) + ": " +
                strsignal(WTERMSIG(WStatus)) + ")";
  else
    R.Message = "the test process exited with status " +
                std::to_string(WEXITSTATUS(WStatus)) + " and no result";
  if (!Last.empty())
    R.Message += "; last output: " + oneLine(Last.substr(0, 300));
  return R;
}

/// "folder N" lines, '#' comments.
std::map<std::string, int> loadBaseline(const std::string &Path) {
  std::map<std::string, int> B;
  std::ifstream In(Path);
  if (!In)
    return B;
  std::string Line;
  for (int LineNo = 1; std::getline(In, Line); ++LineNo) {
    Line = std::string(rt::trimSpace(Line));
    if (Line.empty() || Line[0] == '#')
      continue;
    std::istringstream SS(Line);
    std::string Folder;
    int N = -1;
    if (!(SS >> Folder >> N) || N < 0)
      fail(ErrorKind::Parse, Path, ":", LineNo, ": expected 'FOLDER COUNT'");
    B[Folder] = N;
  }
  return B;
}

void saveBaseline(const std::string &Path,
                  const std::map<std::string, int> &B) {
  std::ofstream Out(Path, std::ios::trunc);
  Out << "# ONNX conformance pass counts on the reference backend, per test\n"
         "# folder: a ratchet. The ctest 'onnx-conformance' fails when a "
         "folder\n# passes fewer tests; raise the numbers (never lower them) "
         "with\n#   nngraph-onnx-conformance --baseline FILE "
         "--update-baseline\n";
  for (const auto &[Folder, N] : B)
    Out << Folder << " " << N << "\n";
  if (!Out)
    fail(ErrorKind::IO, "cannot write the baseline file '", Path, "'");
}

struct Counts {
  int Pass = 0, Fail = 0, Skip = 0;
  /// With --pipeline: models the pipeline ran on, and their node totals.
  int Optimized = 0;
  long NodesBefore = 0, NodesAfter = 0;
  void add(const Outcome &R) {
    (R.S == Status::Pass ? Pass : R.S == Status::Fail ? Fail : Skip) += 1;
    if (R.NodesBefore >= 0 && R.NodesAfter >= 0) {
      ++Optimized;
      NodesBefore += R.NodesBefore;
      NodesAfter += R.NodesAfter;
    }
  }
};

std::string summary(const Counts &C, bool WithNodes = false) {
  std::string S = std::to_string(C.Pass) + " passed, " +
                  std::to_string(C.Fail) + " failed, " +
                  std::to_string(C.Skip) + " skipped";
  if (WithNodes)
    S += "; " + std::to_string(C.Optimized) + " models optimized, nodes " +
         std::to_string(C.NodesBefore) + " -> " + std::to_string(C.NodesAfter);
  return S;
}

/// A folder whose pass count differs from its --baseline count.
struct BaselineChange {
  std::string Folder;
  int Passed = 0, Baseline = 0;
};

/// The JSON report; with --json - printed on Out instead of the text.
void writeJson(const std::string &Path, std::ostream &Stdout, const Options &O,
               const std::vector<TestCase> &Tests,
               const std::vector<Outcome> &Results,
               const std::map<std::string, Counts> &PerFolder,
               const Counts &Total, double Seconds,
               const std::vector<BaselineChange> &Changes) {
  using nlohmann::json;
  json J;
  std::time_t Now = std::time(nullptr);
  char Date[32];
  std::strftime(Date, sizeof(Date), "%Y-%m-%d", std::localtime(&Now));
  J["date"] = Date;
  J["backend"] = O.Backend;
  J["rtol"] = O.Rtol;
  J["atol"] = O.Atol;
  if (!O.Pipeline.empty())
    J["pipeline"] = O.Pipeline;
  auto CountsJ = [&](const Counts &C) {
    json CJ{{"passed", C.Pass}, {"failed", C.Fail}, {"skipped", C.Skip}};
    if (!O.Pipeline.empty()) {
      CJ["optimized"] = C.Optimized;
      CJ["nodes_before"] = C.NodesBefore;
      CJ["nodes_after"] = C.NodesAfter;
    }
    return CJ;
  };
  J["folders"] = json::object();
  for (const auto &[F, C] : PerFolder)
    J["folders"][F] = CountsJ(C);
  J["total"] = CountsJ(Total);
  J["tests"] = json::array();
  for (size_t I = 0; I < Tests.size(); ++I)
    J["tests"].push_back({{"name", Tests[I].Name},
                          {"folder", Tests[I].Folder},
                          {"status", statusName(Results[I].S)},
                          {"message", Results[I].Message},
                          {"seconds", Results[I].Seconds}});
  J["seconds"] = Seconds;
  if (!O.Baseline.empty()) {
    J["baseline"] = {{"file", O.Baseline}, {"changes", json::array()}};
    for (const BaselineChange &C : Changes)
      J["baseline"]["changes"].push_back(
          {{"folder", C.Folder},
           {"passed", C.Passed},
           {"baseline", C.Baseline},
           {"status", C.Passed < C.Baseline ? "regression" : "raised"}});
  }
  if (Path == "-") {
    Stdout << J.dump(1) << "\n";
    return;
  }
  std::ofstream Out(Path, std::ios::trunc);
  Out << J.dump(1) << "\n";
  if (!Out)
    fail(ErrorKind::IO, "cannot write the JSON report '", Path, "'");
}

void describeOptions(CLI::App &App, Options &O) {
  App.description(
      "nngraph-onnx-conformance: run ONNX backend test folders (model.onnx + "
      "test_data_set_*) on a backend and compare with ONNX's tolerances.");
  App.add_option("dirs", O.Dirs,
                 "Suite folders holding test folders, or test folders; "
                 "default: node, simple, pytorch-converted and "
                 "pytorch-operator under " +
                     std::string(DefaultRoot) + ".")
      ->option_text("DIR...");
  addBackendOption(App, O.Backend, "Backend to run on");
  App.add_option("--filter", O.Filter,
                 "Run only tests whose name ('node/test_abs') matches REGEX.\n"
                 "  e.g. --filter 'node/test_conv'")
      ->option_text("REGEX");
  App.add_option("--json", O.Json,
                 "Also write a JSON report (date, backend, total and per-"
                 "folder counts, every test's status, baseline changes) to "
                 "FILE; with '-', print it on stdout instead of the text "
                 "report.")
      ->option_text("FILE|-");
  App.add_option("--skips", O.Skips,
                 "Skip file: 'OP[, OP...]: reason' lines naming operators "
                 "deliberately out of scope" +
                     std::string(*DefaultSkips ? "; default " : "") +
                     DefaultSkips + ".")
      ->option_text("FILE");
  App.add_option("--baseline", O.Baseline,
                 "Per-folder pass counts ('FOLDER COUNT' lines); exit 1 when "
                 "a folder passes fewer tests.")
      ->option_text("FILE");
  App.add_flag("--update-baseline", O.UpdateBaseline,
               "Raise the --baseline counts to this run's where higher "
               "(never lowers them).");
  App.add_option("-j,--jobs", O.Jobs, "Run N tests at a time; default 1.")
      ->check(CLI::Range(1, 256))
      ->option_text("N");
  App.add_flag("--isolate", O.Isolate,
               "Run each test in a child process: a crash or hang fails that "
               "test only.");
  App.add_option("--timeout", O.TimeoutS,
                 "With --isolate, fail a test after S seconds; default 120.")
      ->check(CLI::Range(1, 86400))
      ->option_text("S");
  App.add_option("--rtol", O.Rtol, "Relative tolerance; default 1e-3.");
  App.add_option("--atol", O.Atol, "Absolute tolerance; default 1e-7.");
  addQuietFlag(App, O.Quiet, "of the per-test lines, only FAIL lines print");
  App.add_option("--pipeline", O.Pipeline,
                 "Run these passes (or a level: O0, O1, O2, the -O pipeline "
                 "for --backend) on each model "
                 "before it runs; a model that fails to import is skipped. "
                 "Summaries add node totals before and after.")
      ->type_name("PIPELINE");
  App.add_option("--run-one", O.RunOne)->group(""); // Internal (--isolate).
  addExitStatusHelp(App, "a test failed (with --baseline: a folder passes "
                         "fewer tests than its baseline), or a report "
                         "cannot be written");
}

} // namespace

std::string compareTensors(const std::string &Name,
                           const Tensor &Actual,
                           const Tensor &Expected, double Rtol,
                           double Atol) {
  std::string Out = "output '" + Name + "'";
  if (Actual.dtype() != Expected.dtype())
    return Out + " has dtype " + std::string(dtypeName(Actual.dtype())) +
           ", expected " + std::string(dtypeName(Expected.dtype()));
  if (Actual.shape() != Expected.shape())
    return Out + " has shape " + Actual.shape().toString() + ", expected " +
           Expected.shape().toString();
  int64_t N = Expected.numel();
  if (isString(Expected.dtype())) { // Strings compare exactly.
    std::vector<std::string> A = Actual.toStrings(), E = Expected.toStrings();
    int64_t Differ = 0, First = -1;
    for (int64_t I = 0; I < N; ++I)
      if (A[I] != E[I] && Differ++ == 0)
        First = I;
    if (!Differ)
      return "";
    return Out + " differs at index " + std::to_string(First) + ": got " +
           rt::quoteForDisplay(A[First]) + ", expected " +
           rt::quoteForDisplay(E[First]) + " (" + std::to_string(Differ) +
           " of " + std::to_string(N) + " strings differ)";
  }
  bool Float = isFloatingPoint(Expected.dtype());
  // The spacing of the output dtype's values at Y for the 16-bit floats:
  // a result one unit in the last place away is a rounding-mode
  // difference (ONNX 1.12's data truncates f32 to bf16, where nngraph and
  // later ONNX round to nearest even), which rtol 1e-3 cannot absorb for
  // bf16's 8-bit significand.
  int UlpBits = Expected.dtype() == DType::BF16  ? 7
                : Expected.dtype() == DType::F16 ? 10
                                                 : 0;
  auto Ulp = [&](double Y) {
    return UlpBits && Y != 0 ? std::ldexp(1.0, std::ilogb(Y) - UlpBits) : 0.0;
  };
  int64_t Bad = 0, Worst = -1;
  double WorstErr = -1, Got = 0, Want = 0;
  auto Note = [&](int64_t I, double Err, double A, double E) {
    ++Bad;
    if (Err > WorstErr) {
      WorstErr = Err;
      Worst = I;
      Got = A;
      Want = E;
    }
  };
  if (Expected.dtype() == DType::I64 || Expected.dtype() == DType::U64) {
    std::vector<int64_t> A = Actual.toIntVector(), E = Expected.toIntVector();
    for (int64_t I = 0; I < N; ++I)
      if (A[I] != E[I])
        Note(I,
             std::fabs(static_cast<double>(A[I]) - static_cast<double>(E[I])),
             static_cast<double>(A[I]), static_cast<double>(E[I]));
  } else {
    std::vector<double> A = Actual.toDoubleVector(),
                        E = Expected.toDoubleVector();
    for (int64_t I = 0; I < N; ++I) {
      double X = A[I], Y = E[I];
      if (!Float) {
        if (X != Y)
          Note(I, std::fabs(X - Y), X, Y);
        continue;
      }
      if (std::isnan(Y) || std::isnan(X)) {
        if (std::isnan(X) != std::isnan(Y))
          Note(I, INFINITY, X, Y);
        continue;
      }
      if (std::isinf(Y) || std::isinf(X)) {
        if (X != Y)
          Note(I, INFINITY, X, Y);
        continue;
      }
      double Err = std::fabs(X - Y);
      if (Err > std::max(Atol + Rtol * std::fabs(Y), Ulp(Y)))
        Note(I, Err, X, Y);
    }
  }
  if (!Bad)
    return "";
  char Buf[256];
  std::snprintf(Buf, sizeof(Buf),
                " max abs error %.6g at index %lld (got %.9g, expected %.9g; "
                "%lld of %lld values differ",
                WorstErr, static_cast<long long>(Worst), Got, Want,
                static_cast<long long>(Bad), static_cast<long long>(N));
  Out += Buf;
  if (Float) {
    std::snprintf(Buf, sizeof(Buf), " beyond rtol %g, atol %g", Rtol, Atol);
    Out += Buf;
  }
  return Out + ")";
}

int runConformanceDriver(const std::vector<std::string> &Args,
                         std::ostream &Out, std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  Options O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;

  SkipList Skips;
  std::vector<TestCase> Tests;
  std::string Exe;
  try {
    // The compiled-in default is the source tree's list, else the installed
    // one (share/nngraph/conformance/skips.txt); without either, no skips.
    std::error_code Ec;
    if (O.Skips == DefaultSkips) {
      O.Skips = dataFile(DefaultSkips, "conformance/skips.txt");
      if (!fs::exists(O.Skips, Ec))
        O.Skips.clear();
    }
    Skips = loadSkips(O.Skips);
    if (!O.RunOne.empty()) {
      fs::path P = fs::absolute(O.RunOne).lexically_normal();
      if (P.filename().empty())
        P = P.parent_path();
      TestCase T{P.parent_path().filename(), P.filename(), P.string()};
      Outcome R = runTest(T, Skips, O);
      if (R.NodesBefore >= 0)
        Out << NodesTag << R.NodesBefore << " " << R.NodesAfter << "\n";
      Out << ResultTag << statusName(R.S) << " " << R.Message << std::endl;
      return ExitSuccess;
    }
    if (!O.Filter.empty() && !O.Baseline.empty())
      fail(ErrorKind::InvalidArgument,
           "--baseline needs the whole suite; drop --filter");
    if (O.Dirs.empty())
      for (const char *F : DefaultFolders)
        O.Dirs.push_back(std::string(DefaultRoot) + "/" + F);
    if (!O.Pipeline.empty()) {
      // Checks every pass name and option before any test runs.
      passes::PassManager PM;
      PM.addPipeline(passes::resolvePipeline(O.Pipeline, O.Backend));
    }
    Tests = discover(O.Dirs, O.Filter);
    if (O.Isolate) {
      Exe = selfExe();
      if (Exe.empty())
        fail(ErrorKind::IO, "--isolate: cannot find this program's path");
    }
  } catch (const std::regex_error &E) {
    Err << ToolName << ": error: --filter: bad regular expression: " << E.what()
        << "\n";
    return ExitUsageError;
  } catch (const Error &E) {
    Err << ToolName << ": error: " << E.what() << "\n";
    return E.kind() == ErrorKind::IO ? ExitInputError : ExitUsageError;
  }

  auto Start = std::chrono::steady_clock::now();
  std::vector<Outcome> Results(Tests.size());
  std::vector<char> Done(Tests.size(), 0);
  std::mutex M;
  std::condition_variable CV;
  std::atomic<size_t> Next{0};
  auto Worker = [&] {
    for (size_t I; (I = Next++) < Tests.size();) {
      Outcome R = O.Isolate ? runIsolated(Tests[I], O, Exe)
                            : runTest(Tests[I], Skips, O);
      std::lock_guard<std::mutex> L(M);
      Results[I] = std::move(R);
      Done[I] = 1;
      CV.notify_all();
    }
  };
  std::vector<std::thread> Pool;
  for (int J = 0; J < std::min<int>(O.Jobs, static_cast<int>(Tests.size()));
       ++J)
    Pool.emplace_back(Worker);
  std::map<std::string, Counts> PerFolder;
  Counts Total;
  bool JsonOut = O.Json == "-";
  Progress P(Err, ToolName, O.Quiet);
  P.begin("running tests", Tests.size(), "tests");
  for (size_t I = 0; I < Tests.size(); ++I) {
    {
      std::unique_lock<std::mutex> L(M);
      CV.wait(L, [&] { return Done[I] != 0; });
    }
    const Outcome &R = Results[I];
    PerFolder[Tests[I].Folder].add(R);
    Total.add(R);
    if (!JsonOut && (!O.Quiet || R.S == Status::Fail)) {
      P.clear();
      Out << statusName(R.S) << " " << Tests[I].Name;
      if (!R.Message.empty())
        Out << ": " << R.Message;
      Out << "\n" << std::flush;
    }
    P.advance(I + 1, Tests[I].Name);
  }
  P.clear();
  for (std::thread &T : Pool)
    T.join();
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();

  int Status = Total.Fail ? ExitInputError : ExitSuccess;
  // The text report goes to a buffer that --json - drops.
  std::ostringstream Text;
  bool TextShown = false;
  try {
    for (const auto &[F, C] : PerFolder)
      Text << F << ": " << summary(C, !O.Pipeline.empty()) << "\n";
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), " (%.1f s)", Seconds);
    Text << summary(Total, !O.Pipeline.empty()) << Buf << "\n";
    std::vector<BaselineChange> Changes;
    if (!O.Baseline.empty()) {
      std::map<std::string, int> Base = loadBaseline(O.Baseline);
      Status = ExitSuccess;
      bool Raised = false;
      for (const auto &[F, C] : PerFolder) {
        auto It = Base.find(F);
        int Want = It == Base.end() ? 0 : It->second;
        if (C.Pass != Want)
          Changes.push_back({F, C.Pass, Want});
        if (C.Pass < Want) {
          Text << "REGRESSION " << F << ": " << C.Pass << " passed, baseline "
               << Want << "\n";
          Status = ExitInputError;
        } else if (C.Pass > Want) {
          Text << "baseline " << F << ": " << C.Pass << " passed > " << Want
               << (O.UpdateBaseline ? " (raised)"
                                    : " (raise it with "
                                      "--update-baseline)")
               << "\n";
          Base[F] = C.Pass;
          Raised = true;
        }
      }
      if (O.UpdateBaseline && Raised)
        saveBaseline(O.Baseline, Base);
    }
    if (!JsonOut)
      Out << Text.str();
    TextShown = true;
    if (!O.Json.empty())
      writeJson(O.Json, Out, O, Tests, Results, PerFolder, Total, Seconds,
                Changes);
  } catch (const Error &E) {
    if (!JsonOut && !TextShown) // The summaries, up to where it failed.
      Out << Text.str();
    Err << ToolName << ": error: " << E.what() << "\n";
    return ExitInputError;
  }
  Out.flush();
  return Status;
}

} // namespace nng::tools
