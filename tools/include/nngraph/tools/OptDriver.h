//===- OptDriver.h - The nngraph-opt driver ---------------------*- C++ -*-===//
//
// nngraph-opt reads a model in the text format (a file, or stdin for '-' or
// no argument) or ONNX (a .onnx file), verifies it, runs an optional
// pipeline of passes and prints the result (text, or ONNX with --emit onnx
// or -o FILE.onnx) to stdout or, atomically, to -o FILE. The whole program
// lives here so that tests run it in-process; main() only forwards to it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-opt with Args (Args[0] is the program name), reading stdin
/// from In and writing to Out and Err. Returns the exit status: 0 success,
/// 1 bad input or verification failure (nothing written to -o), 2 bad
/// command line (including an unknown pass in the pipeline).
int runOptDriver(const std::vector<std::string> &Args, std::istream &In,
                 std::ostream &Out, std::ostream &Err);

} // namespace nng::tools
