//===- ModelBindings.cpp - nngraph.Model: load, save, weights, zoo --------===//
//
// A Model is a graph held by Python: loaded from .onnx or .nng (load,
// loads), built from a zoo architecture and a PyTorch state dict
// (from_zoo, what `nngraph-convert --arch` does), saved atomically, printed
// in the text format, copied, and its initializers read and written as
// dicts of NumPy arrays (state_dict, load_state_dict). The passes are bound
// in PassBindings.cpp, compiling and running in SessionBindings.cpp.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <pybind11/stl.h>

#include <sstream>

namespace nng::python {
namespace {

/// What get_inputs()/get_outputs() describe of one value.
struct ValueInfo {
  std::string Name;
  std::string DType; ///< NumPy's name: "float32".
  py::list Shape;    ///< int per static dim, str per symbol, None unknown.
  std::string Type;  ///< nngraph's: "f32[N, 3, 224, 224]".
};

std::shared_ptr<Model> makeModel(std::unique_ptr<ir::Graph> G,
                                 std::string Source) {
  auto M = std::make_shared<Model>();
  M->Graph = std::move(G);
  M->Source = std::move(Source);
  return M;
}

std::shared_ptr<Model> load(py::handle PathObj) {
  std::string Path = pathArg(PathObj, "load");
  std::unique_ptr<ir::Graph> G;
  {
    py::gil_scoped_release NoGil;
    G = frontend::loadModel(Path);
  }
  return makeModel(std::move(G), Path);
}

std::shared_ptr<Model> loads(const std::string &Text, const std::string &Name) {
  return makeModel(frontend::loadModelFromText(Text, Name), Name);
}

/// One line: "resnet18: x: f32[N, 3, 224, 224] -> output: f32[N, 1000]".
std::string signature(const ir::Graph &G) {
  std::ostringstream OS;
  auto List = [&](const std::vector<ir::Value *> &Vs) {
    for (size_t I = 0; I < Vs.size(); ++I)
      OS << (I ? ", " : "") << Vs[I]->name() << ": "
         << Vs[I]->type().toString();
  };
  List(G.inputs());
  OS << " -> ";
  List(G.outputs());
  return OS.str();
}

/// The initializers of G as a dict of read-only arrays viewing their data.
py::dict stateDict(const Model &M) {
  weights::TensorMap Map;
  for (const ir::Value *V : M.Graph->initializers()) {
    NNG_CHECK(V->data().defined(), "initializer '", V->name(), "' of '",
              M.Source,
              "' has no data: the text file elides it (a hash only); save "
              "models with their weights (Model.save writes them inline)");
    Map.insert(V->name(), V->data());
  }
  return dictFromTensorMap(Map, Sharing::ReadOnly);
}

py::dict loadStateDict(Model &M, py::handle StateDict, bool Strict) {
  weights::TensorMap Map = tensorMapFromDict(StateDict, "state_dict");
  weights::LoadResult R = weights::loadInitializers(*M.Graph, Map, Strict);
  py::dict D;
  D["missing_keys"] = py::cast(R.MissingKeys);
  D["unexpected_keys"] = py::cast(R.UnexpectedKeys);
  return D;
}

/// A zoo architecture with Weights loaded (a path, or a dict of
/// arrays such as a torch state_dict()), in eval mode, traced with the
/// zoo's input shape and batch dim Batch (None: the symbol "N").
std::shared_ptr<Model> fromZoo(const std::string &Arch, py::object Weights,
                               std::optional<int64_t> Batch,
                               const std::string &KeyPath, bool Strict) {
  const zoo::ModelInfo &Info = zoo::info(Arch); // Lists the names if unknown.
  NNG_CHECK(!Batch || *Batch > 0,
            "from_zoo: batch must be positive or None "
            "(a dynamic batch dim 'N'), got ",
            *Batch);
  nn::ModulePtr Net = zoo::create(Arch);
  weights::LoadOptions LO;
  LO.KeyPath = KeyPath;
  LO.Strict = Strict;
  try {
    if (std::optional<std::string> Path = asPath(Weights)) {
      weights::loadWeights(*Net, *Path, LO);
    } else if (!Weights.is_none()) {
      NNG_CHECK(KeyPath.empty(),
                "from_zoo: key_path selects a sub-dict of "
                "a .pt file; with a dict of arrays, pass that sub-dict");
      weights::loadWeights(*Net, tensorMapFromDict(Weights, "weights"), LO);
    }
  } catch (Error &E) {
    E.addContext("while loading the weights into the zoo's " + Arch +
                 " (the keys must be its state_dict keys, as torchvision's)");
    throw;
  }
  Net->eval();
  std::vector<fx::Dim> Dims;
  Dims.push_back(Batch ? fx::Dim(*Batch) : fx::Dim("N"));
  for (size_t I = 1; I < Info.InputShape.size(); ++I)
    Dims.push_back(fx::Dim(Info.InputShape[I]));
  std::shared_ptr<fx::GraphModule> Traced;
  {
    py::gil_scoped_release NoGil;
    Traced = std::make_shared<fx::GraphModule>(
        fx::symbolic_trace(*Net, {fx::InputSpec(Dims)}));
  }
  Traced->graph().setName(Arch);
  auto M = std::make_shared<Model>();
  // The graph lives in the GraphModule (with what its nodes need).
  M->Graph = std::shared_ptr<ir::Graph>(Traced, &Traced->graph());
  M->Source = Arch + " (zoo)";
  return M;
}

} // namespace

py::list valueInfos(const std::vector<ir::Value *> &Values) {
  py::list L;
  for (const ir::Value *V : Values) {
    ValueInfo I;
    I.Name = V->name();
    I.DType = numpyDTypeName(V->type().dtype());
    I.Type = V->type().toString();
    if (V->type().hasRank())
      for (int64_t D = 0; D < V->type().rank(); ++D) {
        const ir::Dim &Dim = V->type().dim(D);
        if (Dim.isStatic())
          I.Shape.append(Dim.value());
        else if (Dim.isSymbolic())
          I.Shape.append(Dim.symbol());
        else
          I.Shape.append(py::none());
      }
    else
      I.Shape = py::list();
    L.append(py::cast(std::move(I)));
  }
  return L;
}

void bindModel(py::module_ &M) {
  py::class_<ValueInfo>(M, "ValueInfo",
                        "A graph input or output: name, dtype (NumPy's name), "
                        "shape (int per static dim, str per symbolic dim such "
                        "as 'N', None when unknown) and type (nngraph's).")
      .def_readonly("name", &ValueInfo::Name)
      .def_readonly("dtype", &ValueInfo::DType)
      .def_readonly("shape", &ValueInfo::Shape)
      .def_readonly("type", &ValueInfo::Type)
      .def("__repr__", [](const ValueInfo &I) {
        return "ValueInfo(" + I.Name + ": " + I.Type + ")";
      });

  py::class_<Model, std::shared_ptr<Model>>(
      M, "Model",
      "A model graph (ONNX operator semantics). Make one with load(), "
      "loads() or from_zoo(); transform it in place with optimize(), "
      "prune() and quantize(); run it with compile().")
      .def_property_readonly("name",
                             [](const Model &Md) { return Md.Graph->name(); })
      .def_property_readonly(
          "source", [](const Model &Md) { return Md.Source; },
          "The file it was loaded from, or how it was made.")
      .def_property_readonly(
          "inputs",
          [](const Model &Md) { return valueInfos(Md.Graph->inputs()); })
      .def_property_readonly(
          "outputs",
          [](const Model &Md) { return valueInfos(Md.Graph->outputs()); })
      .def_property_readonly(
          "num_nodes", [](const Model &Md) { return Md.Graph->numNodes(); })
      .def(
          "save",
          [](const Model &Md, py::handle PathObj, int64_t InlineLimit) {
            std::string Path = pathArg(PathObj, "Model.save");
            frontend::SaveOptions O;
            O.InlineLimit = InlineLimit;
            py::gil_scoped_release NoGil;
            frontend::saveModel(*Md.Graph, Path, O);
          },
          py::arg("path"), py::arg("inline_limit") = -1,
          "Writes the model atomically, as ONNX (.onnx) or the text format "
          "(.nng), by extension. Text format: initializers with more than "
          "inline_limit elements are written as a hash only (negative, the "
          "default: every weight inline, so that load() gets them back).")
      .def(
          "text",
          [](const Model &Md, int64_t InlineLimit) {
            ir::PrintOptions O;
            O.InlineLimit = InlineLimit;
            return ir::printGraph(*Md.Graph, O);
          },
          py::arg("inline_limit") = 64 * 1024,
          "The model in the text format (weights with more than "
          "inline_limit elements as a hash; negative: all inline).")
      .def("__str__",
           [](const Model &Md) { return ir::printGraph(*Md.Graph, {}); })
      .def("__repr__",
           [](const Model &Md) {
             return "<nngraph.Model '" + Md.Graph->name() +
                    "': " + signature(*Md.Graph) + "; " +
                    std::to_string(Md.Graph->numNodes()) + " nodes>";
           })
      .def(
          "copy",
          [](const Model &Md) {
            return makeModel(Md.Graph->clone(), Md.Source);
          },
          "An independent copy (weights are shared until one is replaced).")
      .def("state_dict", &stateDict,
           "The initializers (weights and buffers) by name, as read-only "
           "NumPy arrays viewing the model's data.")
      .def("load_state_dict", &loadStateDict, py::arg("state_dict"),
           py::arg("strict") = true,
           "Replaces initializers by name from a dict of arrays (a torch "
           "state_dict() works as it is). A shape mismatch is always an "
           "error, missing and unexpected keys too when strict; returns "
           "{'missing_keys': [...], 'unexpected_keys': [...]}.");

  M.def("load", &load, py::arg("path"),
        "Loads and verifies a model: .onnx (opsets 7-17) or .nng (text).");
  M.def("loads", &loads, py::arg("text"), py::arg("name") = "<string>",
        "Parses a model in the text format; name appears in messages.");
  M.def("from_zoo", &fromZoo, py::arg("arch"), py::arg("weights") = py::none(),
        py::arg("batch") = py::none(), py::arg("key_path") = "",
        py::arg("strict") = true,
        "Builds the zoo architecture arch (zoo_names()), loads weights "
        "(a .pt/.safetensors/.npz path, or a dict of arrays such as a "
        "torchvision model's state_dict(); None keeps the random "
        "initialization), switches it to eval and traces it into a Model "
        "with the zoo's input shape and batch dim batch (None: symbolic "
        "'N'). key_path selects a sub-dict of a .pt checkpoint "
        "('model_state_dict'); strict=False loads the matching keys and "
        "keeps the initialization of the rest.");
  M.def("zoo_names", &zoo::names, "The architectures from_zoo() builds.");
}

} // namespace nng::python
