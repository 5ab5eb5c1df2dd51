//===- GraphModule.h - A traced graph with its weights, callable *- C++ -*-===//
//
// fx::GraphModule is what symbolic_trace returns, like torch.fx's: it owns
// the graph (initializers = the weights, under the source module's
// state_dict keys) and runs it like the module, on a chosen backend
// ("reference" by default), compiling on first call. Its output has the
// structure forward returned (tensor, tuple, list, dict). It saves to .onnx
// and .nng, prints its nodes as a torch.fx-style table, and loads and
// returns state dicts under the source module's keys.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/StateDict.h"
#include "nngraph/frontend/nn/Value.h"
#include "nngraph/ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace nng::backends {
class Executable;
} // namespace nng::backends

namespace nng::fx {

/// The structure of forward's result: a tree whose tensor leaves are graph
/// output indices; non-tensor leaves (numbers, strings, None) are kept as
/// constants.
struct OutputStructure {
  enum class Kind { Tensor, List, Tuple, Dict, Constant };
  Kind K = Kind::Tensor;
  /// Kind::Tensor: the index into the graph's outputs.
  size_t Index = 0;
  std::vector<OutputStructure> Children;
  /// Kind::Dict: the keys, parallel to Children.
  std::vector<std::string> Keys;
  /// Kind::Constant: the value.
  nn::Value Constant;
};

class GraphModule {
public:
  /// G: the traced graph; Out: how graph outputs rebuild forward's result;
  /// KeepAlive: what the graph's callbacks need (leaf modules); SourceType:
  /// the traced module's type name.
  GraphModule(std::shared_ptr<ir::Graph> G, OutputStructure Out,
              std::vector<std::shared_ptr<void>> KeepAlive,
              std::string SourceType);

  ir::Graph &graph() { return *G; }
  const ir::Graph &graph() const { return *G; }
  const OutputStructure &output_structure() const { return Out; }
  const std::string &source_type() const { return SourceType; }

  /// Runs the graph on Inputs (one per graph input) and rebuilds forward's
  /// result. Input count, dtypes, ranks and static dims are checked against
  /// the graph's inputs (errors name the input); a symbolic dim ("N")
  /// accepts any extent, the same one wherever the symbol appears. The
  /// executable is compiled on the first call and cached.
  nn::Value forward(const std::vector<Tensor> &Inputs);
  /// forward(), for a single-tensor result (an error names the structure
  /// otherwise).
  Tensor operator()(const std::vector<Tensor> &Inputs);
  /// The backend that runs the graph ("reference", "cpu"); the executable is
  /// rebuilt on change. An unknown name is an error listing the known ones.
  void set_backend(std::string Name);
  const std::string &backend() const { return BackendName; }
  /// Drops the cached executable and compiles the graph now (call it after
  /// editing graph() in place, as torch.fx's recompile()).
  void recompile();

  /// The initializers as a state dict, in graph order. The tensors share
  /// the graph's data.
  nn::StateDict state_dict() const;
  /// Copies tensors into the initializers of the same key (converting the
  /// dtype to the initializer's). A shape mismatch is always an error;
  /// strict: missing and unexpected keys are errors too. Errors list every
  /// offending key (with both shapes) and leave the module unchanged.
  /// Returns the missing and unexpected keys (non-strict).
  nn::LoadStateDictResult load_state_dict(const nn::StateDict &SD,
                                          bool Strict = true);

  /// torch.fx's print_tabular: one row per graph input (placeholder),
  /// initializer (get_attr), node (call_function, or call_module for an
  /// nng.ModuleCall node) and one for the outputs (output), with columns
  /// opcode, name (the output values), target (the op, the key), args (the
  /// input values) and scope ("fc (Linear)").
  std::string print_tabular() const;
  /// The graph in the text format.
  std::string code() const;
  /// Saves the graph as .onnx or .nng (by extension), atomically.
  void save(const std::string &Path) const;

private:
  std::shared_ptr<ir::Graph> G;
  OutputStructure Out;
  std::vector<std::shared_ptr<void>> KeepAlive;
  std::string SourceType;
  std::string BackendName = "reference";
  /// The compiled executable (built on first forward).
  std::shared_ptr<backends::Executable> Exec;
};

} // namespace nng::fx
