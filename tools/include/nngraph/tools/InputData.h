//===- InputData.h - Model inputs and outputs as .npz files -----*- C++ -*-===//
//
// Real data for a graph: an .npz archive holding one array per graph input,
// keyed by the input's name (numpy.savez("data.npz", x=...)), checked
// against the graph's inputs (every input present, no unknown keys, equal
// dtypes and ranks, equal static dims; a symbolic dim such as N takes any
// size, the same in every input) and returned in graph-input order.
// nngraph-run and nngraph-bench --inputs run a model on it (the arrays bind
// the symbolic dims: bindDimsFromData); calibration feeds it batch by
// batch (splitBatches, samples along dim 0). saveOutputsNpz writes a run's
// outputs the same way, one array per graph output name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"
#include "nngraph/tools/ToolSupport.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nng::weights {
class TensorMap;
} // namespace nng::weights

namespace nng::tools {

/// A graph's inputs read from a file: one tensor per graph input.
struct InputData {
  /// Where the arrays came from (the file's path), for messages.
  std::string Source;
  /// The graph inputs' names, in graph-input order.
  std::vector<std::string> Names;
  /// One contiguous CPU tensor per graph input, in graph-input order.
  std::vector<rt::Tensor> Tensors;
  /// The size each symbolic dim of the graph's inputs took ("N" -> 32).
  DimBindings Dims;
  /// Where each symbol of Dims was bound, for messages: "input 'x', axis 0".
  std::map<std::string, std::string, std::less<>> DimOrigins;
};

/// Reads the .npz file Path and checks it against G's inputs (see
/// matchInputData). Throws nng::Error naming the file when it cannot be
/// read or does not fit.
InputData loadInputData(const std::string &Path, const ir::Graph &G);

/// Checks Arrays (keys: graph input names) against G's inputs and returns
/// them in graph-input order. Source names the arrays' origin in messages.
/// Throws nng::Error for a graph input without an array (listing the
/// arrays there are), arrays that name no graph input (listing the graph's
/// inputs), a dtype or rank that differs from the input's, a static dim
/// that differs, or a symbolic dim whose size differs from the size the
/// same symbol took in an earlier input (naming input, axis, expected and
/// got). Unknown dims ("?") and inputs of unknown rank take any size.
InputData matchInputData(const weights::TensorMap &Arrays, const ir::Graph &G,
                         const std::string &Source);

/// The number of samples in Data: the size of dim 0, which every input
/// must share. Throws nng::Error for a rank-0 input or inputs whose dim-0
/// sizes differ (naming them), or when Data has no inputs at all.
int64_t sampleCount(const InputData &Data);

/// Splits Data along dim 0 into batches of BatchSize samples, each a list
/// of tensors in graph-input order (views of Data's tensors); the last
/// batch holds the remainder and may be smaller. Throws nng::Error when
/// BatchSize < 1, for the cases sampleCount refuses, and when there are no
/// samples (dim 0 is 0).
std::vector<std::vector<rt::Tensor>> splitBatches(const InputData &Data,
                                                  int64_t BatchSize);

/// Binds Dims to the sizes Data's arrays gave the symbolic dims; throws
/// Error(InvalidArgument) for a --dim binding that says otherwise, naming
/// the input and axis that bound it.
void bindDimsFromData(const InputData &Data, DimBindings &Dims);

/// Data's tensors in the order of G's inputs, by name (G may be the
/// optimized graph of the one Data was matched against); throws
/// Error(Internal) when G has an input Data lacks.
std::vector<rt::Tensor> inputsInGraphOrder(const ir::Graph &G,
                                           const InputData &Data);

/// The .npz entry of each graph output name: the name itself where a zip
/// entry may carry it (weights::isNpzKey), else with what zip readers
/// refuse percent-encoded ('%' -> %25, a leading '/' -> %2F, a ".."
/// component -> %2E%2E, a backslash -> %5C, NUL -> %00): torch's
/// "/layer/Add_output_0" is saved as "%2Flayer/Add_output_0". Throws
/// Error(InvalidArgument) when two different names get one entry; checked
/// before a run.
std::vector<std::string> npzEntryNames(const std::vector<std::string> &Names);

/// Writes Tensors to the .npz file Path, one array per entry of Names (the
/// graph outputs' names, as npzEntryNames makes them entries), atomically:
/// on any error the file is left untouched. A name repeated with equal
/// tensors (a graph output listed twice) is written once; repeated with
/// different tensors, an error.
void saveOutputsNpz(const std::string &Path,
                    const std::vector<std::string> &Names,
                    const std::vector<rt::Tensor> &Tensors);

} // namespace nng::tools
