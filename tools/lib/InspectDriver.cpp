//===- InspectDriver.cpp - nngraph-inspect: what a model holds and costs --===//
//
// nngraph-inspect MODEL [--dim N=8] [--json]: the model's inputs and outputs,
// its parameters (count and bytes of the initializers nodes read: weights
// and buffers such as BatchNorm's running statistics), the
// multiply-accumulates of every convolution and product for the given dims
// (FLOPs = 2 x MACs), the activation memory (every intermediate tensor, and
// the peak of those alive at once in the graph's order), an op histogram
// and a per-layer table by module scope (node name where there is none), as
// torchinfo shows a PyTorch model. The model's shape arithmetic is folded
// for the given dims first (canonicalize), so counts are of the graph as
// loaded, not optimized. Loading and shape inference of a large model show
// progress on stderr (Progress.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/InspectDriver.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "Progress.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-inspect";

struct InspectOptions {
  std::string Model;
  DimBindings Dims; ///< --dim, bound as parsed.
  bool Json = false;
  bool Quiet = false;
};

/// A layer of the per-layer table: the nodes of one scope (or one node).
struct Layer {
  std::string Name, Type;
  int64_t Params = 0, Macs = 0;
  std::string Output; ///< The type of the layer's last result.
};

struct Summary {
  int64_t Params = 0, ParamBytes = 0, Initializers = 0;
  int64_t Macs = 0, ActivationBytes = 0, PeakActivationBytes = 0;
  std::map<std::string, int64_t> Ops;
  std::vector<Layer> Layers;
};

int64_t numelOf(const ir::TensorType &T) {
  std::optional<int64_t> N = T.staticNumel();
  return N ? *N : 0;
}

int64_t bytesOf(const ir::TensorType &T) {
  return numelOf(T) * static_cast<int64_t>(dtypeSize(T.dtype()));
}

/// Multiply-accumulates of N (convolutions and products; 0 for the rest).
int64_t macsOf(const ir::Node &N) {
  using K = ir::OpKind;
  auto Static = [](const ir::Value *V) { return V->type().staticShape(); };
  switch (N.op()) {
  case K::Conv:
  case K::FusedConv: {
    auto W = Static(N.input(1));
    if (!W || W->rank() < 2)
      return 0;
    int64_t PerOut = 1; // (Cin / group) * kernel.
    for (size_t I = 1; I < W->rank(); ++I)
      PerOut *= (*W)[I];
    return numelOf(N.output(0)->type()) * PerOut;
  }
  case K::ConvTranspose: {
    auto W = Static(N.input(1));
    if (!W || W->rank() < 2)
      return 0;
    int64_t PerIn = 1; // (Cout / group) * kernel.
    for (size_t I = 1; I < W->rank(); ++I)
      PerIn *= (*W)[I];
    return numelOf(N.input(0)->type()) * PerIn;
  }
  case K::MatMul:
  case K::FusedMatMul: {
    auto A = Static(N.input(0));
    if (!A || A->rank() == 0)
      return 0;
    return numelOf(N.output(0)->type()) * (*A)[A->rank() - 1];
  }
  case K::Gemm:
  case K::FusedGemm: {
    auto A = Static(N.input(0));
    if (!A || A->rank() != 2)
      return 0;
    int64_t Inner = N.attrInt("transA") ? (*A)[0] : (*A)[1];
    return numelOf(N.output(0)->type()) * Inner;
  }
  default:
    return 0;
  }
}

