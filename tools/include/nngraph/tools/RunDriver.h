//===- RunDriver.h - The nngraph-run driver ---------------------*- C++ -*-===//
//
// nngraph-run loads a model, compiles it on a backend, runs it on
// deterministic inputs (symbolic dims 1 unless bound with --dim NAME=VALUE)
// or on the arrays of --inputs FILE.npz (InputData.h), and prints each
// output's shape and first values and the time taken, as text or, with
// --json, as one JSON object; --save-outputs FILE.npz writes the outputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-run with Args (Args[0] is the program name), writing to Out
/// and Err. Returns 0 on success, 1 when the model or the inputs file cannot
/// be loaded or run, 2 on a bad command line.
int runRunDriver(const std::vector<std::string> &Args, std::ostream &Out,
                 std::ostream &Err);

} // namespace nng::tools
