//===- PassBindings.cpp - Model.optimize, prune, quantize, inspect --------===//
//
// The graph transformations of the tools, as methods of nngraph.Model:
// optimize(pipeline) is nngraph-opt -p (or -O0/-O1/-O2), prune() the
// prune-channels pass, quantize() what nngraph-quantize does (the same
// preparation, calibration on NumPy data, static or dynamic QDQ), and
// inspect() the data of nngraph-inspect --json as a dict. Each works on a
// copy of the graph and replaces the model's graph only when it succeeded,
// so an error leaves the model as it was.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"

#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/passes/Quantize.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/tools/InputData.h"
#include "nngraph/tools/InspectDriver.h"
#include "nngraph/tools/QuantizeDriver.h"

#include <pybind11/stl.h>

#include <iomanip>
#include <sstream>

namespace nng::python {
namespace {

namespace quant = passes::quant;

/// The statistics of PM's passes, by pass name (repeated passes summed).
py::dict statistics(const passes::PassManager &PM) {
  py::dict D;
  for (const auto &P : PM.passes()) {
    py::str Key(std::string(P->name()));
    py::dict S = D.contains(Key) ? py::dict(D[Key]) : py::dict();
    for (const auto &[Name, Count] : P->statistics()) {
      py::str K(Name);
      int64_t Old = S.contains(K) ? S[K].cast<int64_t>() : 0;
      S[K] = Old + Count;
    }
    D[Key] = S;
  }
  return D;
}

py::dict optimize(Model &M, const std::string &Pipeline) {
  passes::PassManager PM;
  PM.addPipeline(passes::resolvePipeline(Pipeline));
  std::unique_ptr<ir::Graph> G = M.Graph->clone();
  {
    py::gil_scoped_release NoGil;
    PM.run(*G);
  }
  M.Graph = std::move(G);
  return statistics(PM);
}

std::string joined(const std::vector<std::string> &Parts) {
  std::string S;
  for (const std::string &P : Parts)
    S += (S.empty() ? "" : ",") + P;
  return S;
}

py::dict prune(Model &M, double Ratio, const std::string &Criterion,
               int64_t Round, const std::vector<std::string> &Exclude,
               bool GlobalRanking, int64_t Seed) {
  std::unique_ptr<passes::Pass> P = passes::createPass("prune-channels");
  NNG_CHECK(P, "this build has no prune-channels pass");
  std::ostringstream RatioText; // Every digit: to_string keeps six.
  RatioText << std::setprecision(17) << Ratio;
  P->setOption("ratio", RatioText.str());
  P->setOption("criterion", Criterion);
  P->setOption("round", std::to_string(Round));
  P->setOption("exclude", joined(Exclude));
  P->setOption("global", GlobalRanking ? "true" : "false");
  P->setOption("seed", std::to_string(Seed));
  passes::PassManager PM;
  PM.addPipeline("shape-infer");
  PM.addPass(std::move(P));
  PM.addPipeline("dce");
  std::unique_ptr<ir::Graph> G = M.Graph->clone();
  {
    py::gil_scoped_release NoGil;
    PM.run(*G);
  }
  M.Graph = std::move(G);
  return statistics(PM)["prune-channels"];
}

/// Calibration batches for G from a dict (one array per graph input,
/// samples along dim 0, split into BatchSize) or a list of such dicts (one
/// per batch).
std::vector<quant::Batch>
calibrationBatches(const ir::Graph &G, py::handle Data, int64_t BatchSize) {
  std::vector<quant::Batch> Batches;
  if (py::hasattr(Data, "items")) {
    tools::InputData D = tools::matchInputData(
        tensorMapFromDict(Data, "calibration"), G, "calibration");
    return tools::splitBatches(D, BatchSize);
  }
  NNG_CHECK(py::hasattr(Data, "__iter__"),
            "calibration must be a dict of input name -> array (samples "
            "along dim 0) or a list of such dicts, one per batch");
  size_t I = 0;
  for (py::handle Batch : Data) {
    std::string What = "calibration batch " + std::to_string(I++);
    Batches.push_back(
        tools::matchInputData(tensorMapFromDict(Batch, What), G, What).Tensors);
  }
  NNG_CHECK(!Batches.empty(), "calibration holds no batches");
  return Batches;
}

py::dict report(const quant::QuantizeReport &R) {
  py::list Nodes;
  for (const auto &E : R.Nodes) {
    py::dict N;
    N["node"] = E.Node;
    N["op"] = E.Op;
    N["quantized"] = E.Quantized;
    if (!E.Reason.empty())
      N["reason"] = E.Reason;
    if (!E.Note.empty())
      N["note"] = E.Note;
    Nodes.append(N);
  }
  py::dict D;
  D["quantized_nodes"] = R.QuantizedNodes;
  D["float_nodes"] = R.FloatNodes;
  D["weight_bytes_before"] = R.WeightBytesBefore;
  D["weight_bytes_after"] = R.WeightBytesAfter;
  D["nodes"] = Nodes;
  return D;
}

py::dict quantize(Model &M, py::object Calibration, const std::string &Mode,
                  const std::string &Method, double Percentile, bool PerChannel,
                  bool SignedActivations, bool ContribOps,
                  const std::vector<std::string> &KeepFloat, int64_t BatchSize,
                  const std::string &Backend) {
  NNG_CHECK(Mode == "static" || Mode == "dynamic", "quantize: mode '", Mode,
            "' is neither 'static' nor 'dynamic'");
  NNG_CHECK(BatchSize > 0, "quantize: batch_size must be positive, got ",
            BatchSize);
  quant::QuantizeOptions O;
  O.Method = quant::parseCalibrationMethod(Method);
  O.Percentile = Percentile;
  O.PerChannel = PerChannel;
  O.SignedActivations = SignedActivations;
  O.ContribOps = ContribOps;
  O.KeepFloat = KeepFloat;
  std::unique_ptr<ir::Graph> G = M.Graph->clone();
  passes::PassManager Prep;
  Prep.addPipeline(tools::quantizePrepPipeline());
  quant::QuantizeReport Rep;
  if (Mode == "dynamic") {
    NNG_CHECK(Calibration.is_none(),
              "quantize: dynamic quantization measures activation ranges at "
              "run time and takes no calibration data; drop calibration= or "
              "use mode='static'");
    py::gil_scoped_release NoGil;
    Prep.run(*G);
    quant::quantizeDynamic(*G, O, &Rep);
  } else {
    NNG_CHECK(!Calibration.is_none(),
              "quantize: static quantization needs calibration data: "
              "calibration={'x': array} (one array per graph input, samples "
              "along dim 0) or a list of such dicts, one per batch; or "
              "mode='dynamic'");
    {
      py::gil_scoped_release NoGil;
      Prep.run(*G);
    }
    std::vector<quant::Batch> Batches =
        calibrationBatches(*G, Calibration, BatchSize);
    py::gil_scoped_release NoGil;
    std::vector<std::string> Names = quant::activationsToCalibrate(*G, O);
    NNG_CHECK(!Names.empty(), "quantize: nothing in '", M.Source,
              "' is quantizable (no Conv, MatMul, Gemm, Add, pooling or "
              "Concat with f32 activations",
              KeepFloat.empty() ? "" : " outside keep_float", ")");
    quant::RangeMap Ranges = quant::calibrate(*G, Names, Batches, O, Backend);
    quant::quantizeStatic(*G, Ranges, O, &Rep);
  }
  M.Graph = std::move(G);
  return report(Rep);
}

py::object inspect(const Model &M, const std::map<std::string, int64_t> &Dims) {
  tools::DimBindings D;
  for (const auto &[Name, Value] : Dims) {
    NNG_CHECK(Value > 0, "inspect: dim '", Name,
              "' must be a positive integer, got ", Value);
    D[Name] = Value;
  }
  std::string Json = tools::inspectGraphJson(*M.Graph, D, M.Source);
  return py::module_::import("json").attr("loads")(Json);
}

} // namespace

void bindPasses(py::module_ &M) {
  auto C = py::reinterpret_borrow<py::class_<Model, std::shared_ptr<Model>>>(
      M.attr("Model"));
  C.def("optimize", &optimize, py::arg("pipeline") = "O2",
        "Runs a pass pipeline on the model in place, as nngraph-opt -p: "
        "'canonicalize,fold-conv-bn,dce', or a preset 'O0', 'O1', 'O2' "
        "(passes() lists the passes). Returns each pass's statistics.");
  C.def("prune", &prune, py::arg("ratio") = 0.5, py::arg("criterion") = "l1",
        py::arg("round") = 8, py::arg("exclude") = std::vector<std::string>{},
        py::arg("global_ranking") = false, py::arg("seed") = 0,
        "Structured channel pruning in place (the prune-channels pass): "
        "removes ratio of each channel group's channels by criterion "
        "('l1', 'l2', 'bn', 'random'), kept counts rounded up to a multiple "
        "of round; exclude lists node name or scope patterns to keep "
        "('layer4.*'). Returns the pass's statistics.");
  C.def("quantize", &quantize, py::arg("calibration") = py::none(),
        py::arg("mode") = "static", py::arg("method") = "minmax",
        py::arg("percentile") = 99.999, py::arg("per_channel") = true,
        py::arg("signed_activations") = false, py::arg("contrib_ops") = true,
        py::arg("keep_float") = std::vector<std::string>{},
        py::arg("batch_size") = 8, py::arg("backend") = "cpu",
        "Post-training int8 quantization in place, as nngraph-quantize: "
        "static (calibration: a dict of input name -> array with samples "
        "along dim 0, or a list of such dicts; method 'minmax', "
        "'percentile' or 'entropy') or dynamic (MatMul/Gemm, LSTM/GRU; no "
        "calibration). Writes standard ONNX QDQ. Returns a report: "
        "quantized_nodes, float_nodes, weight bytes, and per node whether "
        "it was quantized and why not.");
  C.def("inspect", &inspect, py::arg("dims") = std::map<std::string, int64_t>{},
        "What nngraph-inspect --json reports, as a dict: inputs, outputs, "
        "parameters, MACs, activation memory, op histogram and per-layer "
        "table, for the given symbolic dims ({'N': 8}; unbound: 1).");

  M.def(
      "passes",
      [] {
        py::dict D;
        for (const passes::PassInfo *P : passes::registeredPasses())
          D[py::str(P->Name)] = P->Summary;
        return D;
      },
      "The registered passes: name -> one-line summary.");
}

} // namespace nng::python
