//===- EagerBench.cpp - Eager dispatch overhead and a CNN training step ---===//
//
// The nngraph half of the eager comparison with PyTorch (eager_vs_torch.py
// runs the PyTorch half in the same run and prints the ratios):
//
//   BM_AddDispatch/requires_grad:{0,1}  c = a + b on two f32[16] tensors:
//       the per-op cost of the dispatcher (cache lookup, output allocation,
//       the kernel; with requires_grad also the autograd node).
//   BM_SigmoidDispatch  c = a.sigmoid() on f32[16]: an op the dispatcher's
//       inline loops do not serve (the cached single-op executable of the
//       eager backend, oneDNN's eltwise primitive, run on one thread since
//       the tensor is small); not part of the PyTorch comparison.
//   BM_TrainStep/batch:64  one training step of the Fashion-MNIST example
//       CNN (examples/fashion-mnist/Model.h): zero_grad, forward,
//       cross_entropy, backward, SGD step with momentum.
//
// Inputs are made outside the timed loop; each benchmark warms up first
// (the eager single-op cache, first-touch allocations). Times are wall
// clock; the CPU time is the whole process's (all OpenMP threads), as
// Python's time.process_time() measures PyTorch's. Run with repetitions and
// read the medians (see README.md).
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/optim/SGD.h"

#include <benchmark/benchmark.h>

namespace {

void BM_AddDispatch(benchmark::State &State) {
  const bool RequiresGrad = State.range(0) != 0;
  try {
    nng::manual_seed(0);
    nng::Tensor A =
        nng::randn({16}, nng::TensorOptions().requires_grad(RequiresGrad));
    nng::Tensor B =
        nng::randn({16}, nng::TensorOptions().requires_grad(RequiresGrad));
    for (int I = 0; I < 1000; ++I) // Warm-up.
      benchmark::DoNotOptimize(A + B);
    for (auto _ : State) {
      nng::Tensor C = A + B;
      benchmark::DoNotOptimize(C.impl().get());
    }
    State.SetLabel(RequiresGrad ? "f32[16] + f32[16], requires_grad"
                                : "f32[16] + f32[16]");
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

void BM_SigmoidDispatch(benchmark::State &State) {
  try {
    nng::manual_seed(0);
    nng::Tensor A = nng::randn({16});
    for (int I = 0; I < 1000; ++I) // Warm-up.
      benchmark::DoNotOptimize(A.sigmoid());
    for (auto _ : State) {
      nng::Tensor C = A.sigmoid();
      benchmark::DoNotOptimize(C.impl().get());
    }
    State.SetLabel("sigmoid(f32[16])");
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

void BM_TrainStep(benchmark::State &State) {
  const int64_t Batch = State.range(0);
  try {
    nng::manual_seed(0);
    auto Model = std::make_shared<fmnist::FashionCnn>();
    Model->train();
    nng::optim::SGD Opt(Model->parameters(), {.lr = 0.05, .momentum = 0.9});
    nng::Tensor X = nng::randn({Batch, 1, 28, 28});
    nng::Tensor Y = nng::randint(0, 10, {Batch});
    auto step = [&] {
      Opt.zero_grad();
      nng::Tensor Loss = nng::F::cross_entropy((*Model)(X), Y);
      Loss.backward();
      Opt.step();
      return Loss;
    };
    for (int I = 0; I < 3; ++I) // Warm-up.
      step();
    for (auto _ : State) {
      nng::Tensor Loss = step();
      benchmark::DoNotOptimize(Loss.impl().get());
    }
    State.SetItemsProcessed(State.iterations() * Batch);
    State.SetLabel("Fashion-MNIST CNN, batch " + std::to_string(Batch));
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

} // namespace

BENCHMARK(BM_AddDispatch)
    ->ArgName("requires_grad")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kNanosecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();
BENCHMARK(BM_SigmoidDispatch)
    ->Unit(benchmark::kNanosecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();
BENCHMARK(BM_TrainStep)
    ->ArgName("batch")
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

BENCHMARK_MAIN();
