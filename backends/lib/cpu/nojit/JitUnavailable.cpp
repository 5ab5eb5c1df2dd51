//===- JitUnavailable.cpp - The kernel JIT API in builds without LLVM -----===//
//
// Built instead of backends/lib/cpu/jit/ when NNGRAPH_HAVE_LLVM is 0: the
// KernelJit API exists, kernelJitAvailable() is false and compiling says
// how to get the JIT. Callers fall back to other kernels.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/KernelJit.h"

#include "nngraph/runtime/Error.h"

namespace nng::backends::cpu {

namespace {
[[noreturn]] void unavailable() {
  fail(ErrorKind::Unsupported,
       "kernel JIT: this nngraph was built without LLVM "
       "(NNGRAPH_ENABLE_LLVM=OFF); reconfigure with -DNNGRAPH_ENABLE_LLVM=ON "
       "and llvm-19-dev installed to compile kernels");
}
} // namespace

bool kernelJitAvailable() { return false; }

struct KernelJit::Impl {};

JitKernel::JitKernel(kernel::Kernel K, EntryFn Fn, std::shared_ptr<void> Owner,
                     bool FromCache, double ReadyMs)
    : K(std::move(K)), Fn(Fn), Owner(std::move(Owner)), FromCache(FromCache),
      ReadyMs(ReadyMs) {}
JitKernel::~JitKernel() = default;
void JitKernel::run(std::span<void *const>, std::span<const int64_t>,
                    std::span<const int64_t>) const {
  unavailable();
}
void JitKernel::runRows(std::span<void *const>, std::span<const int64_t>,
                        std::span<const int64_t>, int64_t, int64_t) const {
  unavailable();
}

KernelJit::KernelJit(JitOptions) {}
KernelJit::~KernelJit() = default;
KernelJit &KernelJit::global() {
  static KernelJit G;
  return G;
}
std::shared_ptr<const JitKernel> KernelJit::compile(const kernel::Kernel &) {
  unavailable();
}
std::string KernelJit::llvmIR(const kernel::Kernel &, bool) { unavailable(); }
std::string KernelJit::assembly(const kernel::Kernel &) { unavailable(); }
JitStats KernelJit::stats() const { return {}; }
void KernelJit::resetStats() {}
std::string KernelJit::cacheDir() const { return {}; }
std::string KernelJit::hostCPU() const { return {}; }
std::string KernelJit::hostFeatures() const { return {}; }

} // namespace nng::backends::cpu
