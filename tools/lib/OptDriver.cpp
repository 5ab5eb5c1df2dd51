//===- OptDriver.cpp - The nngraph-opt driver -----------------------------===//
//
// Command line -> pass pipeline (a preset -O0/-O1/-O2 and/or -p, checked
// before anything is read) -> input (file or stdin) -> parse and verify ->
// passes (with optional IR printing, verification, numeric checks, timing
// and statistics around each) -> print text, ONNX or Graphviz dot to stdout
// or write -o FILE atomically. Every failure is one message on stderr
// ("nngraph-opt: error: ...", or the parser's "FILE:LINE:COL: error: ...")
// and an exit status; nothing is written on failure. A pipeline that runs
// long shows pass-by-pass progress on stderr (Progress.h). No --json: the
// output is the model itself; the --stats and --time-passes reports go to
// stderr as mlir-opt prints them.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/OptDriver.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "OptKernelIR.h"
#include "Progress.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/ir/FusedRegion.h"
#include "nngraph/ir/OpDocs.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/passes/NumericCheck.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-opt";

struct OptOptions {
  std::string Input = "-";
  std::string Output = "-";
  std::string Emit; ///< "text" or "onnx"; empty: from -o's extension.
  std::string Pipeline;
  int OptLevel = -1; ///< -O0/-O1/-O2; -1 when not given.
  int64_t InlineLimit = 64 * 1024;
  bool ListPasses = false;
  bool PrintOpReference = false;
  bool PrintIRAfterAll = false;
  std::vector<std::string> PrintIRAfter;
  bool VerifyEach = false;
  bool TimePasses = false;
  bool Stats = false;
  std::vector<std::string> DebugOnly;
  int CheckNumerics = 0; ///< Trials; 0 is off.
  bool Quiet = false;
  bool KernelIR = false; ///< The input is kernel IR (OptKernelIR.h).
  KernelIROptions Kernel;
  std::string KernelSizes; ///< --kernel-sizes, comma-separated.
};

/// Short pass listing for --help's footer.
std::string passListing() {
  auto Passes = passes::registeredPasses();
  size_t Width = 0;
  for (const passes::PassInfo *P : Passes)
    Width = std::max(Width, P->Name.size());
  std::ostringstream OS;
  OS << "Passes (for -p; options and presets: --list-passes):\n";
  for (const passes::PassInfo *P : Passes)
    OS << "  " << P->Name << std::string(Width + 2 - P->Name.size(), ' ')
       << P->Summary << "\n";
  return OS.str();
}

/// The full listing for --list-passes: each pass with its summary and typed
/// options, then the presets.
std::string fullPassListing() {
  std::ostringstream OS;
  OS << "Passes (for -p PIPELINE; options as pass{key=value ...}):\n";
  for (const passes::PassInfo *Info : passes::registeredPasses()) {
    OS << "  " << Info->Name << "\n      " << Info->Summary << "\n";
    std::unique_ptr<passes::Pass> P = Info->Create();
    for (const passes::PassOption &O : P->options()) {
      OS << "      " << O.Key << ": " << passes::optionKindName(O.Kind);
      if (O.Kind == passes::OptionKind::Enum) {
        OS << " {";
        for (size_t I = 0; I < O.Choices.size(); ++I)
          OS << (I ? "|" : "") << O.Choices[I];
        OS << "}";
      }
      OS << " (default " << (O.Default.empty() ? "\"\"" : O.Default) << ")  "
         << O.Help << "\n";
    }
  }
  OS << "\nPresets:\n" << passes::describePresets();
  return OS.str();
}

