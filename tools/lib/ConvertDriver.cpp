//===- ConvertDriver.cpp - The nngraph-convert driver ---------------------===//
//
// Two modes. Weight conversion: command line (checked before anything is read:
// extensions, rename rules, IN == OUT) -> read IN (a .pt checkpoint object, or
// a flat safetensors / .npz map) -> pick the state dict (--select) -> remap
// keys -> check dtypes against OUT's format -> list (--list, --json) and/or
// write OUT atomically. Every failure is one message on stderr
// ("nngraph-convert: error: ...") and an exit status; OUT is never written or
// touched on failure. Graph export (--arch NAME --weights W -o MODEL.onnx):
// build the zoo model -> load W strictly (with --select and the remapping) ->
// eval -> symbolic_trace with the zoo's input shape, batch dim "N" or --batch N
// -> save .onnx / .nng atomically. Steps that take long (reading or writing
// a large file, tracing) show as progress on stderr (Progress.h); --quiet
// leaves out progress and notes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ConvertDriver.h"
#include "CommandLine.h"
#include "Progress.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/weights/Remap.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-convert";

/// Progress lines in logs start after this long: converting a small file
/// prints nothing but its result.
constexpr std::chrono::milliseconds ProgressDelay{1000};

struct ConvertOptions {
  std::string Input;
  std::string Output;
  bool List = false;
  bool Json = false;
  bool Quiet = false;
  std::string Select;
  std::string StripPrefix;
  std::string AddPrefix;
  std::vector<std::string> Renames;
  bool StrictRename = false;
  bool Bf16ToF32 = false;
  bool InPlace = false;
  // --arch mode.
  std::string Arch;
  std::string Weights;
  std::string ArchOutput;
  std::string Batch = "dynamic";
};

/// "resnet18, resnet34, ..." for the help text.
std::string zooNames() {
  std::string S;
  for (const std::string &N : zoo::names())
    S += (S.empty() ? "" : ", ") + N;
  return S;
}

