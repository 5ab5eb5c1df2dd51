//===- TraceBench.cpp - fx::symbolic_trace of the zoo models --------------===//
//
// How long fx::symbolic_trace takes on each zoo model (eval mode, a dynamic
// batch dim N): the tracer records every op of forward as a graph node and
// computes each result's type from the op table's inference; it runs an op
// on example data only where a value can decide a shape (integer results,
// results inference leaves open, results of constants alone), so the
// convolutions and products of a model are not computed (docs/fx.md).
//
//   BM_Trace/<model>   one symbolic_trace of the model built once outside
//                      the timed loop.
//
// Run with repetitions and read the medians (README.md).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/zoo/Zoo.h"

#include <benchmark/benchmark.h>

namespace {

void BM_Trace(benchmark::State &State, const std::string &Name) {
  try {
    nng::nn::ModulePtr M = nng::zoo::create(Name);
    M->eval();
    std::vector<nng::fx::Dim> Dims = {"N"};
    const std::vector<int64_t> &Shape = nng::zoo::info(Name).InputShape;
    for (size_t I = 1; I < Shape.size(); ++I)
      Dims.push_back(Shape[I]);
    nng::fx::InputSpec Spec(Dims);
    size_t Nodes = 0;
    for (auto _ : State) {
      nng::fx::GraphModule GM = nng::fx::symbolic_trace(*M, {Spec});
      Nodes = GM.graph().nodes().size();
      benchmark::DoNotOptimize(Nodes);
    }
    State.SetLabel(std::to_string(Nodes) + " nodes");
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

const bool Registered = [] {
  for (const std::string &Name : nng::zoo::names())
    benchmark::RegisterBenchmark(("BM_Trace/" + Name).c_str(),
                                 [Name](benchmark::State &S) {
                                   BM_Trace(S, Name);
                                 })
        ->Unit(benchmark::kMillisecond);
  return true;
}();

} // namespace

BENCHMARK_MAIN();