void describeOptions(CLI::App &App, OptOptions &O) {
  App.description(
      "nngraph-opt: read a model in the nngraph text format (.nng) or ONNX "
      "(.onnx), verify it, optionally run a pipeline of passes, and print "
      "the result.");
  App.add_option("input", O.Input,
                 "Model to read: the text format, or ONNX for a .onnx file; "
                 "'-' or nothing reads the text format from stdin.\n"
                 "  e.g. nngraph-opt model.nng");
  App.add_option("-o,--output", O.Output,
                 "Write the result to FILE instead of stdout. The file is "
                 "replaced atomically and left untouched on any error.\n"
                 "  e.g. nngraph-opt model.nng -o out.nng")
      ->option_text("FILE");
  App.add_option("--emit", O.Emit,
                 "Output format: 'text' (the default), 'onnx' (opset 17; "
                 "the default when -o names a .onnx file) or 'dot' "
                 "(Graphviz: one box per op with its name, op and scope, "
                 "edges labelled with value types).\n"
                 "  e.g. nngraph-opt model.nng --emit onnx -o model.onnx\n"
                 "  e.g. nngraph-opt model.nng --emit dot | dot -Tsvg\n"
                 "'kernel' prints the kernel IR of each nng.FusedRegion and "
                 "'llvm' its LLVM IR as the JIT compiles it (symbolic dims "
                 "stand for sizes other than 1).\n"
                 "  e.g. nngraph-opt model.nng -p form-fused-regions "
                 "--emit kernel")
      ->check(CLI::IsMember({"text", "onnx", "dot", "kernel", "llvm"}))
      ->option_text("FORMAT");
  App.add_option("-p,--pipeline", O.Pipeline,
                 "Comma-separated passes to run in order, each optionally "
                 "with {key=value ...} options. Unknown names are rejected "
                 "before anything runs.\n"
                 "  e.g. nngraph-opt model.nng -p shape-infer,dce")
      ->option_text("PIPELINE");
  addOptLevelOption(App, O.OptLevel,
                    "run before -p's passes, for the cpu backend where this "
                    "build has it",
                    "nngraph-opt model.onnx -O2 -o model.opt.onnx");
  App.add_flag("--list-passes", O.ListPasses,
               "Print every registered pass with its summary and options "
               "(type, default, help), and the presets, then exit.\n"
               "  e.g. nngraph-opt --list-passes");
  App.add_flag("--print-op-reference", O.PrintOpReference,
               "Print the operator reference (Markdown, docs/ops.md) and "
               "exit.\n  e.g. nngraph-opt --print-op-reference > docs/ops.md");
  App.add_flag("--print-ir-after-all", O.PrintIRAfterAll,
               "Print the graph to stderr after every pass.\n"
               "  e.g. nngraph-opt model.nng -O1 --print-ir-after-all");
  App.add_option(
         "--print-ir-after", O.PrintIRAfter,
         "Print the graph to stderr after each run of the named "
         "passes (comma-separated).\n"
         "  e.g. nngraph-opt model.nng -O2 --print-ir-after=fold-conv-bn")
      ->delimiter(',')
      ->option_text("PASS[,PASS]");
  App.add_flag("--verify-each", O.VerifyEach,
               "Verify the graph after every pass, naming the pass that "
               "broke it (always on in debug builds; the final graph is "
               "verified in any case).\n"
               "  e.g. nngraph-opt model.nng -O2 --verify-each");
  App.add_flag("--time-passes", O.TimePasses,
               "Print each pass's wall time to stderr.\n"
               "  e.g. nngraph-opt model.nng -O2 --time-passes");
  App.add_flag("--stats", O.Stats,
               "Print node counts by op and initializer bytes before and "
               "after the pipeline, and each pass's statistics, to stderr.\n"
               "  e.g. nngraph-opt model.nng -O2 --stats");
  App.add_option("--debug-only", O.DebugOnly,
                 "Print the debug output of the named passes "
                 "(comma-separated) to stderr, e.g. why a rewrite declined.\n"
                 "  e.g. nngraph-opt model.nng -p fold-conv-bn "
                 "--debug-only=fold-conv-bn")
      ->delimiter(',')
      ->option_text("PASS[,PASS]");
  App.add_flag("--kernel-ir", O.KernelIR,
               "Read the input as one kernel in the kernel IR's text form "
               "(what --emit kernel prints), verify it and print it again "
               "(no passes: -p and -O are refused). Errors name "
               "FILE:LINE:COL.\n"
               "  e.g. nngraph-opt --kernel-ir softmax.kir");
  App.add_option("--kernel-sizes", O.KernelSizes,
                 "With --kernel-ir: run the kernel on the kernel interpreter "
                 "over a domain of these sizes (one per dim, "
                 "comma-separated) and print each output after it as a "
                 "comment line '# %NAME: TYPE[SHAPE] = [V, ...]'.\n"
                 "  e.g. nngraph-opt --kernel-ir softmax.kir "
                 "--kernel-sizes=2,3 --kernel-input=x=1,2,3,4,5,6")
      ->option_text("D0[,D1...]");
  App.add_option("--kernel-input", O.Kernel.Inputs,
                 "With --kernel-sizes: the values of input buffer NAME, "
                 "row-major over its own axes (repeat per input).")
      ->allow_extra_args(false)
      ->option_text("NAME=V[,V...]");
  addQuietFlag(App, O.Quiet);
  App.add_flag("--check-numerics{1}", O.CheckNumerics,
               "Run the graph on the reference backend before and after "
               "every pass with TRIALS sets of deterministic inputs (default "
               "1) and fail (exit 1, no output) naming the first pass whose "
               "outputs move beyond tolerance.\n"
               "  e.g. nngraph-opt model.nng -O2 --check-numerics=3")
      ->option_text("[=TRIALS]");
  App.add_option("--inline-limit", O.InlineLimit,
                 "Print initializers with at most N elements inline; larger "
                 "ones print as a reference with a content hash. Negative: "
                 "print everything inline (default 65536).\n"
                 "  e.g. nngraph-opt model.nng --inline-limit -1")
      ->option_text("N");
  App.set_version_flag(
      "--version", std::string(ToolName) + " " + std::string(toolsVersion()) + "\n" +
          nng::buildDescription(),
      "Print the version and exit.");
  App.footer(passListing() + "\nPresets:\n" + passes::describePresets() + "\n" +
             exitStatusHelp("bad input, a verification failure or a failed "
                            "--check-numerics (no output file is written)") +
             "\n\nExamples:\n"
             "  nngraph-opt examples/models/small_cnn.nng\n"
             "  nngraph-opt model.nng -p dce -o model.opt.nng\n"
             "  nngraph-opt model.onnx -o model.nng\n"
             "  nngraph-opt model.onnx -O2 --stats -o model.opt.onnx\n"
             "  nngraph-opt model.nng -O2 --check-numerics=2 --verify-each\n"
             "  nngraph-opt model.nng --emit dot -o model.dot\n"
             "  cat model.nng | nngraph-opt - -p shape-infer");
}

