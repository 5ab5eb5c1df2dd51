//===- NumericCheck.h - Numerical equivalence of two graphs -----*- C++ -*-===//
//
// Runs two graphs (typically one before and one after a pass) on the
// reference backend with the same deterministic inputs and compares their
// outputs with tolerances, so a pass test or `nngraph-opt --check-numerics`
// can say "this pass changed what the model computes" and where.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Inputs.h"
#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <string>

namespace nng::passes {

/// How compareOnReference() runs and compares.
struct NumericCheckOptions {
  /// Number of runs, each with inputs from a distinct seed.
  int Trials = 1;
  /// Seed of the first trial; trial T uses Seed + T.
  uint64_t Seed = 0;
  /// Elements A and B match when |A - B| <= ATol + RTol * |B|.
  double RTol = 1e-4;
  double ATol = 1e-5;
  /// Values of the graphs' symbolic input dims (1 when not bound).
  ir::DimBindings Dims;
};

/// What compareOnReference() found.
struct NumericCheckResult {
  /// True when every output matched in every trial.
  bool Ok = true;
  /// On a mismatch: the output, trial, flat index, the two values and the
  /// max abs/rel error; otherwise a one-line summary.
  std::string Message;
  /// The largest absolute and relative errors seen over all outputs.
  double MaxAbsError = 0;
  double MaxRelError = 0;
};

/// Runs Before and After on the reference backend with identical inputs and
/// compares output I of one to output I of the other (count, shape, dtype
/// and values; NaN matches NaN). Throws Error when a graph cannot run or the
/// graphs' inputs differ in number.
NumericCheckResult compareOnReference(const ir::Graph &Before,
                                      const ir::Graph &After,
                                      const NumericCheckOptions &Options);

} // namespace nng::passes
