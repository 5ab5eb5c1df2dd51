//===- Allocator.cpp - The 64-byte aligned host allocator ----------------===//
//
// Blocks of 4 MiB and more (weights, packed weights, arenas) are advised to
// the kernel as candidates for transparent huge pages (Linux, where THP is
// in "madvise" mode, as Debian's default is): a pass over a model's weights
// then takes one TLB entry per 2 MiB instead of 512, and first-touching
// them faults 512 times less often. Only the 2 MiB-aligned interior is
// advised, so no block takes more memory than it asked for.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/Allocator.h"
#include "nngraph/runtime/Error.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nng {

Allocator::~Allocator() = default;

namespace {

/// Blocks from this size on are advised for huge pages.
constexpr size_t HugeAdviceBytes = size_t(4) << 20;
constexpr uintptr_t HugePage = uintptr_t(2) << 20;

/// Advises the whole 2 MiB pages inside [P, P + Bytes) for transparent huge
/// pages; a hint only (errors are ignored: no THP, another kernel).
void adviseHugePages(void *P, size_t Bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  uintptr_t Begin = (reinterpret_cast<uintptr_t>(P) + HugePage - 1) & ~(HugePage - 1);
  uintptr_t End = (reinterpret_cast<uintptr_t>(P) + Bytes) & ~(HugePage - 1);
  if (End > Begin)
    madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_HUGEPAGE);
#else
  (void)P;
  (void)Bytes;
#endif
}

class CPUAllocator final : public Allocator {
public:
  void *allocate(size_t Bytes) override {
    size_t Rounded = (Bytes + StorageAlignment - 1) / StorageAlignment *
                     StorageAlignment;
    if (Rounded == 0)
      Rounded = StorageAlignment;
    void *P = std::aligned_alloc(StorageAlignment, Rounded);
    if (!P)
      fail(ErrorKind::InvalidArgument, "out of memory allocating ", Bytes,
           " bytes");
    if (Rounded >= HugeAdviceBytes)
      adviseHugePages(P, Rounded);
    return P;
  }
  void deallocate(void *Ptr, size_t) override { std::free(Ptr); }
};
} // namespace

Allocator &cpuAllocator() {
  static CPUAllocator A;
  return A;
}

} // namespace nng