bool isOnnxPath(std::string_view Path) {
  return Path.size() >= 5 && Path.substr(Path.size() - 5) == ".onnx";
}

/// Reads the model named by Input (stdin for "-").
std::unique_ptr<ir::Graph> readInput(const std::string &Input,
                                     std::istream &In) {
  if (Input == "-") {
    std::ostringstream SS;
    SS << In.rdbuf();
    return frontend::loadModelFromText(SS.str(), "<stdin>");
  }
  // Anything but .onnx is read as text, whatever its extension.
  if (isOnnxPath(Input))
    return frontend::loadModel(Input);
  return frontend::loadModelFromText(frontend::readFile(Input), Input);
}

/// Escapes S for a double-quoted Graphviz string.
std::string dotEscape(std::string_view S) {
  std::string R;
  for (char C : S) {
    if (C == '"' || C == '\\')
      R += '\\';
    R += C;
  }
  return R;
}

/// G as a Graphviz digraph: inputs, initializers and outputs as ellipses,
/// one box per node (name, op, scope), edges labelled with value types.
/// The kernel IR (or LLVM IR) of every fused region of G, each after a
/// comment naming the region. The graph's symbolic input dims stand for
/// sizes other than 1 (distinct per symbol), propagated through the graph
/// (shape arithmetic folded) so every region input has a static shape.
std::string printRegionKernels(const ir::Graph &G, bool Llvm) {
  std::unique_ptr<ir::Graph> C = G.clone();
  std::map<std::string, int64_t> Symbols;
  for (ir::Value *V : C->inputs()) {
    ir::TensorType T = V->type();
    if (!T.hasRank())
      fail(ErrorKind::Unsupported, "input %", V->name(),
           " has no known rank; kernels cannot be printed");
    for (ir::Dim &D : T.dims())
      if (!D.isStatic())
        D = ir::Dim(Symbols
                        .emplace(D.isSymbolic() ? D.symbol() : "?" + V->name(),
                                 1000003 + 2 * Symbols.size())
                        .first->second);
    V->setType(T);
  }
  passes::PassManager PM;
  PM.addPipeline("shape-infer,canonicalize,shape-infer");
  PM.run(*C);
  std::ostringstream OS;
  int Count = 0;
  for (const auto &N : C->nodes()) {
    if (N->op() != ir::OpKind::FusedRegion)
      continue;
    std::vector<const ir::TensorType *> Ptrs;
    for (const ir::Value *V : N->inputs())
      Ptrs.push_back(&V->type());
    auto Body = ir::instantiateRegionBody(N->attrString("body"), Ptrs,
                                          N->describe());
    std::string Name = "region" + std::to_string(Count++);
    backends::kernel::RegionKernel RK =
        backends::kernel::buildRegionKernel(*Body, Name);
    OS << "# " << N->describe() << "\n";
    if (Llvm)
      OS << backends::cpu::KernelJit::global().llvmIR(RK.K, /*Optimized=*/true);
    else
      OS << backends::kernel::printKernel(RK.K);
    OS << "\n";
  }
  if (Count == 0)
    OS << "# no nng.FusedRegion nodes (run -p form-fused-regions or -O2)\n";
  return OS.str();
}

