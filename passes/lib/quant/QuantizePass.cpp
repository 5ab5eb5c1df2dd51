//===- QuantizePass.cpp - quantize: post-training quantization as a pass --===//
//
// The pipeline face of Quantize.h: `quantize{mode=dynamic}` quantizes
// MatMul/Gemm (and LSTM/GRU) weights now and activations at run time;
// `quantize{mode=static samples=8}` calibrates on pseudo-random inputs
// (symbolic dims bound to 1 except the sample axis) — a speed test's
// calibration, since a pass has no data; real data goes through
// `nngraph-quantize --calibration DATA.npz`. Statistics count the nodes
// quantized and kept float.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Inputs.h"
#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/passes/Quantize.h"


namespace nng::passes {
namespace {

class QuantizePass final : public Pass {
public:
  QuantizePass() {
    declareEnumOption("mode", "static", {"static", "dynamic"},
                      "static (Q/DQ with calibrated ranges) or dynamic "
                      "(MatMul/Gemm, activations quantized at run time)");
    declareEnumOption("method", "minmax", {"minmax", "percentile", "entropy"},
                      "static: how calibration picks a range");
    declareOption("samples", 8,
                  "static: pseudo-random calibration samples (use "
                  "nngraph-quantize --calibration for real data)");
    declareOption("per-channel", true, "s8 weights per output channel");
    declareOption("signed-activations", false, "s8 instead of u8 activations");
    declareOption("contrib-ops", true,
                  "dynamic: LSTM becomes ONNX Runtime's "
                  "com.microsoft.DynamicQuantizeLSTM (off: standard ONNX "
                  "only, LSTM weights weight-only like GRU's)");
    declareOption("keep-float", "",
                  "comma-separated node name or scope patterns kept float");
    declareOption("backend", "reference", "static: backend that calibrates");
  }
  std::string_view name() const override { return "quantize"; }
  std::string_view summary() const override {
    return "post-training int8 quantization into QDQ (static on random "
           "calibration samples, or dynamic)";
  }
  bool run(ir::Graph &G) override {
    quant::QuantizeOptions O;
    O.Method = quant::parseCalibrationMethod(stringOption("method"));
    O.PerChannel = boolOption("per-channel");
    O.SignedActivations = boolOption("signed-activations");
    O.ContribOps = boolOption("contrib-ops");
    O.KeepFloat = splitPatterns(stringOption("keep-float"));
    quant::QuantizeReport R;
    if (stringOption("mode") == "dynamic") {
      quant::quantizeDynamic(G, O, &R);
    } else {
      int64_t Samples = intOption("samples");
      NNG_CHECK(Samples > 0, "quantize: samples must be positive, not ",
                Samples);
      std::vector<quant::Batch> Batches;
      for (int64_t I = 0; I < Samples; ++I)
        Batches.push_back(ir::makeDeterministicInputs(G, {}, 500 + I));
      auto Names = quant::activationsToCalibrate(G, O);
      auto Ranges = quant::calibrate(G, Names, Batches, O,
                                     stringOption("backend"));
      quant::quantizeStatic(G, Ranges, O, &R);
    }
    bumpStatistic("nodes-quantized", R.QuantizedNodes);
    bumpStatistic("nodes-kept-float", R.FloatNodes);
    return R.QuantizedNodes > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createQuantizePass() {
  return std::make_unique<QuantizePass>();
}

} // namespace nng::passes
