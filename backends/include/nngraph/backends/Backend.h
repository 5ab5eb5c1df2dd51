//===- Backend.h - The backend interface -------------------------*- C++ -*-===//
//
// A Backend says which nodes it supports and compiles a graph into an
// Executable, which runs with input tensors and returns output tensors and
// owns whatever memory plan it needs. Backends are found by name
// ("reference", later "cpu" and "cuda").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nng::backends {

/// This layer names the runtime's data tensor plainly.
using rt::Tensor;

/// A compiled graph, ready to run.
class Executable {
public:
  virtual ~Executable();
  /// Runs with one tensor per graph input (in order); returns one tensor per
  /// graph output. Throws Error naming the input when a tensor does not fit
  /// its declared type.
  virtual std::vector<rt::Tensor> run(const std::vector<rt::Tensor> &Inputs) = 0;
  /// Runs with the outputs going to Outputs, one entry per graph output
  /// (ONNX Runtime's IOBinding): a defined tensor there is written in place
  /// and must be contiguous, with the dtype and shape this run produces,
  /// sharing no memory with an input; an undefined one is set to a new
  /// tensor. A decoder step can write its next KV cache into buffers the
  /// caller keeps. The cpu backend's steps write such outputs directly; the
  /// default runs run() and copies. Throws Error(InvalidArgument) naming
  /// the output when a tensor does not fit.
  virtual void runInto(const std::vector<rt::Tensor> &Inputs,
                       std::vector<rt::Tensor> &Outputs);
  /// Does now what the first run() with inputs of these dtypes and shapes
  /// would do before running (the cpu backend: specialise and compile the
  /// schedule, JIT kernels included), so it can be timed as compile time.
  /// The default does nothing.
  virtual void prepare(const std::vector<rt::Tensor> &Inputs) {}
  /// True when run() and runInto() may be called from several threads at
  /// once (the cpu backend's compiled executables); callers serialize the
  /// runs of the others. The default says no.
  virtual bool concurrentRuns() const { return false; }
};

/// A way to execute graphs.
class Backend {
public:
  virtual ~Backend();
  virtual std::string_view name() const = 0;
  /// True when the backend compiles N into its own kernels: the partition
  /// its compile() makes (cpu: the kernel table KernelTable.def). A node it
  /// does not support still runs, on its node kernel, in a fallback step.
  virtual bool supportsOp(const ir::Node &N) const = 0;
  /// Compiles G (which must verify). Throws Error(Unsupported) listing the
  /// nodes it cannot run.
  virtual std::unique_ptr<Executable> compile(const ir::Graph &G) = 0;
  /// The names of this backend's own passes that the -O Level pipeline
  /// runs after the generic preset (passes/Pipelines.h): passes that make
  /// nodes only some backends run well, such as the fused regions the LLVM
  /// JIT compiles. Names only, resolved by the passes library above this
  /// one. The default lists none.
  virtual std::vector<std::string> pipelinePasses(int Level) const {
    return {};
  }
};

/// The backend registered under Name; throws Error(InvalidArgument) listing
/// the known names when there is none.
Backend &getBackend(std::string_view Name);
/// Names of the backends in this build.
std::vector<std::string> backendNames();

/// Checks Inputs against G's declared input types (count, dtype, rank,
/// static dims, and the same value for each symbolic dim name); throws
/// Error(InvalidArgument) naming the offending input.
void checkInputs(const ir::Graph &G, const std::vector<rt::Tensor> &Inputs);

/// Checks the tensors given to runInto for G's outputs: Outputs has one
/// entry per graph output and each defined one is contiguous, has dtype
/// Types[I] and shape Shapes[I] (what the run produces) and shares no
/// storage with an input; throws Error(InvalidArgument) naming the output.
void checkOutputBuffers(const ir::Graph &G, const std::vector<rt::Tensor> &Inputs,
                        const std::vector<rt::Tensor> &Outputs,
                        const std::vector<DType> &Types,
                        const std::vector<Shape> &Shapes);
/// The size check alone (before the shapes are known).
void checkOutputCount(const ir::Graph &G, const std::vector<rt::Tensor> &Outputs);

} // namespace nng::backends
