//===- ReferenceBench.cpp - The reference backend on the small CNN --------===//
//
// Times one run of examples/models/small_cnn.nng on the reference backend at
// batch 1 and 8 (compiled once, inputs made once, outside the timed loop),
// and reports images per second. Run with repetitions to get medians:
//
//   build/bin/nngraph-bench-reference --benchmark_repetitions=10 \
//       --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/tools/ToolSupport.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace {

/// The model path: $NNGRAPH_BENCH_MODEL, else the bundled small CNN.
std::string modelPath() {
  const char *Env = std::getenv("NNGRAPH_BENCH_MODEL");
  return Env ? Env : NNGRAPH_SMALL_CNN;
}

void BM_ReferenceSmallCnn(benchmark::State &State) {
  const int64_t Batch = State.range(0);
  try {
    std::unique_ptr<nng::ir::Graph> G = nng::frontend::loadModel(modelPath());
    nng::tools::DimBindings Dims;
    for (const std::string &S : nng::tools::inputSymbols(*G))
      Dims[S] = Batch;
    std::vector<nng::rt::Tensor> Inputs =
        nng::tools::makeDeterministicInputs(*G, Dims, /*Seed=*/0);
    auto Exe = nng::backends::referenceBackend().compile(*G);
    Exe->run(Inputs); // Warm-up: first-touch allocations, caches.
    for (auto _ : State) {
      std::vector<nng::rt::Tensor> Out = Exe->run(Inputs);
      benchmark::DoNotOptimize(Out.data());
      benchmark::ClobberMemory();
    }
    State.SetItemsProcessed(State.iterations() * Batch);
    State.SetLabel("batch " + std::to_string(Batch));
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

} // namespace

BENCHMARK(BM_ReferenceSmallCnn)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