std::string printDot(const ir::Graph &G) {
  std::ostringstream OS;
  std::map<const ir::Value *, std::string> Source;
  OS << "digraph \"" << dotEscape(G.name()) << "\" {\n"
     << "  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t I = 0; I < G.inputs().size(); ++I) {
    std::string Id = "in" + std::to_string(I);
    Source[G.inputs()[I]] = Id;
    OS << "  " << Id << " [shape=ellipse, label=\"input %"
       << dotEscape(G.inputs()[I]->name()) << "\"];\n";
  }
  for (size_t I = 0; I < G.initializers().size(); ++I) {
    std::string Id = "init" + std::to_string(I);
    Source[G.initializers()[I]] = Id;
    OS << "  " << Id << " [shape=ellipse, style=dashed, label=\"init %"
       << dotEscape(G.initializers()[I]->name()) << "\"];\n";
  }
  size_t NodeIndex = 0;
  for (const auto &N : G.nodes()) {
    std::string Id = "n" + std::to_string(NodeIndex++);
    std::string Label = dotEscape(N->name());
    if (!Label.empty())
      Label += "\\n";
    Label += dotEscape(N->schema().Name);
    if (!N->scope().empty())
      Label += "\\n" + dotEscape(N->scope().Path) +
               (N->scope().ModuleType.empty()
                    ? ""
                    : " (" + dotEscape(N->scope().ModuleType) + ")");
    OS << "  " << Id << " [label=\"" << Label << "\"];\n";
    for (const ir::Value *In : N->inputs()) {
      if (!In)
        continue;
      auto It = Source.find(In);
      if (It != Source.end())
        OS << "  " << It->second << " -> " << Id << " [label=\""
           << dotEscape(In->type().toString()) << "\"];\n";
    }
    for (const ir::Value *Out : N->outputs())
      Source[Out] = Id;
  }
  for (size_t I = 0; I < G.outputs().size(); ++I) {
    const ir::Value *V = G.outputs()[I];
    std::string Id = "out" + std::to_string(I);
    OS << "  " << Id << " [shape=ellipse, label=\"output %"
       << dotEscape(V->name()) << "\"];\n";
    auto It = Source.find(V);
    if (It != Source.end())
      OS << "  " << It->second << " -> " << Id << " [label=\""
         << dotEscape(V->type().toString()) << "\"];\n";
  }
  OS << "}\n";
  return OS.str();
}