void describeOptions(CLI::App &App, ConvertOptions &O) {
  App.description(
      "nngraph-convert: convert a state dict between PyTorch .pt (also .pth, "
      ".bin, .ckpt), .safetensors and .npz (numpy / MLX), chosen by file "
      "extension; list a file's tensors; pick a sub-dict of a checkpoint; "
      "rename keys; or (--arch) load weights into a zoo architecture, "
      "trace it and write a deployable ONNX (or .nng) graph.");
  App.add_option("input", O.Input,
                 "Weight file to read (.pt/.pth/.bin/.ckpt, .safetensors or "
                 ".npz). Not used with --arch (give --weights).\n"
                 "  e.g. nngraph-convert resnet18.pt --list");
  App.add_option("output", O.Output,
                 "Weight file to write; the format follows the extension. "
                 "Written atomically: on any error an existing OUT is left "
                 "untouched and no partial file remains.\n"
                 "  e.g. nngraph-convert resnet18.pt resnet18.safetensors");
  App.add_flag("--list", O.List,
               "Print every tensor's key, dtype and shape, and the totals "
               "(tensors, parameters, bytes), after --select and the "
               "renames. With OUT, converts as well.\n"
               "  e.g. nngraph-convert model.safetensors --list");
  App.add_flag("--json", O.Json,
               "Print one JSON object (input, output, formats, tensors with "
               "key/dtype/shape/numel/bytes, totals, the remap report, "
               "skipped entries) instead of text.\n"
               "  e.g. nngraph-convert model.npz --list --json");
  addQuietFlag(App, O.Quiet,
               "warnings (a rename that changed nothing) still print");
  App.add_option("--select", O.Select,
                 "Take the state dict under KEYPATH of a .pt checkpoint, "
                 "'/' between nested keys (integer keys as digits). Needed "
                 "when the checkpoint holds no tensors at its root; the "
                 "error then lists the keys there.\n"
                 "  e.g. nngraph-convert ckpt.pt model.safetensors "
                 "--select model_state_dict")
      ->option_text("KEYPATH");
  App.add_option("--strip-prefix", O.StripPrefix,
                 "Remove P from the front of the keys that start with it "
                 "(first step).\n"
                 "  e.g. nngraph-convert dp.pt plain.pt --strip-prefix module.")
      ->option_text("P");
  App.add_option("--rename", O.Renames,
                 "Rename keys by regex (ECMAScript, every match replaced, $1 "
                 "for groups), split at the first '='. Repeatable; applied in "
                 "order after --strip-prefix.\n"
                 "  e.g. nngraph-convert a.pt b.pt --rename "
                 "'^backbone\\.(.*)=$1'")
      ->option_text("REGEX=REPL");
  App.add_option("--add-prefix", O.AddPrefix,
                 "Put P in front of every key (last step).\n"
                 "  e.g. nngraph-convert a.pt b.pt --add-prefix encoder.")
      ->option_text("P");
  App.add_flag("--strict-rename", O.StrictRename,
               "Make a --strip-prefix or --rename that changes no key an "
               "error (exit 1, nothing written) instead of a warning.");
  App.add_flag("--bf16-to-f32", O.Bf16ToF32,
               "Convert bf16 tensors to f32 when writing .npz (numpy has no "
               "bfloat16; without this flag such tensors are an error).\n"
               "  e.g. nngraph-convert llm.safetensors llm.npz --bf16-to-f32");
  App.add_flag("--in-place", O.InPlace,
               "Allow OUT to be the same file as IN (it is read completely "
               "first and replaced atomically); refused otherwise.\n"
               "  e.g. nngraph-convert w.pt w.pt --strip-prefix module. "
               "--in-place");
  App.add_option(
         "--arch", O.Arch,
         "Export mode: build the zoo architecture NAME (" + zooNames() +
             "; torchvision's state_dict keys), load "
             "--weights into it strictly (every key, every shape; "
             "--select and the renames apply), switch it to eval, trace "
             "it with the zoo's input shape and write -o.\n"
             "  e.g. nngraph-convert --arch resnet18 --weights "
             "resnet18.pt -o resnet18.onnx")
      ->option_text("NAME");
  App.add_option("--weights", O.Weights,
                 "With --arch: the state dict to load (.pt/.pth/.bin/.ckpt, "
                 ".safetensors or .npz), e.g. torchvision's "
                 "model.state_dict() saved with torch.save.")
      ->option_text("W");
  App.add_option("-o,--output", O.ArchOutput,
                 "With --arch: the graph to write, ONNX (.onnx) or nngraph "
                 "text (.nng) by extension; written atomically. Without "
                 "--arch: the same as OUT.")
      ->option_text("MODEL");
  App.add_option("--batch", O.Batch,
                 "With --arch: the batch dim of the input. 'dynamic' "
                 "(default): a symbolic dim named N, so one file runs at any "
                 "batch size; an integer: that fixed size.\n"
                 "  e.g. nngraph-convert --arch mlp --weights mlp.safetensors "
                 "-o mlp.onnx --batch 8")
      ->option_text("dynamic|N");
  App.set_version_flag("--version",
                       std::string(ToolName) + " " +
                           std::string(toolsVersion()) + "\n" +
                           nng::buildDescription(),
                       "Print the version and exit.");
  App.footer(
      "Keys are remapped in the order --strip-prefix, each --rename, "
      "--add-prefix; a step that changes no key is reported on stderr; two "
      "keys that end up equal are an error naming both.\n"
      "\n" +
      exitStatusHelp(
          "bad input (unreadable or malformed file, bad --select path, a "
          "dtype OUT's format cannot hold, a key collision; with --arch: "
          "weights that do not fit the architecture (missing or unexpected "
          "keys, shape mismatches, all listed), a failed trace); nothing is "
          "written",
          "unknown extension, bad --rename rule, IN == OUT without "
          "--in-place, an unknown --arch name, a bad --batch") +
      "\n"
      "\nExamples:\n"
      "  nngraph-convert resnet18.pt --list\n"
      "  nngraph-convert resnet18.pt resnet18.safetensors\n"
      "  nngraph-convert model.safetensors model.npz\n"
      "  nngraph-convert ckpt.pt model.pt --select model_state_dict\n"
      "  nngraph-convert ckpt.pt ema.npz --select ema/model\n"
      "  nngraph-convert dp.pt model.safetensors --strip-prefix module.\n"
      "  nngraph-convert a.pt b.pt --rename "
      "'^features\\.(\\d+)\\.=layers.$1.'\n"
      "  nngraph-convert model.pt --list --json\n"
      "  nngraph-convert --arch resnet18 --weights resnet18.pt -o "
      "resnet18.onnx\n"
      "  nngraph-convert --arch mobilenet_v2 --weights ckpt.pt --select "
      "model -o m.onnx --batch 1\n"
      "\nWith --arch, the input is the zoo's example shape with its batch dim "
      "dynamic (N) unless --batch is given, e.g. f32[N,3,224,224] for the "
      "vision models; the ONNX file's initializers are named by the state "
      "dict's keys.");
}

