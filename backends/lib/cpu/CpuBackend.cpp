//===- CpuBackend.cpp - The "cpu" backend on the reference run loop ----===//
//
// Compiles a graph into the reference interpreter with a kernel chooser that
// gives each node a oneDNN kernel when its op family has one and its
// attributes allow it, and the reference kernel otherwise. The oneDNN
// kernels themselves fall back per input signature (DnnlKernel.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/CpuBackend.h"
#include "DnnlKernel.h"
#include "FastKernels.h"
#include "nngraph/ir/Verifier.h"

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

NodeKernel chooseKernel(const ir::Node &N) {
  NodeKernel Base;
  if (std::shared_ptr<DnnlKernel> K = dnnlKernelFor(N))
    Base = asNodeKernel(std::move(K));
  else
    Base = NodeKernel(reference::getKernel(N.op()));
  if (NodeKernel Fast = fastKernelFor(N, Base))
    return Fast;
  return Base;
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
  Counts.Fast = cpu::fastCallCount();
  return Counts;
}

} // namespace nng::backends