/// What --stats reports of a graph.
struct GraphSummary {
  std::map<std::string, int64_t> NodesByOp;
  int64_t Nodes = 0;
  int64_t Initializers = 0;
  int64_t InitializerBytes = 0;
};

GraphSummary summarize(const ir::Graph &G) {
  GraphSummary S;
  for (const auto &N : G.nodes()) {
    ++S.NodesByOp[std::string(N->schema().Name)];
    ++S.Nodes;
  }
  for (const ir::Value *V : G.initializers()) {
    ++S.Initializers;
    if (std::optional<nng::Shape> Sh = V->type().staticShape())
      S.InitializerBytes +=
          Sh->numel() * static_cast<int64_t>(dtypeSize(V->type().dtype()));
  }
  return S;
}

void printSummaries(std::ostream &OS, const GraphSummary &Before,
                    const GraphSummary &After) {
  std::set<std::string> Ops;
  for (const auto &[Op, N] : Before.NodesByOp)
    Ops.insert(Op);
  for (const auto &[Op, N] : After.NodesByOp)
    Ops.insert(Op);
  auto Count = [](const GraphSummary &S, const std::string &Op) {
    auto It = S.NodesByOp.find(Op);
    return It == S.NodesByOp.end() ? int64_t(0) : It->second;
  };
  char Line[160];
  OS << "===-------------------------------------------------------------===\n"
     << "                     Graph statistics\n"
     << "===-------------------------------------------------------------===\n";
  std::snprintf(Line, sizeof(Line), "  %-28s %12s %12s\n", "", "before",
                "after");
  OS << Line;
  for (const std::string &Op : Ops) {
    std::snprintf(Line, sizeof(Line), "  %-28s %12lld %12lld\n", Op.c_str(),
                  static_cast<long long>(Count(Before, Op)),
                  static_cast<long long>(Count(After, Op)));
    OS << Line;
  }
  auto Row = [&](const char *Name, int64_t A, int64_t B) {
    std::snprintf(Line, sizeof(Line), "  %-28s %12lld %12lld\n", Name,
                  static_cast<long long>(A), static_cast<long long>(B));
    OS << Line;
  };
  Row("total nodes", Before.Nodes, After.Nodes);
  Row("initializers", Before.Initializers, After.Initializers);
  Row("initializer bytes", Before.InitializerBytes, After.InitializerBytes);
}

/// Prints each pass's statistics (--stats).
void printPassStatistics(std::ostream &OS, const passes::PassManager &PM) {
  OS << "Pass statistics:\n";
  for (const auto &P : PM.passes()) {
    OS << "  " << P->name() << (P->statistics().empty() ? ": (none)\n" : ":\n");
    for (const auto &[Name, Count] : P->statistics())
      OS << "    " << Name << ": " << Count << "\n";
  }
}

/// Prints each pass's wall time (--time-passes).
void printTimings(std::ostream &OS, const passes::PassManager &PM) {
  double Total = 0;
  for (const passes::PassTiming &T : PM.timings())
    Total += T.Milliseconds;
  OS << "===-------------------------------------------------------------===\n"
     << "                     Pass execution timing\n"
     << "===-------------------------------------------------------------===\n";
  char Line[160];
  for (const passes::PassTiming &T : PM.timings()) {
    std::snprintf(
        Line, sizeof(Line), "  %10.3f ms  %5.1f%%  %s\n", T.Milliseconds,
        Total > 0 ? 100.0 * T.Milliseconds / Total : 0.0, T.Name.c_str());
    OS << Line;
  }
  std::snprintf(Line, sizeof(Line), "  %10.3f ms  100.0%%  total\n", Total);
  OS << Line;
}

