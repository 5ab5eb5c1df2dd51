//===- ToolSupport.h - What the command-line drivers share ------*- C++ -*-===//
//
// The exit-status convention of every nngraph tool, --dim NAME=VALUE
// parsing, and the deterministic model inputs of backends/Inputs.h under
// their historical tools:: names (the code lives in the backends layer so
// that passes can check themselves numerically).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Inputs.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nng::tools {

/// This layer names the runtime's data tensor plainly.
using rt::Tensor;

/// Exit statuses of every tool (docs/tools.md). A tool's own statuses
/// start at 3 (nngraph-bench's BenchExitCode); every --help lists them
/// (exitStatusHelp in tools/lib/CommandLine.h).
enum ExitCode : int {
  ExitSuccess = 0,    ///< Done.
  ExitInputError = 1, ///< Bad input file, verification or run failure.
  ExitUsageError = 2, ///< Bad command line.
};

/// Values of symbolic dims by name ("N" -> 4).
using DimBindings = ir::DimBindings;
using ir::concreteShape;
using ir::deterministicTensor;
using ir::makeDeterministicInputs;

/// Parses "NAME=VALUE" (VALUE a positive integer) into Dims; throws
/// Error(InvalidArgument) saying what is wrong.
void parseDimBinding(std::string_view Text, DimBindings &Dims);

/// The names of the symbolic dims used by G's inputs, sorted.
std::vector<std::string> inputSymbols(const ir::Graph &G);

/// Throws Error(InvalidArgument) for a --dim binding that names no symbolic
/// dim of G's inputs, listing the ones they have.
void checkDimBindings(const ir::Graph &G, const DimBindings &Dims);

/// The version string of the tools ("0.1.0").
std::string_view toolsVersion();

/// A data file a tool ships with: SourcePath (the source tree's copy,
/// compiled in) when it exists, else the installed copy
/// `<program dir>/../share/nngraph/<Installed>` when that exists, else
/// SourcePath (so a message names where it was looked for).
std::string dataFile(const std::string &SourcePath,
                     const std::string &Installed);

} // namespace nng::tools
