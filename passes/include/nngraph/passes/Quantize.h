//===- Quantize.h - Post-training int8 quantization -------------*- C++ -*-===//
//
// Static and dynamic post-training quantization of a float graph, written
// as standard ONNX QDQ (QuantizeLinear/DequantizeLinear around float ops) so
// that any runtime can run the result:
//
//   ir::Graph &G = ...;                        // shape-inferred float graph
//   quant::QuantizeOptions O;                  // u8 activations, s8 weights
//   auto Names = quant::activationsToCalibrate(G, O);
//   auto Ranges = quant::calibrate(G, Names, Batches, O);
//   quant::QuantizeReport Rep;
//   quant::quantizeStatic(G, Ranges, O, &Rep); // inserts Q/DQ
//
// Which ops are quantized follows the op table: ops with the `quantizable`
// trait get Q/DQ on their float activations and output; `value_preserving`
// ops (reshapes, max pooling, ...) pass a quantized tensor through with its
// scale and zero point. Conv, MatMul and Gemm weights that are constants
// become s8 initializers (symmetric, per output channel by default) and
// their biases i32 with scale s_x * s_w. Nodes whose name or scope matches
// a KeepFloat pattern stay float.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nng::passes::quant {

/// How calibration turns observed values into a range.
enum class CalibrationMethod {
  MinMax,     ///< The observed minimum and maximum.
  Percentile, ///< |x| clipped at the given percentile of its histogram.
  Entropy,    ///< |x| clipped where KL(float || quantized) is smallest.
};

/// "minmax", "percentile" or "entropy"; throws Error(InvalidArgument)
/// listing the choices for anything else.
CalibrationMethod parseCalibrationMethod(std::string_view Name);
std::string_view calibrationMethodName(CalibrationMethod M);

struct QuantizeOptions {
  CalibrationMethod Method = CalibrationMethod::MinMax;
  /// Percentile method: the share of |x| (in percent) kept inside the range.
  double Percentile = 99.999;
  /// Histogram bins of the percentile and entropy methods.
  int HistogramBins = 2048;
  /// s8 weights per output channel (else one scale per tensor).
  bool PerChannel = true;
  /// s8 activations instead of u8 (both asymmetric, per tensor).
  bool SignedActivations = false;
  /// Dynamic mode: an LSTM becomes ONNX Runtime's contrib op
  /// com.microsoft.DynamicQuantizeLSTM; false keeps to standard ONNX ops
  /// (the LSTM gets weight-only quantization, like a GRU).
  bool ContribOps = true;
  /// Node name, scope or output patterns (NodePattern.h, e.g. "layer4.*")
  /// whose nodes stay float; each must match some node.
  std::vector<std::string> KeepFloat;
};

/// An observed or chosen float range of one tensor.
struct Range {
  float Min = 0;
  float Max = 0;
};
/// Ranges by value name.
using RangeMap = std::map<std::string, Range>;

/// One batch of graph inputs, in graph-input order.
using Batch = std::vector<rt::Tensor>;

/// The names of the float activations static quantization of G reads
/// ranges for (inputs and outputs of quantizable nodes), in graph order.
std::vector<std::string> activationsToCalibrate(const ir::Graph &G,
                                                const QuantizeOptions &O);

/// Called after each calibration batch: (pass, batches done, batches).
using CalibrationProgress = std::function<void(int, size_t, size_t)>;

/// Runs G on Backend over the batches (twice for the histogram methods:
/// once for the ranges, once for the histograms) and returns the range of
/// each named value. Throws Error(InvalidArgument) for an empty set, an
/// unknown name or a non-float value.
RangeMap calibrate(const ir::Graph &G, const std::vector<std::string> &Values,
                   const std::vector<Batch> &Batches, const QuantizeOptions &O,
                   const std::string &Backend = "cpu",
                   const CalibrationProgress &Progress = {});

/// What quantization did, node by node.
struct QuantizeReport {
  struct NodeEntry {
    std::string Node; ///< The node's name (or its first output's).
    std::string Op;
    bool Quantized = false;
    std::string Reason; ///< Why it stayed float.
    /// How a quantized node was quantized when it is not the usual form
    /// (e.g. weight-only for a GRU).
    std::string Note;
    std::vector<std::string> Inputs; ///< Quantized activations it reads.
    std::string Output; ///< The activation its int8 result becomes.
  };
  std::vector<NodeEntry> Nodes;
  /// Every activation given a Q/DQ pair: float name -> the name of its
  /// dequantized value in the quantized graph.
  std::map<std::string, std::string> Dequantized;
  int64_t QuantizedNodes = 0;
  int64_t FloatNodes = 0;   ///< Quantizable nodes left float.
  int64_t WeightBytesBefore = 0;
  int64_t WeightBytesAfter = 0;
};

/// Inserts Q/DQ pairs for static quantization with the calibrated ranges.
/// Throws Error(InvalidArgument) when nothing in G is quantizable or a range
/// is missing.
void quantizeStatic(ir::Graph &G, const RangeMap &Ranges,
                    const QuantizeOptions &O, QuantizeReport *Report = nullptr);

/// Dynamic quantization: MatMul and Gemm with constant 2-D weights become
/// DynamicQuantizeLinear + MatMulInteger (u8 activations quantized at run
/// time, s8 weights quantized now) with the float scale applied after. An
/// LSTM with constant W and R becomes com.microsoft.DynamicQuantizeLSTM
/// (as ONNX Runtime's quantize_dynamic writes it; unless !O.ContribOps);
/// a GRU (and such an LSTM without contrib ops) gets weight-only
/// quantization: s8 W and R read through DequantizeLinear by the float op.
/// Throws Error(InvalidArgument) when nothing is quantizable.
void quantizeDynamic(ir::Graph &G, const QuantizeOptions &O,
                     QuantizeReport *Report = nullptr);

/// The quantization error of one quantized node's result over a data set:
/// its dequantized output in the quantized graph against the float graph's
/// (errors of earlier layers included, as ONNX Runtime's qdq_loss_debug
/// reports them), and what the node itself added (Drop: the lowest SQNR of
/// its quantized inputs minus its output's).
struct LayerSensitivity {
  std::string Node, Op, Output;
  double SqnrDb = 0;      ///< 10 log10(sum x^2 / sum (x - x_q)^2).
  double MaxAbsError = 0; ///< max |x - x_q|.
  double DropDb = 0;
};
struct SensitivityResult {
  std::vector<LayerSensitivity> Layers; ///< In graph order.
  double OutputSqnrDb = 0;              ///< Lowest over the graph outputs.
};

/// Runs Float and Quantized (quantizeStatic's result for Float, with its
/// Report) on the batches and measures every quantized node's error.
SensitivityResult measureSensitivity(const ir::Graph &Float,
                                     const ir::Graph &Quantized,
                                     const QuantizeReport &Report,
                                     const std::vector<Batch> &Batches,
                                     const std::string &Backend = "cpu");

} // namespace nng::passes::quant