/// True when Root is a dict none of whose values is a tensor but some of
/// whose values are dicts: a training checkpoint ({'model_state_dict': ..,
/// 'epoch': 3}) rather than a state dict.
bool isCheckpointWithoutRootTensors(const weights::Object &Root) {
  if (!Root.isDict())
    return false;
  bool AnyDict = false;
  for (const auto &E : Root.entries()) {
    if (E.second.isTensor())
      return false;
    AnyDict |= E.second.isDict();
  }
  return AnyDict;
}

/// "'model_state_dict' (dict, 62 entries), 'epoch' (int: 3)" for messages.
std::string describeTopLevel(const weights::Object &Root) {
  std::ostringstream OS;
  size_t N = 0;
  for (const auto &[K, V] : Root.entries()) {
    OS << (N++ ? ", " : "");
    OS << "'"
       << (K.kind() == weights::Object::Kind::Int ? std::to_string(K.toInt())
           : K.kind() == weights::Object::Kind::String ? K.toStringRef()
                                                       : K.summary(0))
       << "' (";
    if (V.isDict())
      OS << "dict, " << V.entries().size() << " entries";
    else
      OS << V.summary(0);
    OS << ")";
  }
  return OS.str();
}

std::string shapeText(const rt::Tensor &T) {
  std::ostringstream OS;
  OS << "[";
  for (size_t I = 0; I < T.rank(); ++I)
    OS << (I ? ", " : "") << T.size(static_cast<int64_t>(I));
  OS << "]";
  return OS.str();
}

struct Totals {
  int64_t Parameters = 0;
  uint64_t Bytes = 0;
};

Totals totalsOf(const weights::TensorMap &M) {
  Totals T;
  for (const auto &[K, V] : M) {
    T.Parameters += V.numel();
    T.Bytes += V.nbytes();
  }
  return T;
}

void printListing(std::ostream &Out, const weights::TensorMap &M) {
  size_t KeyW = 3, TypeW = 5;
  for (const auto &[K, V] : M) {
    KeyW = std::max(KeyW, K.size());
    TypeW = std::max(TypeW, nng::dtypeName(V.dtype()).size());
  }
  for (const auto &[K, V] : M) {
    std::string DT(nng::dtypeName(V.dtype()));
    Out << K << std::string(KeyW + 2 - K.size(), ' ') << DT
        << std::string(TypeW + 2 - DT.size(), ' ') << shapeText(V) << "\n";
  }
  Totals T = totalsOf(M);
  Out << M.size() << " tensor" << (M.size() == 1 ? "" : "s") << ", "
      << T.Parameters << " parameters, " << T.Bytes << " bytes\n";
}