/// The summary of G, counting as parameters the initializers named in
/// Params (those of the model as loaded, not constants folded since).
Summary summarize(const ir::Graph &G,
                  const std::unordered_set<std::string> &Params) {
  Summary S;
  std::unordered_set<const ir::Value *> Counted;
  for (const ir::Value *V : G.initializers()) {
    if (!V->hasUses() || !Params.count(V->name()))
      continue;
    ++S.Initializers;
    S.Params += numelOf(V->type());
    S.ParamBytes += bytesOf(V->type());
  }
  // Peak of the intermediates alive at once, in the graph's order.
  std::unordered_map<const ir::Value *, size_t> LastUse;
  for (size_t I = 0; I < G.nodes().size(); ++I)
    for (const ir::Value *V : G.nodes()[I]->inputs())
      if (V)
        LastUse[V] = I;
  std::unordered_map<size_t, int64_t> FreedAfter;
  int64_t Live = 0;
  std::map<std::string, size_t> LayerAt;
  for (size_t I = 0; I < G.nodes().size(); ++I) {
    const ir::Node &N = *G.nodes()[I];
    ++S.Ops[N.schema().qualifiedName()];
    int64_t Macs = macsOf(N);
    S.Macs += Macs;
    for (const ir::Value *V : N.outputs()) {
      if (!V)
        continue;
      int64_t B = bytesOf(V->type());
      S.ActivationBytes += B;
      Live += B;
      if (!G.isOutput(V)) {
        auto It = LastUse.find(V);
        FreedAfter[It == LastUse.end() ? I : It->second] += B;
      }
    }
    S.PeakActivationBytes = std::max(S.PeakActivationBytes, Live);
    Live -= FreedAfter[I];
    // The layer: the module scope, else the node's name, else its result.
    std::string Name = !N.scope().Path.empty() ? N.scope().Path
                       : !N.name().empty()     ? N.name()
                                               : "%" + N.output(0)->name();
    auto [It, New] = LayerAt.emplace(Name, S.Layers.size());
    if (New) {
      Layer L;
      L.Name = Name;
      L.Type = !N.scope().ModuleType.empty()
                   ? N.scope().ModuleType
                   : std::string(N.schema().qualifiedName());
      S.Layers.push_back(L);
    }
    Layer &L = S.Layers[It->second];
    L.Macs += Macs;
    L.Output = N.output(0)->type().toString();
    for (const ir::Value *V : N.inputs())
      if (V && V->isInitializer() && Params.count(V->name()) &&
          Counted.insert(V).second)
        L.Params += numelOf(V->type());
  }
  return S;
}

/// 1234567 -> "1.23M".
std::string human(double V) {
  const char *Units[] = {"", "K", "M", "G", "T"};
  int U = 0;
  while (V >= 1000 && U < 4) {
    V /= 1000;
    ++U;
  }
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), U ? "%.2f%s" : "%.0f%s", V, Units[U]);
  return Buf;
}

std::string mib(int64_t Bytes) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.2f MiB", Bytes / (1024.0 * 1024.0));
  return Buf;
}

void describeOptions(CLI::App &App, InspectOptions &O) {
  App.description(
      "nngraph-inspect: what a model holds and costs: inputs and outputs, "
      "parameters, multiply-accumulates (MACs) of its convolutions and "
      "products, activation memory, an op histogram and a per-layer table "
      "(by module scope, else node name), for the given dims.");
  App.add_option("model", O.Model,
                 "Model to inspect: .nng (text format) or .onnx.\n"
                 "  e.g. nngraph-inspect resnet50.onnx --dim N=8")
      ->required();
  addDimOption(App, O.Dims, "", "nngraph-inspect model.onnx --dim N=8");
  App.add_flag("--json", O.Json,
               "Print one JSON object instead of text.\n"
               "  e.g. nngraph-inspect model.onnx --json");
  App.set_version_flag("--version",
                       std::string(ToolName) + " " +
                           std::string(toolsVersion()),
                       "Print the version and exit.");
  addQuietFlag(App, O.Quiet);
  addExitStatusHelp(App, "the model cannot be loaded or its shapes "
                         "inferred");
}

void printText(std::ostream &Out, const InspectOptions &O, const ir::Graph &G,
               const std::vector<std::string> &Syms, const DimBindings &Dims,
               const Summary &S) {
  Out << "model: " << O.Model << " (graph \"" << G.name() << "\", "
      << G.numNodes() << " nodes)\n";
  if (!Syms.empty()) {
    Out << "dims:";
    for (const std::string &Sym : Syms) {
      auto It = Dims.find(Sym);
      Out << " " << Sym << "=" << (It == Dims.end() ? 1 : It->second);
    }
    Out << "\n";
  }
  for (const ir::Value *V : G.inputs())
    Out << "input %" << V->name() << ": " << V->type().toString() << "\n";
  for (const ir::Value *V : G.outputs())
    Out << "output %" << V->name() << ": " << V->type().toString() << "\n";
  Out << "parameters: " << S.Params << " (" << human(double(S.Params)) << ", "
      << mib(S.ParamBytes) << ") in " << S.Initializers << " initializers\n";
  Out << "MACs: " << S.Macs << " (" << human(double(S.Macs)) << "; "
      << human(2.0 * double(S.Macs)) << " FLOPs)\n";
  Out << "activations: " << mib(S.ActivationBytes) << " in all, peak "
      << mib(S.PeakActivationBytes) << " alive at once\n";
  Out << "ops:";
  for (const auto &[Op, Count] : S.Ops)
    Out << " " << Op << " " << Count;
  Out << "\n";
  char Buf[512];
  std::snprintf(Buf, sizeof(Buf), "%-32s %-20s %12s %14s  %s\n", "layer",
                "type", "params", "MACs", "output");
  Out << Buf;
  for (const Layer &L : S.Layers) {
    std::snprintf(Buf, sizeof(Buf), "%-32s %-20s %12lld %14lld  %s\n",
                  L.Name.c_str(), L.Type.c_str(),
                  static_cast<long long>(L.Params),
                  static_cast<long long>(L.Macs), L.Output.c_str());
    Out << Buf;
  }
}

