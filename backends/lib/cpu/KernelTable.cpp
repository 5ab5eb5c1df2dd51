//===- KernelTable.cpp - Lookups in the cpu backend's kernel table --------===//
//
// The rows of KernelTable.def, indexed by op once: the compiled lowering,
// the oneDNN node kernel, the oneDNN algorithm and the own f32 loop a node
// kernel tries first; and the node kernel a fallback step runs, chosen
// from them (nodeKernelFor).
//
//===----------------------------------------------------------------------===//

#include "../reference/ControlFlow.h"
#include "DnnlKernel.h"
#include "Kernels.h"
#include "KernelsTraining.h"
#include "Lower.h"
#include "LowerInteger.h"
#include "nngraph/backends/cpu/CpuBackend.h"

#include <array>
#include <atomic>

namespace nng::backends::cpu {

namespace {

/// One row of the table (an op without a row: all empty).
struct KernelRow {
  LowerFn Lower = nullptr;
  std::shared_ptr<DnnlKernel> (*NodeKernel)(const ir::Node &) = nullptr;
  dnnl::algorithm Alg = dnnl::algorithm::undef;
  bool (*Loop)(KernelContext &) = nullptr;
};

const KernelRow &rowFor(ir::OpKind K) {
  static const std::array<KernelRow, ir::NumOpKinds> Rows = [] {
    std::array<KernelRow, ir::NumOpKinds> R{};
#define NNG_CPU_KERNEL(Op, LowerFn, NodeKernelFn, AlgName, LoopFn)             \
  R[static_cast<size_t>(ir::OpKind::Op)] =                                     \
      KernelRow{LowerFn, NodeKernelFn, dnnl::algorithm::AlgName, LoopFn};
#include "KernelTable.def"
    return R;
  }();
  return Rows[static_cast<size_t>(K)];
}

std::atomic<int64_t> OwnLoopCalls{0};

} // namespace

LowerFn lowerFnFor(ir::OpKind K) { return rowFor(K).Lower; }

std::shared_ptr<DnnlKernel> dnnlKernelFor(const ir::Node &N) {
  auto F = rowFor(N.op()).NodeKernel;
  return F ? F(N) : nullptr;
}

dnnl::algorithm dnnlAlgorithmFor(ir::OpKind K) { return rowFor(K).Alg; }

NodeKernel withOwnLoop(ir::OpKind K, NodeKernel Fallback) {
  bool (*Loop)(KernelContext &) = rowFor(K).Loop;
  if (!Loop)
    return Fallback;
  return [Loop, Fallback = std::move(Fallback)](KernelContext &C) {
    if (Loop(C))
      OwnLoopCalls.fetch_add(1, std::memory_order_relaxed);
    else
      Fallback(C);
  };
}

/// Regions compiled by the node kernels of nodes with regions.
std::atomic<int64_t> RegionCompiles{0};

NodeKernel nodeKernelFor(const ir::Node &N) {
  if (N.hasRegions()) {
    auto Runner = std::make_shared<reference::RegionRunner>(
        N, [](const ir::Graph &G) {
          RegionCompiles.fetch_add(1, std::memory_order_relaxed);
          return compileCpu(G, CpuMode::Compiled);
        });
    return [Runner](KernelContext &C) { Runner->run(C); };
  }
  NodeKernel Base;
  if (std::shared_ptr<DnnlKernel> K = dnnlKernelFor(N))
    Base = asNodeKernel(std::move(K));
  else
    Base = NodeKernel(reference::getKernel(N.op()));
  return withOwnLoop(N.op(), std::move(Base));
}

int64_t ownLoopCallCount() {
  return OwnLoopCalls.load(std::memory_order_relaxed);
}

} // namespace nng::backends::cpu