/// Checks that OUT's format can hold every dtype (.pt: no u16/u32/u64;
/// .npz: no bf16, converted to f32 when allowed). Errors name the keys.
weights::TensorMap fitToFormat(weights::TensorMap M, weights::Format F,
                               const ConvertOptions &O,
                               std::vector<std::string> &Converted) {
  if (F == weights::Format::Pt) {
    // torch (1.13 in Debian) has no uint16/32/64 tensors.
    std::vector<std::string> Unsigned;
    for (const auto &[K, V] : M)
      if (V.dtype() == DType::U16 || V.dtype() == DType::U32 ||
          V.dtype() == DType::U64)
        Unsigned.push_back(K + "' (" + std::string(nng::dtypeName(V.dtype())) +
                           ")");
    if (!Unsigned.empty()) {
      std::ostringstream OS;
      OS << "'" << O.Output << "': PyTorch .pt files cannot hold u16/u32/u64 "
         << "tensors, and " << Unsigned.size() << " tensor"
         << (Unsigned.size() == 1 ? " is" : "s are") << " of such a dtype: ";
      for (size_t I = 0; I < Unsigned.size() && I < 10; ++I)
        OS << (I ? ", " : "") << "'" << Unsigned[I];
      if (Unsigned.size() > 10)
        OS << ", ... " << Unsigned.size() - 10 << " more";
      OS << ". Write .safetensors or .npz, which keep them";
      fail(ErrorKind::Unsupported, OS.str());
    }
    return M;
  }
  if (F != weights::Format::Npz)
    return M;
  std::vector<std::string> Bad;
  for (const auto &[K, V] : M)
    if (V.dtype() == DType::BF16)
      Bad.push_back(K);
  if (Bad.empty())
    return M;
  if (!O.Bf16ToF32) {
    std::ostringstream OS;
    OS << "'" << O.Output << "': .npz (numpy) has no bfloat16, and "
       << Bad.size() << " tensor" << (Bad.size() == 1 ? " is" : "s are")
       << " bf16: ";
    for (size_t I = 0; I < Bad.size() && I < 10; ++I)
      OS << (I ? ", " : "") << "'" << Bad[I] << "'";
    if (Bad.size() > 10)
      OS << ", ... " << Bad.size() - 10 << " more";
    OS << ". Pass --bf16-to-f32 to store them as f32, or write .safetensors "
          "or .pt, which keep bf16";
    fail(ErrorKind::Unsupported, OS.str());
  }
  for (const std::string &K : Bad) {
    M.insert(K, M.at(K).to(DType::F32));
    Converted.push_back(K);
  }
  return M;
}

bool sameFile(const std::string &A, const std::string &B) {
  std::error_code EC;
  if (!std::filesystem::exists(B, EC))
    return false;
  bool Same = std::filesystem::equivalent(A, B, EC);
  return !EC && Same;
}

/// The graph format of an --arch output, by extension (".onnx" or ".nng");
/// an error naming the file otherwise.
std::string graphFormatForPath(const std::string &Path) {
  std::string Ext = std::filesystem::path(Path).extension().string();
  std::transform(Ext.begin(), Ext.end(), Ext.begin(),
                 [](unsigned char C) { return std::tolower(C); });
  if (Ext == ".onnx")
    return "onnx";
  if (Ext == ".nng")
    return "nng";
  fail(ErrorKind::InvalidArgument, "-o '", Path,
       "': the graph is written as ONNX (.onnx) or nngraph text (.nng), "
       "chosen by extension; use one of those (weight files are converted "
       "without --arch: nngraph-convert IN OUT)");
}

/// Parses --batch: "dynamic" (nullopt) or a positive integer.
std::optional<int64_t> parseBatch(const std::string &S) {
  if (S == "dynamic")
    return std::nullopt;
  int64_t N = 0;
  bool Digits = !S.empty() && S.size() <= 12 &&
                std::all_of(S.begin(), S.end(),
                            [](unsigned char C) { return std::isdigit(C); });
  if (Digits)
    N = std::stoll(S);
  if (!Digits || N < 1)
    fail(ErrorKind::InvalidArgument, "--batch '", S,
         "': expected 'dynamic' (a symbolic batch dim N) or a positive "
         "integer such as 1 or 8");
  return N;
}

