//===- SessionBindings.cpp - nngraph.InferenceSession: compile and run ----===//
//
// An InferenceSession is a model compiled on a backend (onnxruntime's
// name and calling convention: run(output_names, input_feed) returns a
// list of arrays). The session compiles a copy of the graph, so changing
// the model afterwards does not change it; as onnxruntime's session, it
// optimizes that copy first (-O2 for the backend, unless told otherwise),
// while Model.compile compiles the model as it is (optimized or not by
// Model.optimize). Inputs are read where they lie
// when their dtype matches and their strides fit (Arrays.h); outputs are
// returned as arrays owning the output tensors' memory (the backends
// give every run fresh output tensors), copied only when an output shares
// memory with something else (an input or a weight passed through);
// run_into writes them into the caller's arrays instead. The
// GIL is released while the backend compiles and runs; one run at a time
// per session.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"
#include "nngraph/runtime/CpuCount.h"
#include "nngraph/runtime/Parallel.h"

#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/tools/CpuStatsReport.h"
#include "nngraph/tools/InputData.h"

#include <pybind11/stl.h>

#include <mutex>

namespace nng::python {
namespace {

struct Session {
  std::shared_ptr<ir::Graph> Graph; ///< The compiled copy.
  std::unique_ptr<backends::Executable> Exec;
  std::string Backend;
  std::string Source;
  /// Serializes runs of executables that are not safe to run at once
  /// (Executable::concurrentRuns); the cpu backend's run concurrently.
  std::mutex Running;
  std::unique_lock<std::mutex> serialize() {
    return Exec->concurrentRuns() ? std::unique_lock<std::mutex>()
                                  : std::unique_lock<std::mutex>(Running);
  }
};

/// A session of ModelOrPath on Backend, its copy of the graph optimized by
/// Optimize first: an -O level ("O2") for that backend, a pass list, or
/// "O0" (as it is).
std::shared_ptr<Session> makeSession(py::handle ModelOrPath,
                                     const std::string &Backend,
                                     const std::string &Optimize) {
  auto S = std::make_shared<Session>();
  S->Backend = Backend;
  if (std::optional<std::string> Path = asPath(ModelOrPath)) {
    S->Source = *Path;
    py::gil_scoped_release NoGil;
    S->Graph = frontend::loadModel(S->Source);
  } else {
    NNG_CHECK(py::isinstance<Model>(ModelOrPath),
              "InferenceSession takes an nngraph.Model or a model path "
              "(.onnx, .nng), not ",
              py::str(py::type::handle_of(ModelOrPath).attr("__name__"))
                  .cast<std::string>());
    const Model &M = ModelOrPath.cast<const Model &>();
    S->Source = M.Source;
    S->Graph = M.Graph->clone();
  }
  std::string Pipeline = passes::resolvePipeline(Optimize, Backend);
  py::gil_scoped_release NoGil;
  if (!Pipeline.empty()) { // S->Graph is the session's own copy.
    passes::PassManager PM;
    PM.addPipeline(Pipeline);
    PM.run(*S->Graph);
  }
  S->Exec = backends::getBackend(Backend).compile(*S->Graph);
  return S;
}

/// The feed as tensors in graph-input order: a dict by input name, or a
/// sequence in input order.
std::vector<rt::Tensor> feedTensors(const Session &S, py::handle Feed) {
  const ir::Graph &G = *S.Graph;
  if (py::hasattr(Feed, "items"))
    return tools::matchInputData(tensorMapFromDict(Feed, "input_feed"), G,
                                 "input_feed")
        .Tensors;
  NNG_CHECK(py::isinstance<py::sequence>(Feed) &&
                !py::isinstance<py::str>(Feed),
            "input_feed must be a dict of input name -> array, or a list of "
            "arrays in input order");
  py::sequence Seq = py::reinterpret_borrow<py::sequence>(Feed);
  NNG_CHECK(Seq.size() == G.inputs().size(), "input_feed has ", Seq.size(),
            " arrays for the ", G.inputs().size(), " inputs of '", S.Source,
            "'");
  std::vector<rt::Tensor> Ts;
  for (size_t I = 0; I < Seq.size(); ++I)
    Ts.push_back(
        tensorFromArray(Seq[I], "input '" + G.inputs()[I]->name() + "'"));
  backends::checkInputs(G, Ts);
  return Ts;
}

/// Which graph outputs to return, by index.
std::vector<size_t> outputIndices(const Session &S, py::handle Names) {
  const auto &Outs = S.Graph->outputs();
  std::vector<size_t> Idx;
  if (Names.is_none()) {
    for (size_t I = 0; I < Outs.size(); ++I)
      Idx.push_back(I);
    return Idx;
  }
  for (py::handle H : Names) {
    std::string Name = py::str(H).cast<std::string>();
    size_t I = 0;
    while (I < Outs.size() && Outs[I]->name() != Name)
      ++I;
    if (I == Outs.size()) {
      std::string Known;
      for (const ir::Value *V : Outs)
        Known += (Known.empty() ? "" : ", ") + V->name();
      fail(ErrorKind::InvalidArgument, "'", Name, "' is not an output of '",
           S.Source, "'; its outputs are: ", Known);
    }
    Idx.push_back(I);
  }
  return Idx;
}

py::list run(Session &S, py::object OutputNames, py::object Feed) {
  std::vector<size_t> Wanted = outputIndices(S, OutputNames);
  std::vector<rt::Tensor> Inputs = feedTensors(S, Feed);
  std::vector<rt::Tensor> Outs;
  {
    py::gil_scoped_release NoGil;
    std::unique_lock<std::mutex> Lock = S.serialize();
    Outs = S.Exec->run(Inputs);
  }
  py::list Result;
  for (size_t I : Wanted) {
    rt::Tensor &T = Outs[I];
    // Ours alone (this vector holds the only reference): hand it over.
    bool Exclusive = T.storage() && T.storage().use_count() == 1;
    Result.append(
        arrayFromTensor(Exclusive ? T : T.clone(), Sharing::Writable));
  }
  return Result;
}

/// Runs writing into the caller's arrays (ONNX Runtime's IOBinding, in one
/// call): Outputs maps output names to writable C-contiguous arrays of the
/// dtype and shape the run produces; the others are computed and dropped.
void runInto(Session &S, py::object Feed, py::dict Outputs) {
  std::vector<rt::Tensor> Inputs = feedTensors(S, Feed);
  const auto &Outs = S.Graph->outputs();
  std::vector<rt::Tensor> Into(Outs.size());
  std::vector<py::object> Keep; // The arrays, alive during the run.
  for (auto KV : Outputs) {
    std::string Name = py::str(KV.first).cast<std::string>();
    std::vector<size_t> I = outputIndices(S, py::make_tuple(Name));
    py::object Arr = py::reinterpret_borrow<py::object>(KV.second);
    NNG_CHECK(py::isinstance<py::array>(Arr), "outputs['", Name,
              "'] must be a NumPy array (numpy.empty(shape, dtype)), not ",
              py::str(py::type::handle_of(Arr).attr("__name__"))
                  .cast<std::string>());
    py::array A = py::reinterpret_borrow<py::array>(Arr);
    NNG_CHECK(A.writeable() &&
                  (A.flags() & py::array::c_style) == py::array::c_style,
              "outputs['", Name,
              "'] must be a writable C-contiguous array (numpy."
              "ascontiguousarray, or a fresh numpy.empty)");
    Into[I[0]] = tensorFromArray(A, "outputs['" + Name + "']");
    Keep.push_back(Arr);
  }
  py::gil_scoped_release NoGil;
  std::unique_lock<std::mutex> Lock = S.serialize();
  S.Exec->runInto(Inputs, Into);
}

/// What the executable did so far (cpu: nngraph-run --stats as a dict), or
/// None for a backend that keeps no statistics.
py::object stats(Session &S) {
#if NNGRAPH_HAVE_ONEDNN
  std::unique_lock<std::mutex> Lock = S.serialize();
  if (std::optional<backends::CpuExecutableStats> St =
          backends::cpuExecutableStats(*S.Exec))
    return py::module_::import("json").attr("loads")(
        tools::cpuStatsJson(*St).dump());
#endif
  return py::none();
}

} // namespace

void bindSession(py::module_ &M) {
  py::class_<Session, std::shared_ptr<Session>>(
      M, "InferenceSession",
      "A model compiled on a backend, as onnxruntime's InferenceSession: "
      "InferenceSession('model.onnx') or model.compile('cpu'); then "
      "run(None, {'x': array}) returns the outputs as NumPy arrays.")
      .def(py::init(&makeSession), py::arg("model"), py::arg("backend") = "cpu",
           py::arg("optimize") = "O2",
           "Compiles model (a Model, or an .onnx/.nng path) on backend "
           "(backends() lists them: 'cpu', 'reference'), optimizing the "
           "session's copy first as onnxruntime's session does: optimize is "
           "an optimization level ('O2', the default; 'O0' runs the graph "
           "as written) or a pass list ('canonicalize,fold-conv-bn').")
      .def("run", &run, py::arg("output_names") = py::none(),
           py::arg("input_feed") = py::dict(),
           "Runs the model. input_feed: a dict of input name -> array (or a "
           "list in input order); the dtypes must be the inputs' (no "
           "conversion), a symbolic dim takes any size. output_names: the "
           "outputs to return, None for all. Returns a list of arrays.")
      .def("run_into", &runInto, py::arg("input_feed"), py::arg("outputs"),
           "Runs the model writing outputs into arrays the caller keeps "
           "(ONNX Runtime's IOBinding in one call): outputs maps output "
           "names to writable C-contiguous arrays of the dtype and shape the "
           "run produces (the cpu backend's steps write them directly, no "
           "copy); outputs not named are computed and dropped. Returns None.")
      .def("stats", &stats,
           "What the session did so far, as a dict (the cpu backend: steps, "
           "oneDNN primitives, fallbacks, arena bytes, 'shapes': shapes "
           "compiled and their compile times, weights packed once for all "
           "shapes; as nngraph-run --stats --json); None for the reference "
           "backend.")
      .def("get_inputs",
           [](const Session &S) { return valueInfos(S.Graph->inputs()); })
      .def("get_outputs",
           [](const Session &S) { return valueInfos(S.Graph->outputs()); })
      .def_property_readonly("backend",
                             [](const Session &S) { return S.Backend; })
      .def("__repr__", [](const Session &S) {
        return "<nngraph.InferenceSession '" + S.Graph->name() + "' on " +
               S.Backend + ">";
      });

  auto C = py::reinterpret_borrow<py::class_<Model, std::shared_ptr<Model>>>(
      M.attr("Model"));
  C.def(
      "compile",
      [](py::object Self, const std::string &Backend,
         const std::string &Optimize) {
        return makeSession(Self, Backend, Optimize);
      },
      py::arg("backend") = "cpu", py::arg("optimize") = "O0",
      "Compiles a copy of the model on backend as it is (optimize: an "
      "optimization level or a pass list to run on the copy first; "
      "Model.optimize changes the model itself); returns an "
      "InferenceSession.");

  M.def("backends", &backends::backendNames,
        "The backends of this build ('cpu', 'reference', ...).");
  M.def("get_num_threads", &nng::numThreads,
        "Threads a run uses (as torch.get_num_threads): "
        "NNGRAPH_NUM_THREADS, else OMP_NUM_THREADS, else the CPUs this "
        "process may use (its affinity mask, capped by its cgroup's CPU "
        "quota), unless set_num_threads changed it.");
  M.def(
      "set_num_threads",
      [](int N) {
        if (N < 1)
          fail(ErrorKind::InvalidArgument, "set_num_threads(", N,
               "): the count must be at least 1");
        nng::setNumThreads(N);
      },
      py::arg("n"),
      "Sets the threads every later run uses, in this process (as "
      "torch.set_num_threads).");
  M.def("num_threads_origin", &nng::threadCountOrigin,
        "Where get_num_threads() came from, in words: the environment "
        "variable, set_num_threads, or the CPUs this process may use.");
}

} // namespace nng::python
