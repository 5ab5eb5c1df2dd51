//===- QuantizeDriver.cpp - nngraph-quantize: post-training int8 ----------===//
//
// nngraph-quantize IN -o OUT [--calibration DATA.npz] [--mode static|dynamic]
// [--method minmax|percentile|entropy] [--per-tensor] [--keep-float P]...
// [--report FILE.json]: loads a float model, prepares it as ONNX Runtime's
// quant_pre_process does (shapes inferred, BatchNormalization folded into
// convolutions, MatMul + Add made Gemm), then
//  - static: runs the calibration batches (DATA.npz: one array per graph
//    input, samples along dim 0; or --random-calibration N for speed
//    tests), picks each activation's range by the method and inserts Q/DQ;
//  - dynamic: quantizes MatMul/Gemm weights now and activations at run
//    time (DynamicQuantizeLinear + MatMulInteger), LSTM into ONNX Runtime's
//    com.microsoft.DynamicQuantizeLSTM (standard ops only with
//    --no-contrib-ops: weight-only, as for GRU);
// and writes OUT (.onnx: standard QDQ that ONNX Runtime runs; .nng: the
// text format). Nothing is written when anything fails. Progress over the
// calibration batches (and the sensitivity runs) goes to stderr
// (Progress.h), none with --quiet.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/QuantizeDriver.h"
#include "CommandLine.h"
#include "CommonOptions.h"
#include "Progress.h"
#include "nngraph/ir/Inputs.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Quantize.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/tools/InputData.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>

