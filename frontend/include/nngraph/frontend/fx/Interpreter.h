//===- Interpreter.h - Run a graph node by node, with a hook ----*- C++ -*-===//
//
// fx::Interpreter runs an ir::Graph one node at a time, like torch.fx's
// Interpreter: run() binds the inputs and initializers, then calls the
// overridable run_node() for every node in order and keeps every value's
// tensor in an environment that subclasses and callers can read. The
// default run_node() runs the node as a one-node graph on the chosen
// backend (each node's executable is compiled once and cached); the
// backend name "eager" runs it through the eager dispatcher's single-op
// cache instead (dispatch::runEager), as nng::Tensor operations do.
//
// compareBackends() runs a graph on two backends node by node, feeding both
// the same (first backend's) inputs at every node, and reports the first
// node whose outputs differ beyond the tolerances.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nng::fx {

class GraphModule;

/// Runs a graph node by node; subclass it and override run_node() to
/// observe or replace what each node computes.
class Interpreter {
public:
  /// Interprets G (which must outlive the interpreter) on Backend
  /// ("reference", "cpu", ... or "eager").
  explicit Interpreter(const ir::Graph &G, std::string Backend = "reference");
  /// Interprets GM's graph on GM's backend.
  explicit Interpreter(const GraphModule &GM);
  virtual ~Interpreter();

  /// Runs the graph on Inputs (one per graph input, checked as by the
  /// backends: count, dtype, rank, static dims) and returns its outputs.
  /// Errors from a node name the node and its scope.
  std::vector<rt::Tensor> run(const std::vector<rt::Tensor> &Inputs);

  /// Computes node N from its input tensors (an undefined tensor for an
  /// absent optional input); returns one tensor per output. The default
  /// runs N on the backend; overrides usually call it and then look at or
  /// change the result.
  virtual std::vector<rt::Tensor>
  run_node(const ir::Node &N, const std::vector<rt::Tensor> &Inputs);

  /// The tensor of V from the current or last run (inputs, initializers
  /// and every node output), or null when V has none yet.
  const rt::Tensor *valueOf(const ir::Value *V) const;
  /// The whole environment of the last run.
  const std::unordered_map<const ir::Value *, rt::Tensor> &env() const {
    return Env;
  }
  const ir::Graph &graph() const { return G; }
  const std::string &backend() const { return BackendName; }

protected:
  /// The default run_node: N as a one-node graph on the backend.
  std::vector<rt::Tensor> runOnBackend(const ir::Node &N,
                                       const std::vector<rt::Tensor> &Inputs);

private:
  const ir::Graph &G;
  std::string BackendName;
  std::unordered_map<const ir::Value *, rt::Tensor> Env;
  struct NodeCache;
  std::unique_ptr<NodeCache> Cache;
};

/// How close two tensors must be: |a - b| <= Atol + Rtol * |b| elementwise
/// (NaN equals NaN); integer and bool tensors must match exactly.
struct Tolerances {
  double Atol = 1e-5;
  double Rtol = 1e-5;
};

/// What compareBackends() found.
struct BackendDiff {
  /// False when every node agreed.
  bool Differs = false;
  /// The first node that differs: its position, name, op, scope and the
  /// output that differs.
  size_t NodeIndex = 0;
  std::string NodeName, Op, ScopePath, ScopeType, OutputName;
  /// The largest |a - b| over that output (infinity for a shape or dtype
  /// mismatch, or a NaN on one side only).
  double MaxError = 0;
  /// Why it differs, in one line ("shape f32[2,3] vs f32[3,2]", "max error
  /// 0.25 at element 3 (1.5 vs 1.25)").
  std::string Detail;
  /// Number of nodes compared.
  size_t NodesCompared = 0;
  /// A readable report: "all N nodes agree" or the first node that differs.
  std::string message() const;
};

/// Runs G on backends A and B node by node: A's interpreter runs the whole
/// graph; every node is then run on B with A's input tensors and its outputs
/// compared with A's. Reports the first node (in graph order) whose outputs
/// differ beyond T.
BackendDiff compareBackends(const ir::Graph &G,
                            const std::vector<rt::Tensor> &Inputs,
                            const std::string &A, const std::string &B,
                            Tolerances T = {});
/// The same with two interpreters of the same graph (subclasses included,
/// e.g. one that perturbs a node to test the comparison).
BackendDiff compareInterpreters(Interpreter &A, Interpreter &B,
                                const std::vector<rt::Tensor> &Inputs,
                                Tolerances T = {});

/// Compares one pair of tensors under T; returns "" when they agree, else
/// why not, and sets MaxError.
std::string compareTensors(const rt::Tensor &A, const rt::Tensor &B,
                           Tolerances T, double &MaxError);

} // namespace nng::fx
