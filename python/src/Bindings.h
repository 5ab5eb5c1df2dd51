//===- Bindings.h - What the binding files share ----------------*- C++ -*-===//
//
// The Python module is a thin layer over the library: each file binds one
// part (models and passes, inference sessions, state-dict files) with a
// bind* function that Module.cpp calls. The model object is shared here
// because sessions are made from it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng::python {

namespace py = pybind11;

/// A model as Python holds it: a graph, and where it came from.
struct Model {
  /// The graph (for a traced zoo model, it lives in the GraphModule that
  /// this pointer also keeps alive).
  std::shared_ptr<ir::Graph> Graph;
  /// The file it was loaded from, or how it was made ("resnet18 (zoo)").
  std::string Source;
};

/// Obj as a file path when it is one: a str or an os.PathLike such as a
/// pathlib.Path.
std::optional<std::string> asPath(py::handle Obj);
/// asPath(Obj), or an error saying that What takes a path.
std::string pathArg(py::handle Obj, const std::string &What);

/// One nngraph.ValueInfo (name, dtype, shape, type) per value, as
/// onnxruntime's get_inputs() describes a model's inputs.
py::list valueInfos(const std::vector<ir::Value *> &Values);

/// nngraph.Model and the functions that make models (load, loads,
/// from_zoo), the passes (optimize, prune, quantize) and inspect.
void bindModel(py::module_ &M);
/// Model.optimize, prune, quantize and inspect (on the class bindModel
/// made).
void bindPasses(py::module_ &M);
/// nngraph.InferenceSession: a model compiled on a backend; run().
void bindSession(py::module_ &M);
/// load_state_dict / save_state_dict of .pt, safetensors and .npz files.
void bindWeights(py::module_ &M);

} // namespace nng::python
