//===- RunSetup.h - Load, optimize and compile a model for timed runs -*- C++ -*-===//
//
// What nngraph-run and nngraph-bench share before their runs: the model
// loaded with its --dim bindings checked and an --inputs file's dims bound,
// the -O preset applied, the inputs made (from the file, else deterministic
// from the seed), the executable compiled and prepared for them, each step
// timed and shown by the progress reporter; and the lines and JSON fields
// that describe that setup in both tools' reports.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Progress.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/tools/InputData.h"
#include "nngraph/tools/ToolSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng::tools {

/// Milliseconds since Start.
double millisSince(std::chrono::steady_clock::time_point Start);

/// A model as loaded, before any pass.
struct LoadedModel {
  std::unique_ptr<ir::Graph> Graph;
  /// The --inputs arrays (when a file was given).
  std::optional<InputData> Data;
  size_t LoadedNodes = 0;
};

/// Loads Model, checks Dims against its inputs, and reads InputsPath (when
/// not empty), binding the dims its arrays fix.
LoadedModel loadForRun(const std::string &Model, const std::string &InputsPath,
                       DimBindings &Dims, Progress &P);

/// How to get from a loaded model to a prepared executable.
struct CompileSetup {
  int OptLevel = 2;
  uint64_t Seed = 0;
  std::string Backend;
};

/// A graph optimized and compiled for its inputs.
struct CompiledModel {
  std::vector<Tensor> Inputs;
  std::unique_ptr<backends::Executable> Exe;
  double OptimizeMs = 0, CompileMs = 0;
};

/// Applies the -O preset to M's graph, makes the inputs (M's arrays, else
/// deterministic ones from the seed), compiles on the backend and prepares
/// the executable for those inputs (the JIT included in CompileMs).
CompiledModel optimizeAndCompile(LoadedModel &M, const DimBindings &Dims,
                                 const CompileSetup &S, Progress &P);

/// " N=8 T=16": each input symbol of G with its extent (1 when unbound);
/// "" when G has none.
std::string dimsText(const ir::Graph &G, const DimBindings &Dims);

/// "input %x: f32[1, 3, 8, 8] (seed 0)" (or "(from FILE)") per input.
void printInputLines(std::ostream &Out, const ir::Graph &G,
                     const std::vector<Tensor> &Inputs,
                     const std::string &InputsPath, uint64_t Seed);

/// The report fields of the setup: model, graph, backend, threads,
/// opt_level, nodes {loaded, compiled}, input_source with seed or
/// inputs_file, dims, inputs [{name, dtype, shape}].
nlohmann::json setupJson(const std::string &Model, const ir::Graph &G,
                         const DimBindings &Dims, const CompileSetup &S,
                         size_t LoadedNodes, const std::vector<Tensor> &Inputs,
                         const std::string &InputsPath);

} // namespace nng::tools
