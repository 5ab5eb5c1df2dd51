//===- ToolSupport.h - What the command-line drivers share ------*- C++ -*-===//
//
// The exit-status convention of every nngraph tool, and deterministic model
// inputs (used by nngraph-run, the demo and the benchmarks): symbolic dims
// are bound by name (1 unless given), values come from a seeded generator
// so that a run can be repeated exactly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nng::tools {

/// Exit statuses of the tools.
enum ExitCode : int {
  ExitSuccess = 0,    ///< Done.
  ExitInputError = 1, ///< Bad input file, verification or run failure.
  ExitUsageError = 2, ///< Bad command line.
};

/// Values of symbolic dims by name ("N" -> 4).
using DimBindings = std::map<std::string, int64_t, std::less<>>;

/// Parses "NAME=VALUE" (VALUE a positive integer) into Dims; throws
/// Error(InvalidArgument) saying what is wrong.
void parseDimBinding(std::string_view Text, DimBindings &Dims);

/// The concrete shape of T: a symbolic dim takes its value from Dims, or 1
/// when not bound; an unknown dim ("?") is 1. Throws Error(InvalidArgument)
/// naming What when the rank is unknown.
nng::Shape concreteShape(const ir::TensorType &T, const DimBindings &Dims,
                         std::string_view What);

/// A tensor of dtype T and shape S with values from a generator seeded by
/// Seed: floats uniform in [-1, 1), integers in [0, 10), bools 0 or 1.
nng::Tensor deterministicTensor(DType T, const nng::Shape &S, uint64_t Seed);

/// One deterministic tensor per graph input of G (input I uses a seed
/// derived from Seed and I).
std::vector<nng::Tensor> makeDeterministicInputs(const ir::Graph &G,
                                                 const DimBindings &Dims,
                                                 uint64_t Seed);

/// The names of the symbolic dims used by G's inputs, sorted.
std::vector<std::string> inputSymbols(const ir::Graph &G);

/// The version string of the tools ("0.1.0").
std::string_view toolsVersion();

} // namespace nng::tools
