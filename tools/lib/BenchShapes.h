//===- BenchShapes.h - nngraph-bench statistics, shape lists -*- C++ -*-===//
//
// What nngraph-bench reports about run times (latency percentiles), and its
// shape-list mode: a list of requests, each at its own values of the
// model's symbolic dims (--dim-range NAME=LO:HI draws them at random,
// --shapes FILE lists them), run in order on one executable. The first run
// at a shape not seen before is followed at once by a repeat run at that
// shape, and their difference is the new-shape cost (specialising the
// schedule for the shape, first-touch allocations, ...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/tools/ToolSupport.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nng::tools {

/// Latency statistics of a list of run times (milliseconds).
struct Latency {
  double Min = 0, Max = 0, Mean = 0, P50 = 0, P90 = 0, P99 = 0;
  std::vector<double> Runs; ///< In the order given.
};

/// The P-th percentile (0-100) of Sorted (ascending, not empty),
/// interpolated linearly between the closest ranks (numpy's default).
double percentile(const std::vector<double> &Sorted, double P);

/// The statistics of Runs (all zero when empty).
Latency summarize(std::vector<double> Runs);

/// {min, p50, p90, p99, max, mean, runs}.
nlohmann::json latencyJson(const Latency &L);

/// V with Digits digits after the point.
std::string fixed(double V, int Digits = 3);

/// A --dim-range: symbolic dim Name drawn from [Lo, Hi].
struct DimRange {
  std::string Name;
  int64_t Lo = 1, Hi = 1;
};

/// Parses "NAME=LO:HI" (1 <= LO <= HI); throws Error(InvalidArgument)
/// saying what is wrong.
DimRange parseDimRange(std::string_view Text);

/// Count requests, each binding every range's dim to a value drawn
/// uniformly from its range, from a splitmix64 stream seeded with Seed (the
/// same list on every machine).
std::vector<DimBindings> drawShapes(const std::vector<DimRange> &Ranges,
                                    size_t Count, uint64_t Seed);

/// Reads a shapes file: one request per line, NAME=VALUE bindings separated
/// by spaces or commas ("S=17 N=2"); blank lines and lines starting with #
/// are skipped. Throws Error naming the file and line of a bad binding, or
/// when the file cannot be read or lists no request.
std::vector<DimBindings> readShapesFile(const std::string &Path);

/// One request of a shape list, as run.
struct ShapeRun {
  DimBindings Dims;    ///< Every input symbol of the graph, bound.
  double Ms = 0;       ///< The request's run.
  bool New = false;    ///< The first run at this shape in the process.
  double RepeatMs = 0; ///< New: the repeat run right after it.
};

/// Runs requests on a compiled executable, remembering the shapes seen.
class ShapeListRunner {
public:
  /// Requests bind dims over Base (its bindings, 1 for unbound symbols);
  /// inputs are deterministic from Seed, as nngraph-run's.
  ShapeListRunner(backends::Executable &Exe, const ir::Graph &G,
                  DimBindings Base, uint64_t Seed);

  /// Base with Request's bindings over it, for every input symbol.
  DimBindings fullDims(const DimBindings &Request) const;

  /// Marks the shape of Request as seen (the warm-up's).
  void markSeen(const DimBindings &Request);

  /// Makes the request's inputs, then times its run, and a repeat run when
  /// its shape is new.
  ShapeRun run(const DimBindings &Request);

private:
  backends::Executable &Exe;
  const ir::Graph &G;
  DimBindings Base;
  uint64_t Seed;
  std::set<DimBindings> Seen;
};

/// Where a shape list came from, for the report.
struct ShapeListSource {
  std::vector<DimRange> Ranges; ///< --dim-range.
  std::string File;             ///< --shapes.
  uint64_t ShapeSeed = 0;
};

/// The shape-list statistics: requests, new-shape cost, repeat runs.
struct ShapeListSummary {
  Latency Requests;                 ///< Every request's run.
  Latency Repeats;                  ///< The repeat runs at new shapes.
  std::optional<Latency> SeenShape; ///< Requests at shapes seen before.
  Latency NewCost;                  ///< First minus repeat, per new shape.
  DimBindings MaxCostDims;          ///< Where the largest cost was.
  size_t Distinct = 0;              ///< Distinct shapes requested.
};

ShapeListSummary summarizeShapeList(const std::vector<ShapeRun> &Runs);

/// {"S": 17, "N": 2}.
nlohmann::json dimsJson(const DimBindings &Dims);

/// "S=17 N=2".
std::string shapeText(const DimBindings &Dims);

/// The report's lines about a shape list (after the setup lines).
void printShapeListText(std::ostream &Out, const ShapeListSource &Src,
                        const std::vector<ShapeRun> &Runs, int Rounds,
                        int64_t Specializations, int64_t Reshapes = -1);

/// The report's "shapes" object: source, requests (dims, ms, new,
/// repeat_ms), per_shape, the statistics and new_shape_cost_ms; the cpu
/// backend's compiled and reshaped programs when known (>= 0).
nlohmann::json shapeListJson(const ShapeListSource &Src,
                             const std::vector<ShapeRun> &Runs,
                             int64_t Specializations, int64_t Reshapes = -1);

} // namespace nng::tools
