//===- QuantizeDriver.h - nngraph-quantize as a library call ----*- C++ -*-===//
//
// The logic of nngraph-quantize (tools/lib/QuantizeDriver.cpp): static or
// dynamic post-training quantization of a model file into an ONNX QDQ (or
// .nng) file, with calibration data from an .npz file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-quantize with Args (Args[0] is the program name), writing
/// to Out and Err. Returns 0 on success, 1 on bad input (model,
/// calibration data, nothing quantizable; no output file is written), 2 on
/// a bad command line.
int runQuantizeDriver(const std::vector<std::string> &Args, std::ostream &Out,
                      std::ostream &Err);

/// The passes nngraph-quantize runs before quantizing (what ONNX Runtime's
/// quant_pre_process does: shapes inferred, BatchNormalization folded into
/// convolutions, MatMul + Add made Gemm), as a pipeline string.
const char *quantizePrepPipeline();

} // namespace nng::tools
