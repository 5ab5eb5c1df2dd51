//===- ValueGuards.h - Inputs compiled by their value ---------------------===//
//
// A graph input that is an integer scalar and decides an If's condition
// (Silero VAD's sample rate: `If(Equal(sr, 16000))`) makes the If's
// branch a run-time choice, its results' shapes unknown, and so the whole
// graph run node by node. Its value is usually the same run after run, so
// the cpu executable compiles per value, as torch.compile specialises on
// integer inputs: a copy of the graph with the input's uses replaced by a
// constant, whose If the lowering takes as its branch (LowerControlFlow).
// At most MaxValues values are compiled this way; after that a signature
// compiles the graph itself, which serves any value.
//
//===----------------------------------------------------------------------===//

#ifndef NNGRAPH_BACKENDS_CPU_VALUEGUARDS_H
#define NNGRAPH_BACKENDS_CPU_VALUEGUARDS_H

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace nng::backends::cpu {

class ValueGuards {
public:
  /// Value sets compiled as constants; more fall back to the graph.
  static constexpr size_t MaxValues = 4;

  /// Finds G's guarded inputs: integer or bool scalars (one element, static
  /// shape), not graph outputs, such that the condition of one of G's Ifs
  /// is computed from them, constants and shapes only.
  explicit ValueGuards(const ir::Graph &G);

  bool empty() const { return Inputs.empty(); }
  /// The guarded inputs' values in Inputs (empty when there are none, or
  /// one is absent).
  std::vector<int64_t> valuesOf(const std::vector<rt::Tensor> &Inputs) const;
  /// The graph compiled for Values (made on first use from In's tensors),
  /// or null once MaxValues others have been made.
  const ir::Graph *graphFor(const std::vector<int64_t> &Values,
                            const std::vector<rt::Tensor> &In);
  /// "%sr = 16000 (decides an If)", for --stats.
  std::string describe(const std::vector<int64_t> &Values) const;

private:
  const ir::Graph &G;
  std::vector<size_t> Inputs; ///< Indices into G.inputs().
  std::vector<std::pair<std::vector<int64_t>, std::unique_ptr<ir::Graph>>>
      Made;
};

} // namespace nng::backends::cpu

#endif
