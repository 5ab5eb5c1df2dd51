//===- Inputs.h - Deterministic model inputs --------------------*- C++ -*-===//
//
// Deterministic inputs for running a graph without real data (nngraph-run,
// the numeric checks of passes, the demo and the benchmarks): symbolic dims
// are bound by name (1 unless given), values come from a seeded generator
// (splitmix64) so that a run can be repeated exactly on every platform.
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

namespace nng::ir {


/// Values of symbolic dims by name ("N" -> 4).
using DimBindings = std::map<std::string, int64_t, std::less<>>;

/// The concrete shape of T: a symbolic dim takes its value from Dims, or 1
/// when not bound; an unknown dim ("?") is 1. Throws Error(InvalidArgument)
/// naming What when the rank is unknown.
nng::Shape concreteShape(const ir::TensorType &T, const DimBindings &Dims,
                         std::string_view What);

/// A tensor of dtype T and shape S with values from a generator seeded by
/// Seed: floats uniform in [-1, 1), integers in [0, 10), bools 0 or 1.
rt::Tensor deterministicTensor(DType T, const nng::Shape &S, uint64_t Seed);

/// One deterministic tensor per graph input of G (input I uses a seed
/// derived from Seed and I).
std::vector<rt::Tensor> makeDeterministicInputs(const ir::Graph &G,
                                                 const DimBindings &Dims,
                                                 uint64_t Seed);

} // namespace nng::ir
