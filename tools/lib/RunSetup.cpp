//===- RunSetup.cpp - Load, optimize and compile a model for timed runs ---===//
//
// The shared setup of nngraph-run and nngraph-bench (RunSetup.h).
//
//===----------------------------------------------------------------------===//

#include "RunSetup.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Parallel.h"

#include <ostream>

namespace nng::tools {

double millisSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

LoadedModel loadForRun(const std::string &Model, const std::string &InputsPath,
                       DimBindings &Dims, Progress &P) {
  P.step("loading " + Model);
  LoadedModel M;
  M.Graph = frontend::loadModel(Model);
  checkDimBindings(*M.Graph, Dims);
  if (!InputsPath.empty()) {
    M.Data = loadInputData(InputsPath, *M.Graph);
    bindDimsFromData(*M.Data, Dims);
  }
  M.LoadedNodes = M.Graph->numNodes();
  return M;
}

CompiledModel optimizeAndCompile(LoadedModel &M, const DimBindings &Dims,
                                 const CompileSetup &S, Progress &P) {
  ir::Graph &G = *M.Graph;
  CompiledModel C;
  if (S.OptLevel > 0) {
    P.step("optimizing (-O" + std::to_string(S.OptLevel) + ")");
    auto Start = std::chrono::steady_clock::now();
    passes::PassManager PM;
    PM.addPipeline(passes::presetPipeline(S.OptLevel, S.Backend));
    PM.run(G);
    C.OptimizeMs = millisSince(Start);
  }
  C.Inputs = M.Data ? inputsInGraphOrder(G, *M.Data)
                    : makeDeterministicInputs(G, Dims, S.Seed);
  P.step("compiling on " + S.Backend);
  auto Start = std::chrono::steady_clock::now();
  C.Exe = backends::getBackend(S.Backend).compile(G);
  C.Exe->prepare(C.Inputs); // Specialise for these inputs (JIT included).
  C.CompileMs = millisSince(Start);
  return C;
}

std::string dimsText(const ir::Graph &G, const DimBindings &Dims) {
  std::string R;
  for (const std::string &S : inputSymbols(G)) {
    auto It = Dims.find(S);
    R += " " + S + "=" + std::to_string(It == Dims.end() ? 1 : It->second);
  }
  return R;
}

void printInputLines(std::ostream &Out, const ir::Graph &G,
                     const std::vector<Tensor> &Inputs,
                     const std::string &InputsPath, uint64_t Seed) {
  for (size_t I = 0; I < Inputs.size(); ++I)
    Out << "input %" << G.inputs()[I]->name() << ": "
        << dtypeName(Inputs[I].dtype()) << Inputs[I].shape().toString()
        << (InputsPath.empty() ? " (seed " + std::to_string(Seed) + ")"
                               : " (from " + InputsPath + ")")
        << "\n";
}

nlohmann::json setupJson(const std::string &Model, const ir::Graph &G,
                         const DimBindings &Dims, const CompileSetup &S,
                         size_t LoadedNodes, const std::vector<Tensor> &Inputs,
                         const std::string &InputsPath) {
  using nlohmann::json;
  json J;
  J["model"] = Model;
  J["graph"] = G.name();
  J["backend"] = S.Backend;
  J["threads"] = nng::numThreads();
  J["opt_level"] = S.OptLevel;
  J["nodes"] = {{"loaded", LoadedNodes}, {"compiled", G.numNodes()}};
  // Where the inputs came from: "random" (with the seed) or "file".
  if (InputsPath.empty()) {
    J["input_source"] = "random";
    J["seed"] = S.Seed;
  } else {
    J["input_source"] = "file";
    J["inputs_file"] = InputsPath;
  }
  json DimsJ = json::object();
  for (const std::string &Sym : inputSymbols(G)) {
    auto It = Dims.find(Sym);
    DimsJ[Sym] = It == Dims.end() ? 1 : It->second;
  }
  J["dims"] = DimsJ;
  J["inputs"] = json::array();
  for (size_t I = 0; I < Inputs.size(); ++I)
    J["inputs"].push_back({{"name", G.inputs()[I]->name()},
                           {"dtype", std::string(dtypeName(Inputs[I].dtype()))},
                           {"shape", Inputs[I].shape().dims()}});
  return J;
}

} // namespace nng::tools