/// Installs the instrumentation for --print-ir-after*, --check-numerics and
/// the progress over the passes.
void instrument(passes::PassManager &PM, const OptOptions &O, std::ostream &Err,
                std::shared_ptr<std::unique_ptr<ir::Graph>> Snapshot,
                Progress &Bar) {
  passes::PassInstrumentation I;
  std::set<std::string, std::less<>> PrintAfter(O.PrintIRAfter.begin(),
                                                O.PrintIRAfter.end());
  bool PrintAll = O.PrintIRAfterAll;
  int Trials = O.CheckNumerics;
  int64_t InlineLimit = O.InlineLimit;
  auto Done = std::make_shared<size_t>(0);
  I.BeforePass = [Snapshot, Trials, Done, &Bar](const passes::Pass &P,
                                                const ir::Graph &G) {
    Bar.advance(*Done, std::string(P.name()));
    if (Trials > 0)
      *Snapshot = G.clone();
  };
  I.AfterPass = [=, &Err, &Bar](const passes::Pass &P, const ir::Graph &G,
                                bool) {
    Bar.advance(++*Done);
    if (PrintAll || PrintAfter.count(P.name())) {
      Bar.clear();
      ir::PrintOptions PO;
      PO.InlineLimit = InlineLimit;
      Err << "// -----// IR after " << P.name() << " //----- //\n"
          << ir::printGraph(G, PO);
    }
    if (Trials > 0 && *Snapshot) {
      passes::NumericCheckOptions NO;
      NO.Trials = Trials;
      passes::NumericCheckResult R =
          passes::compareOnReference(**Snapshot, G, NO);
      if (!R.Ok)
        fail(ErrorKind::InvalidArgument, "--check-numerics: pass '", P.name(),
             "' changed the outputs beyond tolerance: ", R.Message);
    }
  };
  PM.setInstrumentation(std::move(I));
}

/// Turns --debug-only's output off again (the driver may run in-process).
void resetDebug(const OptOptions &O) {
  if (O.DebugOnly.empty())
    return;
  passes::setDebugOnly({});
  passes::setDebugStream(nullptr);
}

int reportError(std::ostream &Err, const std::exception &E) {
  printError(Err, ToolName, E);
  return ExitInputError;
}

} // namespace

