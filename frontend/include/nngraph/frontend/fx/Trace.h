//===- Trace.h - FX-style symbolic tracing of nn modules ---------*- C++ -*-===//
//
// nng::fx::symbolic_trace runs a module's ordinary forward under the trace
// mode of the dispatcher (Dispatch.h): every tensor is a proxy that carries
// a dtype and a shape (dims constant or symbolic) and stands for an
// ir::Value; every dispatched op appends a node to an ir::Graph, scoped with
// the module path and type it ran in. Parameters and buffers become
// initializers named by their state_dict keys (a shared parameter once);
// other C++ tensors become Constant nodes; C++ loops unroll. Tensor::size(i)
// of a dynamic dim is a SymInt whose use in view/reshape/expand records
// Shape/Gather/Concat nodes. Reading a proxy's data (item(), to_vector(),
// bool) throws TraceError naming the module path and the op. Modules for
// which Tracer::is_leaf_module says true are recorded as one nng.ModuleCall
// node that runs the module eagerly through a callback. docs/fx.md is the
// guide (example extents of dynamic dims, train/eval, randomness).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/runtime/Error.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace nng::fx {

/// One dim of an input spec: a fixed extent or a named dynamic dim ("N").
class Dim {
public:
  Dim(int64_t Extent) : Extent(Extent) {}
  Dim(int Extent) : Extent(Extent) {}
  Dim(const char *Name) : Name(Name) {}
  Dim(std::string Name) : Name(std::move(Name)) {}
  bool isDynamic() const { return !Name.empty(); }
  int64_t extent() const { return Extent; }
  const std::string &name() const { return Name; }

private:
  int64_t Extent = -1;
  std::string Name;
};

/// What one input of forward looks like: InputSpec({"N", 3, 224, 224}).
struct InputSpec {
  InputSpec(std::initializer_list<Dim> Dims, DType Type = DType::F32,
            std::string Name = "")
      : Dims(Dims), Type(Type), Name(std::move(Name)) {}
  InputSpec(std::vector<Dim> Dims, DType Type = DType::F32,
            std::string Name = "")
      : Dims(std::move(Dims)), Type(Type), Name(std::move(Name)) {}
  std::vector<Dim> Dims;
  DType Type = DType::F32;
  /// The graph input's name; empty: "x" for one input, else "x0", "x1", ...
  std::string Name;
};

/// Groups the graph inputs into forward's arguments, for a forward that
/// takes a structure: given one proxy per InputSpec, in order, it returns
/// the argument list, e.g. {In[0], nn::Value::list({In[1], ..., In[K]})}
/// for forward(input_ids, std::vector<Tensor> past). The graph keeps one
/// input per spec (ONNX has no nested inputs). Without one, each input is
/// one argument.
using ArgPacker =
    std::function<std::vector<nn::Value>(const std::vector<Tensor> &Inputs)>;

/// Thrown when forward does something a trace cannot record (reading a
/// proxy's data, an op without a tracing rule); the message names the module
/// path, the op, and suggests marking the module as a leaf.
class TraceError : public Error {
public:
  explicit TraceError(std::string Message);
};

/// What a trace produces, before it becomes a GraphModule.
struct TraceResult {
  std::shared_ptr<ir::Graph> Graph;
  OutputStructure Out;
  /// Leaf-module callback handles and the modules they call.
  std::vector<std::shared_ptr<void>> KeepAlive;
  /// The traced module's type name.
  std::string SourceType;
};

/// Traces modules; subclass it to choose leaf modules.
class Tracer {
public:
  virtual ~Tracer();
  /// Whether the module at Path (as in named_modules; "" is the root) is
  /// recorded as one call node instead of being traced through. Default:
  /// false for every module.
  virtual bool is_leaf_module(const nn::ModuleBase &M, const std::string &Path);
  /// Runs Root.forward on proxies built from Inputs (grouped into
  /// arguments by Pack when given) and returns the graph.
  GraphModule trace(nn::ModuleBase &Root, const std::vector<InputSpec> &Inputs,
                    const ArgPacker &Pack = {});
  /// trace() without the GraphModule: the graph, output structure and
  /// what its callbacks need.
  TraceResult trace_graph(nn::ModuleBase &Root,
                          const std::vector<InputSpec> &Inputs,
                          const ArgPacker &Pack = {});
};

/// Tracer().trace(Root, Inputs, Pack).
GraphModule symbolic_trace(nn::ModuleBase &Root,
                           const std::vector<InputSpec> &Inputs,
                           const ArgPacker &Pack = {});

/// True while a trace runs on this thread (layers use it to skip side
/// effects such as running-statistics updates); false inside the eager
/// run of a leaf module.
bool isTracing();

} // namespace nng::fx
