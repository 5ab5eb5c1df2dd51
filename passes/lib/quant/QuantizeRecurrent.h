//===- QuantizeRecurrent.h - Quantizing LSTM and GRU ------------*- C++ -*-===//
//
// The recurrent part of quantizeDynamic (QuantizeDynamic.cpp): which LSTM
// and GRU nodes can be quantized and how. An LSTM with constant W and R
// becomes ONNX Runtime's com.microsoft.DynamicQuantizeLSTM (int8 weights, X
// and H quantized at run time), as ORT's quantize_dynamic writes it; a GRU
// (ORT has no quantized GRU), and an LSTM when contrib ops are off or its
// layout is 1, keeps its float op and gets weight-only quantization: s8 W
// and R initializers read through DequantizeLinear.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/passes/Quantize.h"

#include <string>

namespace nng::passes::quant {

/// True for the recurrent ops dynamic quantization considers (LSTM, GRU).
bool isQuantizableRecurrent(const ir::Node &N);

/// Why the recurrent node N stays float, or "" when its weights can be
/// quantized.
std::string rejectRecurrent(const ir::Node &N);

/// Quantizes N (accepted by rejectRecurrent) in G; returns a note for the
/// report when the result is weight-only ("" for DynamicQuantizeLSTM).
std::string quantizeRecurrent(ir::Graph &G, ir::Node &N,
                              const QuantizeOptions &O, QuantizeReport &Rep);

} // namespace nng::passes::quant