int runOptDriver(const std::vector<std::string> &Args, std::istream &In,
                 std::ostream &Out, std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  OptOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;

  if (O.ListPasses || O.PrintOpReference) {
    if (O.ListPasses)
      Out << fullPassListing();
    if (O.PrintOpReference)
      ir::printOpReference(Out);
    Out.flush();
    return ExitSuccess;
  }

  if (O.KernelIR || !O.KernelSizes.empty() || !O.Kernel.Inputs.empty()) {
    if (!O.KernelIR || O.OptLevel >= 0 || !O.Pipeline.empty()) {
      Err << ToolName
          << ": error: --kernel-sizes and --kernel-input need --kernel-ir, "
             "which takes no -p or -O\n";
      return ExitUsageError;
    }
    std::istringstream Sizes(O.KernelSizes);
    for (std::string Size; std::getline(Sizes, Size, ',');) {
      size_t End = 0;
      long long Value = -1;
      try {
        Value = std::stoll(Size, &End);
      } catch (const std::exception &) {
        End = std::string::npos;
      }
      O.Kernel.Sizes.push_back(Value);
      if (End != Size.size() || Value < 0) {
        Err << ToolName << ": error: --kernel-sizes: '" << Size
            << "' is not a size (a non-negative integer)\n";
        return ExitUsageError;
      }
    }
    try {
      std::string Text;
      if (O.Input == "-") {
        std::ostringstream SS;
        SS << In.rdbuf();
        Text = SS.str();
      } else {
        Text = frontend::readFile(O.Input);
      }
      std::string Result =
          runKernelIR(Text, O.Input == "-" ? "<stdin>" : O.Input, O.Kernel);
      if (O.Output != "-") {
        frontend::writeFileAtomic(O.Output, Result);
        return ExitSuccess;
      }
      Out << Result;
      Out.flush();
      return Out ? ExitSuccess : ExitInputError;
    } catch (const std::exception &E) {
      return reportError(Err, E);
    }
  }

  passes::PassManager PM;
  try {
    if (O.OptLevel >= 0)
      PM.addPipeline(passes::presetPipeline(O.OptLevel));
    PM.addPipeline(O.Pipeline);
    for (const std::string &Name : O.PrintIRAfter)
      if (!passes::lookupPass(Name))
        fail(ErrorKind::InvalidArgument, "--print-ir-after: unknown pass '",
             Name, "'; valid passes: ", passes::registeredPassNames());
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }
#ifdef NDEBUG
  PM.setVerifyEach(O.VerifyEach);
#else
  PM.setVerifyEach(true);
#endif
  auto Snapshot = std::make_shared<std::unique_ptr<ir::Graph>>();
  // Quick runs (the usual case) print no progress lines into logs. The
  // passes' own output on stderr (--debug-only, --print-ir-after*) is the
  // progress there.
  bool PassOutput = !O.DebugOnly.empty() || !O.PrintIRAfter.empty() ||
                    O.PrintIRAfterAll;
  Progress Bar(Err, ToolName, O.Quiet || PassOutput,
               std::chrono::milliseconds(1000));
  instrument(PM, O, Err, Snapshot, Bar);
  if (!O.DebugOnly.empty()) {
    passes::setDebugOnly(O.DebugOnly);
    passes::setDebugStream(&Err);
  }

  try {
    Bar.step("reading " + (O.Input == "-" ? "stdin" : O.Input));
    std::unique_ptr<ir::Graph> G = readInput(O.Input, In);
    GraphSummary Before;
    if (O.Stats)
      Before = summarize(*G);
    Bar.begin("running passes", PM.size(), "passes");
    try {
      PM.run(*G);
    } catch (...) {
      Bar.clear();
      resetDebug(O);
      throw;
    }
    Bar.clear();
    resetDebug(O);
    if (!PM.verifyEach() && PM.size()) {
      try {
        ir::verifyOrThrow(*G);
      } catch (Error &E) {
        E.addContext("the graph after the pipeline fails verification; "
                     "rerun with --verify-each to name the pass");
        throw;
      }
    }
    if (O.TimePasses)
      printTimings(Err, PM);
    if (O.Stats) {
      printSummaries(Err, Before, summarize(*G));
      printPassStatistics(Err, PM);
    }
    bool ToFile = O.Output != "-";
    bool Onnx =
        O.Emit.empty() ? ToFile && isOnnxPath(O.Output) : O.Emit == "onnx";
    if (O.Emit == "kernel" || O.Emit == "llvm") {
      std::string Text = printRegionKernels(*G, O.Emit == "llvm");
      if (ToFile) {
        frontend::writeFileAtomic(O.Output, Text);
        return ExitSuccess;
      }
      Out << Text;
      Out.flush();
      return Out ? ExitSuccess : ExitInputError;
    }
    if (O.Emit == "dot") {
      std::string Dot = printDot(*G);
      if (ToFile) {
        frontend::writeFileAtomic(O.Output, Dot);
        return ExitSuccess;
      }
      Out << Dot;
      Out.flush();
      return Out ? ExitSuccess : ExitInputError;
    }
    if (ToFile) {
      Bar.step("writing " + O.Output);
      frontend::SaveOptions SO;
      SO.InlineLimit = O.InlineLimit;
      SO.Format =
          Onnx ? frontend::ModelFormat::Onnx : frontend::ModelFormat::Text;
      frontend::saveModel(*G, O.Output, SO);
      return ExitSuccess;
    }
    // Produce everything before writing, so that a failure prints nothing.
    std::string Bytes;
    if (Onnx) {
      Bytes = frontend::exportOnnxToBytes(*G);
    } else {
      ir::PrintOptions PO;
      PO.InlineLimit = O.InlineLimit;
      Bytes = ir::printGraph(*G, PO);
    }
    Out << Bytes;
    Out.flush();
    if (!Out)
      fail(ErrorKind::IO, "cannot write the output to stdout");
    return ExitSuccess;
  } catch (const std::exception &E) {
    Bar.clear();
    return reportError(Err, E);
  }
}

} // namespace nng::tools