/// nngraph-convert --arch: zoo model + weights -> traced graph file.
int runArchMode(const ConvertOptions &O, std::ostream &Out, std::ostream &Err) {
  // --- The command line, before anything is built or read. ---------------
  weights::RemapOptions Remap;
  weights::Format WFormat{};
  std::string GFormat;
  std::optional<int64_t> Batch;
  const zoo::ModelInfo *Info = nullptr;
  try {
    if (!O.Input.empty() || !O.Output.empty())
      fail(ErrorKind::InvalidArgument, "--arch takes no positional IN/OUT ('",
           O.Input.empty() ? O.Output : O.Input,
           "'); give the weights with --weights W and the graph with -o "
           "MODEL.onnx");
    if (O.List)
      fail(ErrorKind::InvalidArgument,
           "--list lists a weight file; run it without --arch "
           "(nngraph-convert W --list)");
    if (O.Bf16ToF32 || O.InPlace)
      fail(ErrorKind::InvalidArgument,
           O.InPlace ? "--in-place" : "--bf16-to-f32",
           " applies to weight conversion, not to --arch");
    Info = &zoo::info(O.Arch); // Lists the known names when unknown.
    if (O.Weights.empty())
      fail(ErrorKind::InvalidArgument, "--arch ", O.Arch,
           " needs --weights W (.pt, .safetensors or .npz); e.g. "
           "nngraph-convert --arch ",
           O.Arch, " --weights ", O.Arch, ".pt -o ", O.Arch, ".onnx");
    if (O.ArchOutput.empty())
      fail(ErrorKind::InvalidArgument, "--arch ", O.Arch,
           " needs -o MODEL.onnx (or .nng), the graph to write");
    WFormat = weights::formatForPath(O.Weights);
    GFormat = graphFormatForPath(O.ArchOutput);
    if (!O.Select.empty() && WFormat != weights::Format::Pt)
      fail(ErrorKind::InvalidArgument, "--select '", O.Select,
           "' picks a sub-dict of a .pt checkpoint, but '", O.Weights,
           "' is a ", weights::formatName(WFormat),
           " file (one flat state dict); drop --select");
    Batch = parseBatch(O.Batch);
    if (Info->InputShape.empty())
      fail(ErrorKind::Internal, "zoo model '", O.Arch,
           "' has no input shape registered");
    Remap.StripPrefix = O.StripPrefix;
    Remap.AddPrefix = O.AddPrefix;
    for (const std::string &R : O.Renames)
      Remap.Renames.push_back(weights::parseRenameRule(R));
    if (sameFile(O.Weights, O.ArchOutput))
      fail(ErrorKind::InvalidArgument, "-o '", O.ArchOutput,
           "' is the weights file; choose another output name");
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }

  try {
    // --- Build, load strictly, eval. ---------------------------------------
    Progress P(Err, ToolName, O.Quiet, ProgressDelay);
    P.step("building " + O.Arch);
    nn::ModulePtr Model = zoo::create(O.Arch);
    P.step("loading " + O.Weights);
    weights::LoadOptions LO;
    LO.KeyPath = O.Select;
    LO.Strict = true;
    LO.Remap = Remap;
    weights::LoadResult Loaded;
    try {
      Loaded = weights::loadWeights(*Model, O.Weights, LO);
    } catch (Error &E) {
      E.addContext("into --arch " + O.Arch +
                   " (the keys must be the architecture's state_dict keys; "
                   "compare with nngraph-convert " +
                   O.Weights +
                   " --list and fix them with --select, --strip-prefix, "
                   "--rename or --add-prefix)");
      throw;
    }
    std::vector<std::string> Unmatched = Loaded.Remap.unmatched();
    if (!Unmatched.empty()) {
      std::ostringstream OS;
      for (size_t I = 0; I < Unmatched.size(); ++I)
        OS << (I ? ", " : "") << Unmatched[I];
      if (O.StrictRename)
        fail(ErrorKind::InvalidArgument, "key remapping: ", OS.str(),
             " changed no key of '", O.Weights, "' (--strict-rename)");
      P.clear();
      Err << ToolName << ": warning: " << OS.str() << " changed no key of '"
          << O.Weights << "'\n";
    }
    Model->eval();

    // --- Trace with the zoo's input shape. ---------------------------------
    std::vector<fx::Dim> Dims;
    Dims.push_back(Batch ? fx::Dim(*Batch) : fx::Dim("N"));
    for (size_t I = 1; I < Info->InputShape.size(); ++I)
      Dims.push_back(fx::Dim(Info->InputShape[I]));
    P.step("tracing " + O.Arch);
    fx::GraphModule Traced = [&] {
      try {
        return fx::symbolic_trace(*Model, {fx::InputSpec(Dims)});
      } catch (Error &E) {
        E.addContext("while tracing --arch " + O.Arch);
        throw;
      }
    }();
    Traced.graph().setName(O.Arch);

    // --- Write. -------------------------------------------------------------
    P.step("writing " + O.ArchOutput);
    Traced.save(O.ArchOutput);
    P.clear();

    // --- Report. ------------------------------------------------------------
    const ir::Graph &G = Traced.graph();
    int64_t Parameters = Model->num_parameters();
    uint64_t InitBytes = 0;
    for (const ir::Value *V : G.initializers())
      InitBytes += V->data().nbytes();
    auto Signature = [](const std::vector<ir::Value *> &Vs) {
      std::vector<std::pair<std::string, std::string>> R;
      for (const ir::Value *V : Vs)
        R.emplace_back(V->name(), V->type().toString());
      return R;
    };
    auto Ins = Signature(G.inputs()), Outs = Signature(G.outputs());
    if (O.Json) {
      using nlohmann::json;
      json J;
      J["arch"] = O.Arch;
      J["weights"] = O.Weights;
      J["weights_format"] = weights::formatName(WFormat);
      if (!O.Select.empty())
        J["select"] = O.Select;
      J["output"] = O.ArchOutput;
      J["output_format"] = GFormat;
      J["batch"] = Batch ? json(*Batch) : json("dynamic");
      json JI = json::array(), JO = json::array();
      for (const auto &[N, T] : Ins)
        JI.push_back(json{{"name", N}, {"type", T}});
      for (const auto &[N, T] : Outs)
        JO.push_back(json{{"name", N}, {"type", T}});
      J["inputs"] = JI;
      J["outputs"] = JO;
      J["nodes"] = G.numNodes();
      J["initializers"] = G.initializers().size();
      J["initializer_bytes"] = InitBytes;
      J["parameters"] = Parameters;
      json Steps = json::array();
      for (const weights::RemapStep &S : Loaded.Remap.Steps)
        Steps.push_back(json{{"step", S.Description}, {"changed", S.Changed}});
      J["remap"] = Steps;
      J["unmatched"] = Unmatched;
      J["skipped"] = Loaded.Skipped;
      Out << J.dump(2) << "\n";
      return ExitSuccess;
    }
    if (!Loaded.Remap.Steps.empty() && !O.Quiet)
      Err << Loaded.Remap.toString();
    if (!Loaded.Skipped.empty() && !O.Quiet)
      Err << ToolName << ": note: skipped " << Loaded.Skipped.size()
          << " non-tensor entr" << (Loaded.Skipped.size() == 1 ? "y" : "ies")
          << " of '" << O.Weights << "'\n";
    Out << "wrote " << O.ArchOutput << " (" << GFormat << "): " << O.Arch
        << " with the weights of " << O.Weights << "; ";
    for (size_t I = 0; I < Ins.size(); ++I)
      Out << (I ? ", " : "") << Ins[I].first << ": " << Ins[I].second;
    Out << " -> ";
    for (size_t I = 0; I < Outs.size(); ++I)
      Out << (I ? ", " : "") << Outs[I].first << ": " << Outs[I].second;
    Out << "; " << G.numNodes() << " nodes, " << G.initializers().size()
        << " initializers (" << InitBytes << " bytes), " << Parameters
        << " parameters\n";
    return ExitSuccess;
  } catch (const std::exception &E) {
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace

int runConvertDriver(const std::vector<std::string> &Args, std::ostream &Out,
                     std::ostream &Err) {
  CLI::App App;
  ConvertOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;
  if (!O.Arch.empty())
    return runArchMode(O, Out, Err);

  // --- Everything about the command line, before any file is read. --------
  weights::RemapOptions Remap;
  weights::Format InFormat{}, OutFormat{};
  try {
    if (!O.Weights.empty() || O.Batch != "dynamic")
      fail(ErrorKind::InvalidArgument,
           !O.Weights.empty() ? "--weights" : "--batch",
           " goes with --arch NAME (export a zoo architecture with these "
           "weights as a graph); to convert a weight file, give it as IN");
    if (!O.ArchOutput.empty()) {
      if (!O.Output.empty())
        fail(ErrorKind::InvalidArgument, "two outputs: '", O.Output,
             "' and -o '", O.ArchOutput, "'; give one");
      O.Output = O.ArchOutput;
    }
    if (O.Input.empty())
      fail(ErrorKind::InvalidArgument,
           "no input: give a weight file (nngraph-convert IN [OUT] "
           "[--list]) or --arch NAME --weights W -o MODEL.onnx; see --help");
    if (O.Output.empty() && !O.List)
      fail(ErrorKind::InvalidArgument,
           "nothing to do: give an output file (nngraph-convert IN OUT) or "
           "--list; see --help");
    InFormat = weights::formatForPath(O.Input);
    if (!O.Output.empty())
      OutFormat = weights::formatForPath(O.Output);
    if (!O.Select.empty() && InFormat != weights::Format::Pt)
      fail(ErrorKind::InvalidArgument, "--select '", O.Select,
           "' picks a "
           "sub-dict of a .pt checkpoint, but '",
           O.Input, "' is a ", weights::formatName(InFormat),
           " file (one flat state dict); drop --select");
    Remap.StripPrefix = O.StripPrefix;
    Remap.AddPrefix = O.AddPrefix;
    for (const std::string &R : O.Renames)
      Remap.Renames.push_back(weights::parseRenameRule(R));
    if (!O.Output.empty() && !O.InPlace && sameFile(O.Input, O.Output))
      fail(ErrorKind::InvalidArgument, "'", O.Output,
           "' is the input file; "
           "pass --in-place to replace it (it is read first and replaced "
           "atomically), or choose another output name");
  } catch (const Error &E) {
    printError(Err, ToolName, E);
    return ExitUsageError;
  }

  try {
    // --- Read and select. -------------------------------------------------
    std::vector<std::string> Skipped;
    weights::TensorMap Tensors;
    Progress P(Err, ToolName, O.Quiet, ProgressDelay);
    P.step("reading " + O.Input);
    if (InFormat == weights::Format::Pt) {
      weights::Object Root = weights::readPt(O.Input);
      if (O.Select.empty() && isCheckpointWithoutRootTensors(Root)) {
        std::string Keys = describeTopLevel(Root);
        if (!O.Output.empty())
          fail(ErrorKind::InvalidArgument, "'", O.Input,
               "' is a checkpoint with no tensors at its root; pick the "
               "state dict with --select KEYPATH. Top-level keys: ",
               Keys);
        P.clear();
        if (!O.Quiet)
          Err << ToolName << ": note: '" << O.Input
              << "' is a checkpoint with no tensors at its root; listing "
                 "every nested tensor (pick one state dict with --select). "
                 "Top-level keys: "
              << Keys << "\n";
      }
      try {
        Tensors = weights::selectTensors(Root, O.Select, &Skipped);
      } catch (Error &E) {
        E.addContext("in '" + O.Input + "'");
        throw;
      }
    } else {
      Tensors = weights::readStateDict(O.Input, "", &Skipped);
    }

    // --- Remap. -------------------------------------------------------------
    weights::RemapReport Report;
    if (!Remap.empty())
      Tensors = weights::remapKeys(Tensors, Remap, &Report);
    std::vector<std::string> Unmatched = Report.unmatched();
    if (!Unmatched.empty()) {
      std::ostringstream OS;
      for (size_t I = 0; I < Unmatched.size(); ++I)
        OS << (I ? ", " : "") << Unmatched[I];
      if (O.StrictRename)
        fail(ErrorKind::InvalidArgument, "key remapping: ", OS.str(),
             " changed no key of '", O.Input,
             "' (--strict-rename); check the rules against --list");
      P.clear();
      Err << ToolName << ": warning: " << OS.str() << " changed no key of '"
          << O.Input << "'\n";
    }

    // --- Write.
    // ---------------------------------------------------------------
    std::vector<std::string> Converted;
    if (!O.Output.empty()) {
      Tensors = fitToFormat(std::move(Tensors), OutFormat, O, Converted);
      P.step("writing " + O.Output);
      weights::writeStateDict(O.Output, Tensors);
    }
    P.clear();
    if (!Skipped.empty() && !O.Json && !O.Quiet) {
      Err << ToolName << ": note: skipped " << Skipped.size()
          << " non-tensor entr" << (Skipped.size() == 1 ? "y" : "ies") << ":";
      for (size_t I = 0; I < Skipped.size() && I < 10; ++I)
        Err << (I ? ", " : " ") << "'" << Skipped[I] << "'";
      if (Skipped.size() > 10)
        Err << ", ... " << Skipped.size() - 10 << " more";
      Err << "\n";
    }

    // --- Report.
    // --------------------------------------------------------------
    Totals T = totalsOf(Tensors);
    if (O.Json) {
      using nlohmann::json;
      json J;
      J["input"] = O.Input;
      J["input_format"] = weights::formatName(InFormat);
      if (!O.Output.empty()) {
        J["output"] = O.Output;
        J["output_format"] = weights::formatName(OutFormat);
      }
      if (!O.Select.empty())
        J["select"] = O.Select;
      J["count"] = Tensors.size();
      J["parameters"] = T.Parameters;
      J["bytes"] = T.Bytes;
      if (O.List) {
        json Ts = json::array();
        for (const auto &[K, V] : Tensors) {
          json Shape = json::array();
          for (size_t I = 0; I < V.rank(); ++I)
            Shape.push_back(V.size(static_cast<int64_t>(I)));
          json TJ;
          TJ["key"] = K;
          TJ["dtype"] = std::string(nng::dtypeName(V.dtype()));
          TJ["shape"] = Shape;
          TJ["numel"] = V.numel();
          TJ["bytes"] = V.nbytes();
          Ts.push_back(TJ);
        }
        J["tensors"] = Ts;
      }
      json Steps = json::array();
      for (const weights::RemapStep &S : Report.Steps)
        Steps.push_back(json{{"step", S.Description}, {"changed", S.Changed}});
      J["remap"] = Steps;
      J["unmatched"] = Unmatched;
      J["skipped"] = Skipped;
      J["converted_to_f32"] = Converted;
      Out << J.dump(2) << "\n";
      return ExitSuccess;
    }
    if (O.List)
      printListing(Out, Tensors);
    if (!Report.Steps.empty() && !O.Quiet)
      Err << Report.toString();
    if (!Converted.empty() && !O.Quiet)
      Err << ToolName << ": note: stored " << Converted.size() << " bf16 tensor"
          << (Converted.size() == 1 ? "" : "s") << " as f32 (--bf16-to-f32)\n";
    if (!O.Output.empty())
      Out << "wrote " << O.Output << " (" << weights::formatName(OutFormat)
          << "): " << Tensors.size() << " tensor"
          << (Tensors.size() == 1 ? "" : "s") << ", " << T.Parameters
          << " parameters, " << T.Bytes << " bytes\n";
    return ExitSuccess;
  } catch (const std::exception &E) {
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace nng::tools
