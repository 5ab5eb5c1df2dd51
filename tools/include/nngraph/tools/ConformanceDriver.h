//===- ConformanceDriver.h - The nngraph-onnx-conformance driver ----------===//
//
// nngraph-onnx-conformance runs ONNX backend test folders (model.onnx plus
// test_data_set_*/input_*.pb and output_*.pb) on a backend and compares the
// outputs with ONNX's tolerances (rtol 1e-3, atol 1e-7). It prints one line
// per test (PASS / FAIL with the reason / SKIP with the reason), a summary
// per folder and "N passed, N failed, N skipped"; optionally a JSON report,
// and a check against a per-folder baseline of pass counts (a ratchet).
// Tests whose models use an operator listed in the skip file (operators
// deliberately out of scope, with the reason) are skipped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-onnx-conformance with Args (Args[0] is the program name),
/// writing to Out and Err. Returns 0 when every test passed or skipped (with
/// --baseline: when no folder passes fewer tests than its baseline), 1 when
/// tests failed (or the baseline regressed) or a folder cannot be read, 2 on
/// a bad command line.
int runConformanceDriver(const std::vector<std::string> &Args,
                         std::ostream &Out, std::ostream &Err);

/// Compares an output with its expected value the way ONNX's backend tests
/// do: same dtype and shape, and |actual - expected| <= Atol + Rtol *
/// |expected| for floating point (NaN matches NaN, infinities must be
/// equal; for bf16 and f16 outputs, one unit in the last place of the
/// dtype is also accepted: rounding modes differ), exact equality otherwise. Returns "" when they match, else the
/// reason ("output 'y' max abs error 0.5 at index 3 (2 of 6 values outside
/// rtol 0.001, atol 1e-07)").
std::string compareTensors(const std::string &Name, const rt::Tensor &Actual,
                           const rt::Tensor &Expected, double Rtol,
                           double Atol);

} // namespace nng::tools
