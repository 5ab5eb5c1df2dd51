//===- KernelTable.cpp - Lookups in the cpu backend's kernel table --------===//
//
// The columns of KernelTable.def as functions of the op: the compiled
// lowering, the oneDNN node kernel, the oneDNN algorithm and the own f32
// loop a node kernel tries first.
//
//===----------------------------------------------------------------------===//

#include "FastKernels.h"
#include "FastTraining.h"
#include "Lower.h"

#include <atomic>

namespace nng::backends::cpu {

LowerFn lowerFnFor(ir::OpKind K) {
  switch (K) {
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg, Loop)                       \
  case ir::OpKind::Op:                                                         \
    return Lower;
#include "KernelTable.def"
  default:
    return nullptr;
  }
}

std::shared_ptr<DnnlKernel> dnnlKernelFor(const ir::Node &N) {
  using Factory = std::shared_ptr<DnnlKernel> (*)(const ir::Node &);
  Factory F = nullptr;
  switch (N.op()) {
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg, Loop)                       \
  case ir::OpKind::Op:                                                         \
    F = NodeKernel;                                                            \
    break;
#include "KernelTable.def"
  default:
    break;
  }
  return F ? F(N) : nullptr;
}

dnnl::algorithm dnnlAlgorithmFor(ir::OpKind K) {
  switch (K) {
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg, Loop)                       \
  case ir::OpKind::Op:                                                         \
    return dnnl::algorithm::Alg;
#include "KernelTable.def"
  default:
    return dnnl::algorithm::undef;
  }
}

namespace {
std::atomic<int64_t> OwnLoopCalls{0};
} // namespace

NodeKernel withOwnLoop(ir::OpKind K, NodeKernel Fallback) {
  bool (*Loop)(KernelContext &) = nullptr;
  switch (K) {
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg, LoopFn)                     \
  case ir::OpKind::Op:                                                         \
    Loop = LoopFn;                                                             \
    break;
#include "KernelTable.def"
  default:
    break;
  }
  if (!Loop)
    return Fallback;
  return [Loop, Fallback = std::move(Fallback)](KernelContext &C) {
    if (Loop(C))
      OwnLoopCalls.fetch_add(1, std::memory_order_relaxed);
    else
      Fallback(C);
  };
}

int64_t ownLoopCallCount() {
  return OwnLoopCalls.load(std::memory_order_relaxed);
}

} // namespace nng::backends::cpu
