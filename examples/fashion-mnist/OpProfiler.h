//===- OpProfiler.h - Where the time of eager training goes ------*- C++ -*-===//
//
// fashion-mnist-train --profile: a dispatch::DispatchMode that times every
// operation passing through the dispatcher (the forward ops of the model
// code and the ops the backward formulas dispatch) by op name, and a
// report of the ops with the largest total time. The mode runs each call
// eagerly (as if no mode were installed), so training is unchanged; the
// cost is two clock reads per op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Dispatch.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace fmnist {

class OpProfiler final : public nng::dispatch::DispatchMode {
public:
  std::vector<nng::Tensor> call(const nng::dispatch::OpCall &C) override;

  /// Prints the ops by total time, with calls and mean time, and their
  /// share of WallSeconds (the time the profiled code took), to Out.
  void report(std::FILE *Out, double WallSeconds, size_t Top = 25) const;

private:
  struct Stat {
    int64_t Calls = 0;
    double Seconds = 0;
  };
  /// Per op name; a call made while another op's call runs (an op that
  /// re-dispatches) is counted under its own name and excluded from the
  /// outer one's time.
  std::map<std::string, Stat> Stats;
  /// Time of nested calls to subtract from the running outer call.
  std::vector<double> NestedSeconds;
};

} // namespace fmnist
