//===- OptDriver.cpp - The nngraph-opt driver -----------------------------===//
//
// Command line -> pass pipeline (checked before anything is read) -> input
// (file or stdin) -> parse and verify -> passes -> print to stdout or write
// -o FILE atomically. Every failure is one message on stderr ("nngraph-opt:
// error: ...", or the parser's "FILE:LINE:COL: error: ...") and an exit
// status; nothing is written on failure.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/OptDriver.h"
#include "CommandLine.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <iostream>
#include <sstream>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-opt";

struct OptOptions {
  std::string Input = "-";
  std::string Output = "-";
  std::string Emit; ///< "text" or "onnx"; empty: from -o's extension.
  std::string Pipeline;
  int64_t InlineLimit = 64 * 1024;
};

std::string passListing() {
  auto Passes = passes::registeredPasses();
  size_t Width = 0;
  for (const passes::PassInfo *P : Passes)
    Width = std::max(Width, P->Name.size());
  std::ostringstream OS;
  OS << "Passes (for -p):\n";
  for (const passes::PassInfo *P : Passes)
    OS << "  " << P->Name << std::string(Width + 2 - P->Name.size(), ' ')
       << P->Summary << "\n";
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
                 "Output format: 'text' (the default) or 'onnx' (opset 17; "
                 "the default when -o names a .onnx file).\n"
                 "  e.g. nngraph-opt model.nng --emit onnx -o model.onnx")
      ->check(CLI::IsMember({"text", "onnx"}))
      ->option_text("FORMAT");
  App.add_option("-p,--pipeline", O.Pipeline,
                 "Comma-separated passes to run in order, each optionally "
                 "with {key=value ...} options. Unknown names are rejected "
                 "before anything runs.\n"
                 "  e.g. nngraph-opt model.nng -p shape-infer,dce")
      ->option_text("PIPELINE");
  App.add_option("--inline-limit", O.InlineLimit,
                 "Print initializers with at most N elements inline; larger "
                 "ones print as a reference with a content hash. Negative: "
                 "print everything inline (default 65536).\n"
                 "  e.g. nngraph-opt model.nng --inline-limit -1")
      ->option_text("N");
  App.set_version_flag(
      "--version", std::string(ToolName) + " " + std::string(toolsVersion()),
      "Print the version and exit.");
  App.footer(passListing() +
             "\nExit status: 0 success; 1 bad input or verification failure "
             "(no output file is written); 2 bad command line.\n"
             "\nExamples:\n"
             "  nngraph-opt examples/models/small_cnn.nng\n"
             "  nngraph-opt model.nng -p dce -o model.opt.nng\n"
             "  nngraph-opt model.onnx -o model.nng\n"
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

  passes::PassManager PM;
  try {
    PM.addPipeline(O.Pipeline);
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }

  try {
    std::unique_ptr<ir::Graph> G = readInput(O.Input, In);
    PM.run(*G);
    bool ToFile = O.Output != "-";
    bool Onnx =
        O.Emit.empty() ? ToFile && isOnnxPath(O.Output) : O.Emit == "onnx";
    if (ToFile) {
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
    return reportError(Err, E);
  }
}

} // namespace nng::tools
