//===- InspectDriver.h - nngraph-inspect as a library call ------*- C++ -*-===//
//
// The logic of nngraph-inspect (tools/lib/InspectDriver.cpp): parameters,
// MACs, activation memory, op histogram and per-layer table of a model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-inspect with Args (Args[0] is the program name), writing to
/// Out and Err. Returns 0 on success, 1 when the model cannot be loaded or
/// its shapes inferred, 2 on a bad command line.
int runInspectDriver(const std::vector<std::string> &Args, std::ostream &Out,
                     std::ostream &Err);

} // namespace nng::tools
