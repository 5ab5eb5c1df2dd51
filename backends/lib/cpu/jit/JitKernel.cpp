//===- JitKernel.cpp - Running a compiled kernel over the OpenMP threads --===//
//
// JitKernel::run checks the launch arguments once, fills in row-major
// strides when none are given and splits the work with nng::parallelFor:
// whole rows per thread (about 16K elements per chunk at least, so small
// kernels stay on one thread), or, for an elementwise kernel with fewer rows
// than threads, blocks of 16 along the inner dim. Reductions never split a
// row, so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/KernelJit.h"

#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>

namespace nng::backends::cpu {

JitKernel::JitKernel(kernel::Kernel K, EntryFn Fn, std::shared_ptr<void> Owner,
                     bool FromCache, double ReadyMs)
    : K(std::move(K)), Fn(Fn), Owner(std::move(Owner)), FromCache(FromCache),
      ReadyMs(ReadyMs) {}

JitKernel::~JitKernel() = default;

namespace {
/// Elements per parallel chunk, at least.
constexpr int64_t Grain = 16384;
} // namespace

void JitKernel::run(std::span<void *const> Buffers,
                    std::span<const int64_t> Sizes,
                    std::span<const int64_t> Strides) const {
  kernel::checkLaunch(K, Buffers.size(), Sizes, Strides);
  std::vector<int64_t> Own;
  if (Strides.empty()) {
    Own = kernel::rowMajorStrides(K, Sizes);
    Strides = Own;
  }
  int64_t Outer = 1;
  for (int D = 0; D < K.inner(); ++D)
    Outer *= Sizes[D];
  int64_t Inner = Sizes[K.inner()];
  bool Elementwise = K.isElementwise();
  if (Outer == 0 || (Elementwise && Inner == 0))
    return;
  for (size_t B = 0; B < Buffers.size(); ++B)
    NNG_CHECK(Buffers[B], "kernel @", K.Name, ": buffer %", K.Buffers[B].Name,
              " is null for a domain that is not empty");
  void *const *Bufs = Buffers.data();
  const int64_t *Sz = Sizes.data(), *St = Strides.data();
  EntryFn F = Fn;
  if (Elementwise && Outer < numThreads() && Outer * Inner >= 2 * Grain) {
    int64_t Blocks = (Inner + 15) / 16;
    int64_t BlockGrain = std::max<int64_t>(1, Grain / 16 / Outer);
    parallelFor(0, Blocks, BlockGrain, [&](int64_t B, int64_t E) {
      F(Bufs, Sz, St, 0, Outer, B * 16, std::min(E * 16, Inner));
    });
    return;
  }
  int64_t RowGrain = std::max<int64_t>(1, Grain / std::max<int64_t>(Inner, 1));
  parallelFor(0, Outer, RowGrain,
              [&](int64_t B, int64_t E) { F(Bufs, Sz, St, B, E, 0, Inner); });
}

void JitKernel::runRows(std::span<void *const> Buffers,
                        std::span<const int64_t> Sizes,
                        std::span<const int64_t> Strides, int64_t OuterBegin,
                        int64_t OuterEnd) const {
  NNG_CHECK(!Strides.empty(), "kernel @", K.Name,
            ": runRows needs the strides (kernel::rowMajorStrides)");
  kernel::checkLaunch(K, Buffers.size(), Sizes, Strides);
  Fn(Buffers.data(), Sizes.data(), Strides.data(), OuterBegin, OuterEnd, 0,
     Sizes[K.inner()]);
}

} // namespace nng::backends::cpu
