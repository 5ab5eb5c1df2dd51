//===- CpuBench.cpp - Reference vs cpu backend on single ops -------------===//
//
// Times one Executable::run of a single-node graph (compiled once, inputs
// made once, outside the timed loop) on the reference and the cpu (oneDNN)
// backend: a 3x3 convolution, a square matmul, and a small Add that shows
// the per-call overhead eager mode pays; and the bundled small CNN (batch 8)
// as a whole graph. The ratio of the two rows of a shape is the speed-up.
// Run with repetitions to get medians:
//
//   build/bin/nngraph-bench-cpu --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/ShapeInference.h"

#include <benchmark/benchmark.h>

#include <random>

namespace {

using nng::DType;
using nng::Shape;
using nng::rt::Tensor;

Tensor randomTensor(const Shape &S, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> U(-1, 1);
  Tensor T = Tensor::empty(S, DType::F32);
  float *P = T.data<float>();
  for (int64_t I = 0; I < T.numel(); ++I)
    P[I] = U(Gen);
  return T;
}

/// Times Op over Inputs (all graph inputs) on the backend named by Name.
void runOp(benchmark::State &State, const char *Backend, nng::ir::OpKind Op,
           const std::vector<Tensor> &Inputs, nng::ir::AttrMap Attrs,
           double Flops) {
  try {
    nng::ir::Graph G;
    G.setName("bench");
    std::vector<nng::ir::Value *> Ins;
    for (size_t I = 0; I < Inputs.size(); ++I)
      Ins.push_back(G.addInput(
          "in" + std::to_string(I),
          nng::ir::TensorType(Inputs[I].dtype(), Inputs[I].shape())));
    nng::ir::Node *N = G.addNode(Op, Ins, {"out"}, std::move(Attrs));
    G.addOutput(N->output());
    nng::ir::inferTypes(G);
    auto Exe = nng::backends::getBackend(Backend).compile(G);
    Exe->run(Inputs); // Warm-up: plans, first-touch allocations.
    for (auto _ : State) {
      std::vector<Tensor> Out = Exe->run(Inputs);
      benchmark::DoNotOptimize(Out.data());
    }
    if (Flops > 0)
      State.counters["GFLOP/s"] = benchmark::Counter(
          Flops * 1e-9 * static_cast<double>(State.iterations()),
          benchmark::Counter::kIsRate);
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

const char *backendOf(benchmark::State &State) {
  return State.range(0) ? "cpu" : "reference";
}

void BM_Conv3x3(benchmark::State &State) {
  int64_t C = State.range(1), HW = 28;
  nng::ir::AttrMap A;
  A.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  runOp(State, backendOf(State), nng::ir::OpKind::Conv,
        {randomTensor(Shape{1, C, HW, HW}, 1),
         randomTensor(Shape{C, C, 3, 3}, 2)},
        A, 2.0 * C * C * 9 * HW * HW);
}

void BM_ConvGradWeight3x3(benchmark::State &State) {
  int64_t C = State.range(1), HW = 28;
  nng::ir::AttrMap A;
  A.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  A.set("kernel_shape", std::vector<int64_t>{3, 3});
  runOp(State, backendOf(State), nng::ir::OpKind::ConvGradWeight,
        {randomTensor(Shape{4, C, HW, HW}, 8),
         randomTensor(Shape{4, C, HW, HW}, 9)},
        A, 2.0 * 4 * C * C * 9 * HW * HW);
}

void BM_MatMul(benchmark::State &State) {
  int64_t M = State.range(1);
  runOp(State, backendOf(State), nng::ir::OpKind::MatMul,
        {randomTensor(Shape{M, M}, 3), randomTensor(Shape{M, M}, 4)}, {},
        2.0 * M * M * M);
}

void BM_AddSmall(benchmark::State &State) {
  int64_t N = State.range(1);
  runOp(State, backendOf(State), nng::ir::OpKind::Add,
        {randomTensor(Shape{N}, 5), randomTensor(Shape{N}, 6)}, {}, 0);
}

void BM_SmallCnn(benchmark::State &State) {
  try {
    std::unique_ptr<nng::ir::Graph> G =
        nng::ir::parseGraphFile(NNGRAPH_SMALL_CNN);
    std::vector<Tensor> In{randomTensor(Shape{8, 1, 28, 28}, 7)};
    auto Exe = nng::backends::getBackend(backendOf(State)).compile(*G);
    Exe->run(In);
    for (auto _ : State) {
      std::vector<Tensor> Out = Exe->run(In);
      benchmark::DoNotOptimize(Out.data());
    }
    State.SetItemsProcessed(State.iterations() * 8);
  } catch (const std::exception &E) {
    State.SkipWithError(E.what());
  }
}

Tensor intTensor(const std::vector<int64_t> &V) {
  Tensor T = Tensor::empty(Shape{static_cast<int64_t>(V.size())}, DType::I64);
  for (size_t I = 0; I < V.size(); ++I)
    T.data<int64_t>()[I] = V[I];
  return T;
}

/// The hot ops of eager CNN training on f32[64, 32, 28, 28]. Arg 1 picks:
/// 0/1 ReduceSum axes {0,2,3} keepdims 1 / axes {0} keepdims 0, 2
/// ReduceMean {0,2,3}, 3/4 Expand of [1,32,1,1] / [64,32,1,1], 5 Transpose
/// of [64, 3136], 6 Transpose 4-D (0,2,3,1), 7 MaxPool 2x2 stride 2.
void BM_TrainingOps(benchmark::State &State) {
  using nng::ir::OpKind;
  Shape Big{64, 32, 28, 28};
  nng::ir::AttrMap A;
  switch (State.range(1)) {
  case 0:
    A.set("keepdims", int64_t(1));
    return runOp(State, backendOf(State), OpKind::ReduceSum,
                 {randomTensor(Big, 1), intTensor({0, 2, 3})}, A, 0);
  case 1:
    A.set("keepdims", int64_t(0));
    return runOp(State, backendOf(State), OpKind::ReduceSum,
                 {randomTensor(Big, 1), intTensor({0})}, A, 0);
  case 2:
    A.set("axes", std::vector<int64_t>{0, 2, 3});
    return runOp(State, backendOf(State), OpKind::ReduceMean,
                 {randomTensor(Big, 1)}, A, 0);
  case 3:
    return runOp(State, backendOf(State), OpKind::Expand,
                 {randomTensor(Shape{1, 32, 1, 1}, 1), intTensor(Big.dims())},
                 A, 0);
  case 4:
    return runOp(State, backendOf(State), OpKind::Expand,
                 {randomTensor(Shape{64, 32, 1, 1}, 1), intTensor(Big.dims())},
                 A, 0);
  case 5:
    return runOp(State, backendOf(State), OpKind::Transpose,
                 {randomTensor(Shape{64, 3136}, 1)}, A, 0);
  case 6:
    A.set("perm", std::vector<int64_t>{0, 2, 3, 1});
    return runOp(State, backendOf(State), OpKind::Transpose,
                 {randomTensor(Big, 1)}, A, 0);
  default:
    A.set("kernel_shape", std::vector<int64_t>{2, 2});
    A.set("strides", std::vector<int64_t>{2, 2});
    return runOp(State, backendOf(State), OpKind::MaxPool,
                 {randomTensor(Big, 1)}, A, 0);
  }
}

} // namespace

// Arg 0: 0 = reference, 1 = cpu.
BENCHMARK(BM_Conv3x3)
    ->ArgNames({"cpu", "channels"})
    ->Args({0, 16})
    ->Args({1, 16})
    ->Args({0, 32})
    ->Args({1, 32})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ConvGradWeight3x3)
    ->ArgNames({"cpu", "channels"})
    ->Args({0, 16})
    ->Args({1, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_MatMul)
    ->ArgNames({"cpu", "n"})
    ->Args({0, 128})
    ->Args({1, 128})
    ->Args({0, 256})
    ->Args({1, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_AddSmall)
    ->ArgNames({"cpu", "n"})
    ->Args({0, 64})
    ->Args({1, 64})
    ->Args({0, 65536})
    ->Args({1, 65536})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_TrainingOps)
    ->ArgNames({"cpu", "op"})
    ->ArgsProduct({{0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_SmallCnn)
    ->ArgNames({"cpu", "x"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