nlohmann::json summaryJson(const std::string &Model, const ir::Graph &G,
                           const std::vector<std::string> &Syms,
                           const DimBindings &Dims, const Summary &S) {
  using nlohmann::json;
  json J;
  J["model"] = Model;
  J["graph"] = G.name();
  J["nodes"] = G.numNodes();
  json D = json::object();
  for (const std::string &Sym : Syms) {
    auto It = Dims.find(Sym);
    D[Sym] = It == Dims.end() ? 1 : It->second;
  }
  J["dims"] = D;
  for (const char *Side : {"inputs", "outputs"}) {
    json A = json::array();
    for (const ir::Value *V : std::string(Side) == "inputs" ? G.inputs()
                                                            : G.outputs())
      A.push_back({{"name", V->name()}, {"type", V->type().toString()}});
    J[Side] = A;
  }
  J["parameters"] = {{"count", S.Params},
                     {"bytes", S.ParamBytes},
                     {"initializers", S.Initializers}};
  J["macs"] = S.Macs;
  J["flops"] = 2 * S.Macs;
  J["activation_bytes"] = {{"total", S.ActivationBytes},
                           {"peak", S.PeakActivationBytes}};
  J["ops"] = S.Ops;
  J["layers"] = json::array();
  for (const Layer &L : S.Layers)
    J["layers"].push_back({{"name", L.Name},
                           {"type", L.Type},
                           {"params", L.Params},
                           {"macs", L.Macs},
                           {"output", L.Output}});
  return J;
}

/// Makes G's input types concrete for Dims (unbound symbols: 1) and folds
/// its shape arithmetic, so that every type is known; returns the summary.
Summary prepareAndSummarize(ir::Graph &G, const DimBindings &Dims) {
  checkDimBindings(G, Dims);
  // Concrete input types, then every type inferred for them.
  for (ir::Value *V : G.inputs()) {
    Shape S = concreteShape(V->type(), Dims, "input %" + V->name());
    V->setType(ir::TensorType(V->type().dtype(), S));
  }
  // Shape arithmetic on the now static shapes folds away (exported
  // models compute Reshape targets from Shape), so every type is known.
  std::unordered_set<std::string> Params;
  for (const ir::Value *V : G.initializers())
    Params.insert(V->name());
  passes::PassManager PM;
  PM.addPipeline("shape-infer,canonicalize,shape-infer");
  PM.run(G);
  return summarize(G, Params);
}

} // namespace

std::string inspectGraphJson(const ir::Graph &Model, const DimBindings &Dims,
                             const std::string &ModelName) {
  std::unique_ptr<ir::Graph> G = Model.clone();
  std::vector<std::string> Syms = inputSymbols(*G);
  Summary S = prepareAndSummarize(*G, Dims);
  return summaryJson(ModelName, *G, Syms, Dims, S).dump();
}

int runInspectDriver(const std::vector<std::string> &Args, std::ostream &Out,
                     std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  InspectOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;
  DimBindings &Dims = O.Dims;
  // Quick runs print no progress lines into logs.
  Progress P(Err, ToolName, O.Quiet, std::chrono::milliseconds(1000));
  try {
    P.step("loading " + O.Model);
    std::unique_ptr<ir::Graph> G = frontend::loadModel(O.Model);
    std::vector<std::string> Syms = inputSymbols(*G);
    P.step("inferring shapes and counting");
    Summary S = prepareAndSummarize(*G, Dims);
    P.clear();
    if (O.Json)
      Out << summaryJson(O.Model, *G, Syms, Dims, S).dump(2) << "\n";
    else
      printText(Out, O, *G, Syms, Dims, S);
    Out.flush();
    return Out ? ExitSuccess : ExitInputError;
  } catch (const std::exception &E) {
    P.clear();
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace nng::tools
