//===- KernelTable.cpp - Lookups in the cpu backend's kernel table --------===//
//
// The three columns of KernelTable.def as functions of the op: the
// compiled lowering, the oneDNN node kernel and the oneDNN algorithm.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

LowerFn lowerFnFor(ir::OpKind K) {
  switch (K) {
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg)                             \
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
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg)                             \
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
#define NNG_CPU_KERNEL(Op, Lower, NodeKernel, Alg)                             \
  case ir::OpKind::Op:                                                         \
    return dnnl::algorithm::Alg;
#include "KernelTable.def"
  default:
    return dnnl::algorithm::undef;
  }
}

} // namespace nng::backends::cpu