namespace nng::tools {
namespace {

constexpr const char *ToolName = "nngraph-quantize";

/// The preparation ONNX Runtime's quant_pre_process does, in our passes.
constexpr const char *PrepPipeline =
    "shape-infer,canonicalize,fold-conv-bn,fold-conv-mul-add,"
    "fuse-pad-into-conv,fuse-reshapes,fuse-matmul-add,cse,"
    "dedup-initializers,canonicalize,dce";

struct QuantizeCli {
  std::string Model, Output, Calibration, Report;
  std::string Mode = "static", Method = "minmax", Backend = "cpu";
  double Percentile = 99.999;
  bool PerTensor = false, SignedActivations = false, Json = false;
  bool Quiet = false;
  bool NoContribOps = false;
  bool Sensitivity = false;
  int64_t KeepSensitive = 0;
  double TargetSqnr = 0;
  std::vector<std::string> KeepFloat;
  DimBindings Dims; ///< --dim, bound as parsed.
  int64_t BatchSize = 8, RandomSamples = 0;
};

void describeOptions(CLI::App &App, QuantizeCli &O) {
  App.description(
      "nngraph-quantize: post-training int8 quantization of a float model "
      "into standard ONNX QDQ (QuantizeLinear/DequantizeLinear around the "
      "ops that run in int8), as ONNX Runtime's quantize_static and "
      "quantize_dynamic write it. Weights become s8 (symmetric, per output "
      "channel), activations u8 (asymmetric, per tensor) with ranges "
      "calibrated on your data.");
  App.add_option("model", O.Model, "Float model: .onnx or .nng.")->required();
  App.add_option("-o,--output", O.Output,
                 "Quantized model to write: .onnx (QDQ) or .nng.\n"
                 "  e.g. nngraph-quantize resnet18.onnx -o resnet18.int8.onnx "
                 "--calibration calib.npz")
      ->required();
  App.add_option("--calibration", O.Calibration,
                 "Calibration data: an .npz with one array per graph input "
                 "(keyed by input name), samples along dim 0, e.g. "
                 "numpy.savez('calib.npz', x=images[:500]). Required for "
                 "--mode static unless --random-calibration is given.")
      ->option_text("DATA.npz");
  App.add_option("--random-calibration", O.RandomSamples,
                 "Calibrate on N samples of pseudo-random inputs (floats "
                 "uniform in [-1, 1)) instead of data: for speed tests only, "
                 "the ranges say nothing about real inputs.")
      ->option_text("N");
  App.add_option("--mode", O.Mode,
                 "static (default: activations quantized with calibrated "
                 "ranges) or dynamic (MatMul/Gemm, LSTM/GRU; activation ranges "
                 "measured at run time, no calibration data).")
      ->check(CLI::IsMember({"static", "dynamic"}));
  App.add_option("--method", O.Method,
                 "Calibration method: minmax (default), percentile (clip |x| "
                 "at --percentile) or entropy (KL divergence, as TensorRT).")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  App.add_option("--percentile", O.Percentile,
                 "Percentile method: the share of |x| kept, in percent; "
                 "default 99.999.")
      ->option_text("P");
  App.add_flag("--per-tensor", O.PerTensor,
               "One scale per weight tensor instead of one per output "
               "channel.");
  App.add_flag("--signed-activations", O.SignedActivations,
               "s8 activations instead of u8.");
  App.add_flag("--no-contrib-ops", O.NoContribOps,
               "Dynamic mode: standard ONNX ops only. By default an LSTM "
               "becomes ONNX Runtime's com.microsoft.DynamicQuantizeLSTM; "
               "with this flag its weights are quantized weight-only (s8 "
               "through DequantizeLinear, float LSTM), as a GRU's always "
               "are.");
  App.add_option("--keep-float", O.KeepFloat,
                 "Keep the nodes whose name, scope or output name matches "
                 "PATTERN ('*' matches anything) in float; repeatable.\n"
                 "  e.g. --keep-float 'layer4.*' --keep-float fc")
      ->option_text("PATTERN");
  App.add_flag("--sensitivity", O.Sensitivity,
               "Measure each quantized layer's error on the calibration data "
               "(SQNR of its output against float, and the dB its own "
               "quantization lost) and print the worst layers (static mode).");
  App.add_option("--keep-sensitive", O.KeepSensitive,
                 "Keep the K layers whose quantization loses the most SQNR "
                 "in float (static mode).")
      ->option_text("K")
      ->check(CLI::NonNegativeNumber);
  App.add_option("--target-sqnr", O.TargetSqnr,
                 "Keep adding the most sensitive layers to float until the "
                 "model outputs' SQNR against float on the calibration data "
                 "reaches DB (static mode), e.g. --target-sqnr 30.")
      ->option_text("DB");
  App.add_option("--batch-size", O.BatchSize,
                 "Samples per calibration run; default 8.")
      ->option_text("B")
      ->check(CLI::PositiveNumber);
  addBackendOption(App, O.Backend, "Backend that runs the calibration");
  addDimOption(App, O.Dims,
               "binds the dims other than the sample axis (random "
               "calibration)",
               "nngraph-quantize model.onnx -o model.int8.onnx --dim "
               "seq=128");
  App.add_option("--report", O.Report,
                 "Write what was quantized, what stayed float and why, "
                 "each calibrated range and the weight sizes as JSON.")
      ->option_text("FILE.json");
  App.add_flag("--json", O.Json, "Print the summary as JSON on stdout.");
  addQuietFlag(App, O.Quiet);
  addExitStatusHelp(App, "bad input (model, calibration data, nothing "
                         "quantizable) or the output cannot be written");
}

std::vector<passes::quant::Batch> randomBatches(const ir::Graph &G,
                                                const QuantizeCli &O) {
  const DimBindings &Dims = O.Dims;
  std::vector<passes::quant::Batch> Out;
  for (int64_t Done = 0, B = 0; Done < O.RandomSamples; ++B) {
    int64_t N = std::min(O.BatchSize, O.RandomSamples - Done);
    DimBindings D = Dims;
    for (const ir::Value *In : G.inputs())
      if (In->type().hasRank() && In->type().rank() > 0 &&
          In->type().dim(0).isSymbolic())
        D[In->type().dim(0).symbol()] = N;
    Out.push_back(ir::makeDeterministicInputs(G, D, 1000 + B));
    Done += N;
  }
  return Out;
}

nlohmann::json sensitivityJson(const passes::quant::SensitivityResult &S) {
  auto Num = [](double D) -> nlohmann::json {
    if (std::isfinite(D))
      return D;
    return nullptr; // No error at all.
  };
  nlohmann::json L = nlohmann::json::array();
  for (const auto &E : S.Layers)
    L.push_back({{"node", E.Node},
                 {"op", E.Op},
                 {"output", E.Output},
                 {"sqnr_db", Num(E.SqnrDb)},
                 {"drop_db", Num(E.DropDb)},
                 {"max_abs_error", E.MaxAbsError}});
  return {{"output_sqnr_db", Num(S.OutputSqnrDb)}, {"layers", std::move(L)}};
}

/// The quantized layers of S, most sensitive (largest drop) first.
std::vector<const passes::quant::LayerSensitivity *>
bySensitivity(const passes::quant::SensitivityResult &S) {
  std::vector<const passes::quant::LayerSensitivity *> V;
  for (const auto &L : S.Layers)
    V.push_back(&L);
  std::stable_sort(V.begin(), V.end(), [](auto *A, auto *B) {
    return A->DropDb > B->DropDb;
  });
  return V;
}

nlohmann::json reportJson(const passes::quant::QuantizeReport &R,
                          const QuantizeCli &O,
                          const passes::quant::RangeMap &Ranges) {
  nlohmann::json J;
  J["mode"] = O.Mode;
  if (O.Mode == "static")
    J["method"] = O.Method;
  J["per_channel"] = !O.PerTensor;
  J["activations"] = O.SignedActivations ? "s8" : "u8";
  J["quantized_nodes"] = R.QuantizedNodes;
  J["float_nodes"] = R.FloatNodes;
  J["weight_bytes"] = {{"before", R.WeightBytesBefore},
                       {"after", R.WeightBytesAfter}};
  nlohmann::json Nodes = nlohmann::json::array();
  for (const auto &E : R.Nodes) {
    nlohmann::json N{{"node", E.Node}, {"op", E.Op}, {"quantized", E.Quantized}};
    if (!E.Reason.empty())
      N["reason"] = E.Reason;
    if (!E.Note.empty())
      N["note"] = E.Note;
    Nodes.push_back(std::move(N));
  }
  J["nodes"] = std::move(Nodes);
  nlohmann::json Rs = nlohmann::json::object();
  for (const auto &[Name, Rg] : Ranges)
    Rs[Name] = {Rg.Min, Rg.Max};
  J["ranges"] = std::move(Rs);
  return J;
}

int run(const QuantizeCli &O, std::ostream &Out, std::ostream &Err) {
  namespace quant = passes::quant;
  using Clock = std::chrono::steady_clock;
  auto Start = Clock::now();
  Progress P(Err, ToolName, O.Quiet);
  NNG_CHECK(O.Mode == "dynamic" || !O.Calibration.empty() ||
                O.RandomSamples > 0,
            "static quantization needs calibration data: give --calibration "
            "DATA.npz (one array per graph input, samples along dim 0), or "
            "--random-calibration N for a speed test, or use --mode dynamic");
  NNG_CHECK(O.Calibration.empty() || O.RandomSamples == 0,
            "give either --calibration or --random-calibration, not both");
  frontend::formatForPath(O.Output); // An unknown extension fails early.
  std::unique_ptr<ir::Graph> G = frontend::loadModel(O.Model);
  passes::PassManager PM;
  PM.addPipeline(PrepPipeline);
  PM.run(*G);

  quant::QuantizeOptions QO;
  QO.Method = quant::parseCalibrationMethod(O.Method);
  QO.Percentile = O.Percentile;
  QO.PerChannel = !O.PerTensor;
  QO.SignedActivations = O.SignedActivations;
  QO.ContribOps = !O.NoContribOps;
  QO.KeepFloat = O.KeepFloat;
  quant::QuantizeReport Rep;
  quant::RangeMap Ranges;
  std::optional<quant::SensitivityResult> Sens;
  size_t Samples = 0;
  if (O.Mode == "dynamic") {
    quant::quantizeDynamic(*G, QO, &Rep);
  } else {
    std::vector<quant::Batch> Batches;
    if (O.RandomSamples > 0) {
      Batches = randomBatches(*G, O);
      Samples = static_cast<size_t>(O.RandomSamples);
    } else {
      InputData Data = loadInputData(O.Calibration, *G);
      Samples = static_cast<size_t>(sampleCount(Data));
      Batches = splitBatches(Data, O.BatchSize);
    }
    auto Names = quant::activationsToCalibrate(*G, QO);
    NNG_CHECK(!Names.empty(), "nothing in '", O.Model,
              "' is quantizable (no Conv, MatMul, Gemm, Add, pooling or "
              "Concat with f32 activations",
              O.KeepFloat.empty() ? "" : " outside --keep-float", ")");
    int Pass = 0;
    Ranges = quant::calibrate(
        *G, Names, Batches, QO, O.Backend,
        [&](int N, size_t Done, size_t Total) {
          if (N != Pass) {
            Pass = N;
            P.begin("calibration pass " + std::to_string(N), Total, "batches");
          }
          P.advance(Done);
        });
    P.clear();
    std::unique_ptr<ir::Graph> Float = G->clone();
    auto Quantize = [&] {
      G = Float->clone();
      Rep = {};
      quant::quantizeStatic(*G, Ranges, QO, &Rep);
    };
    Quantize();
    bool Measure = O.Sensitivity || O.KeepSensitive > 0 || O.TargetSqnr > 0;
    if (Measure) {
      P.step("measuring the sensitivity of each quantized layer");
      Sens = quant::measureSensitivity(*Float, *G, Rep, Batches, O.Backend);
    }
    if (O.KeepSensitive > 0) {
      auto Ranked = bySensitivity(*Sens);
      for (size_t I = 0;
           I < Ranked.size() && I < static_cast<size_t>(O.KeepSensitive); ++I)
        QO.KeepFloat.push_back(Ranked[I]->Node);
      Quantize();
      Sens = quant::measureSensitivity(*Float, *G, Rep, Batches, O.Backend);
    }
    while (O.TargetSqnr > 0 && Sens->OutputSqnrDb < O.TargetSqnr) {
      auto Ranked = bySensitivity(*Sens);
      if (Ranked.size() <= 1) {
        P.clear();
        if (!O.Quiet)
          Err << ToolName << ": note: the output SQNR is " << Sens->OutputSqnrDb
              << " dB with " << Ranked.size()
              << " layer(s) quantized; the target " << O.TargetSqnr
              << " dB is not reached\n";
        break;
      }
      QO.KeepFloat.push_back(Ranked.front()->Node);
      char Db[32];
      std::snprintf(Db, sizeof Db, "%.1f", Sens->OutputSqnrDb);
      P.step("output SQNR " + std::string(Db) + " dB; keeping " +
             Ranked.front()->Node + " float");
      Quantize();
      Sens = quant::measureSensitivity(*Float, *G, Rep, Batches, O.Backend);
    }
  }
  P.clear();
  frontend::saveModel(*G, O.Output);
  if (!O.Report.empty()) {
    nlohmann::json J = reportJson(Rep, O, Ranges);
    J["model"] = O.Model;
    J["output"] = O.Output;
    J["calibration_samples"] = Samples;
    if (Sens)
      J["sensitivity"] = sensitivityJson(*Sens);
    frontend::writeFileAtomic(O.Report, J.dump(2) + "\n");
  }
  double Ms =
      std::chrono::duration<double, std::milli>(Clock::now() - Start).count();
  if (O.Json) {
    nlohmann::json J = reportJson(Rep, O, {});
    J.erase("nodes");
    J.erase("ranges");
    J["model"] = O.Model;
    J["output"] = O.Output;
    J["calibration_samples"] = Samples;
    J["time_ms"] = Ms;
    if (Sens)
      J["output_sqnr_db"] = sensitivityJson(*Sens)["output_sqnr_db"];
    Out << J.dump(2) << "\n";
    return ExitSuccess;
  }
  auto Size = [](int64_t B) {
    char S[32];
    if (B >= 1048576)
      std::snprintf(S, sizeof S, "%.1f MiB", B / 1048576.0);
    else
      std::snprintf(S, sizeof S, "%.1f KiB", B / 1024.0);
    return std::string(S);
  };
  std::string Sizes = "weights " + Size(Rep.WeightBytesBefore) + " -> " +
                      Size(Rep.WeightBytesAfter);
  Out << "quantized " << Rep.QuantizedNodes << " nodes (" << O.Mode;
  if (O.Mode == "static")
    Out << ", " << O.Method << " over " << Samples << " samples";
  Out << "); " << Rep.FloatNodes << " quantizable nodes kept float; "
      << Sizes << "\n";
  for (const auto &E : Rep.Nodes)
    if (!E.Quantized)
      Out << "  float: " << E.Node << " (" << E.Op << "): " << E.Reason
          << "\n";
    else if (!E.Note.empty())
      Out << "  " << E.Node << " (" << E.Op << "): " << E.Note << "\n";
  if (Sens) {
    char Line[256];
    std::snprintf(Line, sizeof Line,
                  "output SQNR %.1f dB against float on the calibration data\n",
                  Sens->OutputSqnrDb);
    Out << Line;
    auto Ranked = bySensitivity(*Sens);
    if (O.Sensitivity && !Ranked.empty()) {
      Out << "most sensitive quantized layers (dB lost by the layer itself, "
             "SQNR of its output):\n";
      for (size_t I = 0; I < Ranked.size() && I < 10; ++I) {
        std::snprintf(Line, sizeof Line, "  %-40s %-18s %6.1f dB  %6.1f dB\n",
                      Ranked[I]->Node.c_str(), Ranked[I]->Op.c_str(),
                      Ranked[I]->DropDb, Ranked[I]->SqnrDb);
        Out << Line;
      }
    }
  }
  Out << "wrote " << O.Output << " in " << static_cast<int64_t>(Ms)
      << " ms\n";
  return ExitSuccess;
}

} // namespace

const char *quantizePrepPipeline() { return PrepPipeline; }

int runQuantizeDriver(const std::vector<std::string> &Args, std::ostream &Out,
                      std::ostream &Err) {
  CLI::App App;
  QuantizeCli O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;
  try {
    return run(O, Out, Err);
  } catch (const std::exception &E) {
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace nng::tools
