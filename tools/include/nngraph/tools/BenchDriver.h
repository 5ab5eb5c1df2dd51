//===- BenchDriver.h - The nngraph-bench driver -----------------*- C++ -*-===//
//
// nngraph-bench measures a model on a backend the way trtexec and
// onnxruntime_perf_test do: load and optimize it, compile it (timed), run
// warm-up runs, then timed runs in rounds, and report latency percentiles
// (p50/p90/p99), throughput, compile time and peak memory (the process's
// RSS high-water mark; the cpu backend's arena with --stats), as text or,
// with --json, as one JSON object. --vs-ort runs ONNX Runtime (npm
// onnxruntime-node) on the same model and inputs, interleaved round by
// round with nngraph, checks that the outputs agree and prints the ratio of
// the medians. --dim-range NAME=LO:HI or --shapes FILE make the timed runs
// a list of requests at varying shapes, and the report adds the new-shape
// cost (first run at a shape minus a repeat run at it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// Exit statuses of nngraph-bench beyond the tools' 0, 1 and 2.
enum BenchExitCode : int {
  /// --vs-ort, but ONNX Runtime is not installed here (node or
  /// onnxruntime-node is missing); nngraph's part ran and was reported.
  ExitOrtUnavailable = 3,
  /// --vs-ort: the two engines' outputs differ beyond the tolerance.
  ExitOutputsDiffer = 4,
};

/// Runs nngraph-bench with Args (Args[0] is the program name), writing the
/// report to Out and errors and progress to Err (progress redraws one line
/// only when Err is std::cerr on a terminal). Returns 0 on success, 1 when
/// the model or the inputs cannot be loaded or run (by either engine), 2 on
/// a bad command line, 3 or 4 as BenchExitCode says.
int runBenchDriver(const std::vector<std::string> &Args, std::ostream &Out,
                   std::ostream &Err);

} // namespace nng::tools
