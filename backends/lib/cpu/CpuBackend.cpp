//===- CpuBackend.cpp - The "cpu" backend on the reference run loop ----===//
//
// Compiles a graph into the reference interpreter with a kernel chooser that
// gives each node a oneDNN kernel when its op family has one and its
// attributes allow it, and the reference kernel otherwise. The oneDNN
// kernels themselves fall back per input signature (DnnlKernel.h). A node
// whose tensors are all small and whose work grows with them (elementwise,
// reductions, normalization, pooling, shape ops: not conv or matmul) runs
// with one OpenMP thread, so it never enters a parallel region: a fork/join
// costs microseconds (milliseconds on an oversubscribed machine), far more
// than a few thousand elements of work.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/CpuBackend.h"
#include "DnnlKernel.h"
#include "FastKernels.h"
#include "FastTraining.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Parallel.h"

namespace nng::backends {

namespace cpu {
namespace {

/// The oneDNN kernel of N, or null.
std::shared_ptr<DnnlKernel> dnnlKernelFor(const ir::Node &N) {
  using ir::OpKind;
  switch (N.op()) {
  case OpKind::Conv:
  case OpKind::FusedConv:
    return makeConvKernel(N);
  case OpKind::ConvTranspose:
    return makeConvTransposeKernel(N);
  case OpKind::ConvGradWeight:
    return makeConvGradWeightKernel(N);
  case OpKind::MatMul:
    return makeMatMulKernel(N);
  case OpKind::Gemm:
  case OpKind::FusedGemm:
    return makeGemmKernel(N);
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return makePoolKernel(N);
  case OpKind::MaxPoolGrad:
  case OpKind::AveragePoolGrad:
    return makePoolGradKernel(N);
  case OpKind::GlobalAveragePool:
    return makeGlobalAveragePoolKernel(N);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    return makeBinaryKernel(N);
  case OpKind::Relu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Abs:
    return makeEltwiseKernel(N);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return makeSoftmaxKernel(N);
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
    return makeReduceKernel(N);
  case OpKind::BatchNormalization:
    return makeBatchNormKernel(N);
  default:
    return nullptr;
  }
}

/// Tensors up to this many elements are too small to share between threads
/// (PyTorch's GRAIN_SIZE for elementwise loops).
constexpr int64_t SerialElems = 1 << 15;

/// True for ops whose work grows faster than their tensors (a small conv or
/// matmul may still be worth two threads) or that run arbitrary code.
bool keepsThreads(ir::OpKind K) {
  using ir::OpKind;
  switch (K) {
  case OpKind::Conv:
  case OpKind::FusedConv:
  case OpKind::ConvTranspose:
  case OpKind::ConvGradWeight:
  case OpKind::ConvInteger:
  case OpKind::QLinearConv:
  case OpKind::MatMul:
  case OpKind::Gemm:
  case OpKind::FusedGemm:
  case OpKind::MatMulInteger:
  case OpKind::QLinearMatMul:
  case OpKind::Einsum:
  case OpKind::Det:
  case OpKind::RNN:
  case OpKind::GRU:
  case OpKind::LSTM:
  case OpKind::DFT:
  case OpKind::STFT:
  case OpKind::ModuleCall:
    return true;
  default:
    return false;
  }
}

/// True when every input and (statically inferred) output of C has at most
/// SerialElems elements.
bool allSmall(const KernelContext &C) {
  for (const Tensor &T : C.Inputs)
    if (T.defined() && T.numel() > SerialElems)
      return false;
  for (const ir::TensorType &T : C.OutTypes) {
    std::optional<int64_t> Elems = T.staticNumel();
    if (!Elems || *Elems > SerialElems)
      return false;
  }
  return true;
}

/// Sets the calling thread's OpenMP thread count to one for its lifetime.
class SerialScope {
public:
  SerialScope() : Saved(numThreads()) { setNumThreads(1); }
  ~SerialScope() { setNumThreads(Saved); }
  SerialScope(const SerialScope &) = delete;
  SerialScope &operator=(const SerialScope &) = delete;

private:
  int Saved;
};

NodeKernel chooseKernel(const ir::Node &N) {
  NodeKernel Base;
  if (NodeKernel Training = trainingKernelFor(N))
    Base = std::move(Training);
  else if (std::shared_ptr<DnnlKernel> K = dnnlKernelFor(N))
    Base = asNodeKernel(std::move(K));
  else
    Base = NodeKernel(reference::getKernel(N.op()));
  NodeKernel Chosen = fastKernelFor(N, Base);
  if (!Chosen)
    Chosen = std::move(Base);
  if (keepsThreads(N.op()))
    return Chosen;
  return [K = std::move(Chosen)](KernelContext &C) {
    if (numThreads() <= 1 || !allSmall(C))
      return K(C);
    SerialScope Serial;
    K(C);
  };
}

class CpuBackend final : public Backend {
public:
  std::string_view name() const override { return "cpu"; }
  bool supportsOp(const ir::Node &) const override { return true; }
  std::unique_ptr<Executable> compile(const ir::Graph &G) override {
    ir::verifyOrThrow(G);
    return reference::makeInterpreter(G.clone(), chooseKernel, name());
  }
};

} // namespace
} // namespace cpu

Backend &cpuBackend() {
  static cpu::CpuBackend B;
  return B;
}

bool cpuServesWithDnnl(const ir::Node &N) {
  return cpu::dnnlKernelFor(N) != nullptr;
}

CpuCallCounts cpuCallCounts() {
  CpuCallCounts Counts = cpu::dnnlCallCounts();
  Counts.Fast = cpu::fastCallCount() + cpu::trainingFastCallCount();
  return Counts;
}

} // namespace nng::backends
