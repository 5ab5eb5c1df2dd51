//===- CodeGen.h - Kernel IR to LLVM IR (internal) --------------*- C++ -*-===//
//
// emitKernelModule lowers one kernel to an LLVM module holding one function,
//
//   void nng_kernel(void *const *Bufs, const int64_t *Sizes,
//                   const int64_t *Strides, int64_t OuterBegin,
//                   int64_t OuterEnd, int64_t InnerBegin, int64_t InnerEnd)
//
// that runs the rows [OuterBegin, OuterEnd) of the flattened outer domain;
// loops cover [InnerBegin, InnerEnd) of the inner dim (a caller splits it
// only for elementwise kernels), reductions always the whole inner dim.
// Strides holds the element strides (buffer-major, see rowMajorStrides);
// the static ones (0 where a buffer broadcasts, 1 for a unit inner stride)
// are constants in the code. The inner loops are emitted as explicit
// 16-lane vectors plus a scalar tail; reductions keep 16 lane accumulators,
// combine them by a fixed tree (lane i with lane i + 8, then + 4, + 2, + 1)
// and then add the tail in order, so results are deterministic and do not
// depend on the thread split.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace nng::backends::cpu::jit {

/// The name of the entry function of every kernel module.
inline constexpr const char *EntryName = "nng_kernel";
/// Lanes of the explicit vectors (one AVX-512 register of f32).
inline constexpr unsigned Lanes = 16;
/// Version of the generated code: part of the object cache key, so a change
/// of the code generator never loads objects made by an older one. Bump it
/// with every change of CodeGen.cpp or Math.cpp.
inline constexpr int CodeGenVersion = 1;

/// What the module is compiled for.
struct TargetInfo {
  std::string Triple;
  std::string DataLayout;
  std::string CPU;
  std::string Features;    ///< "+avx2,+fma,..." sorted.
  bool PreferWide = false; ///< AVX-512: prefer 512-bit vectors.
};

/// The LLVM module of kernel K (verified), for target T.
std::unique_ptr<llvm::Module> emitKernelModule(const kernel::Kernel &K,
                                               llvm::LLVMContext &Ctx,
                                               const TargetInfo &T);

} // namespace nng::backends::cpu::jit
