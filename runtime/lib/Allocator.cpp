//===- Allocator.cpp - The 64-byte aligned host allocator ----------------===//
//
// Blocks of 4 MiB and more (weights, packed weights, arenas) are advised to
// the kernel as candidates for transparent huge pages (Linux, where THP is
// in "madvise" mode, as Debian's default is): a pass over a model's weights
// then takes one TLB entry per 2 MiB instead of 512, and first-touching
// them faults 512 times less often. Only the 2 MiB-aligned interior is
// advised, so no block takes more memory than it asked for.
//
// Freed blocks from 128 KiB to 16 MiB are kept (at most 24 MiB in all, the
// oldest given back first, and none past 256 large allocations without
// being taken) and handed out again for the same size: a
// model's run allocates the same large tensors every time (a detector's
// part after its graph cut runs node by node, each output a fresh tensor),
// and a block from the C library above its mmap threshold is fresh pages
// every time, which the kernel faults in and clears (a fifth of RetinaNet's
// run was clear_page before this cache).
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/Allocator.h"
#include "nngraph/runtime/Error.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

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
  uintptr_t Begin =
      (reinterpret_cast<uintptr_t>(P) + HugePage - 1) & ~(HugePage - 1);
  uintptr_t End = (reinterpret_cast<uintptr_t>(P) + Bytes) & ~(HugePage - 1);
  if (End > Begin)
    madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_HUGEPAGE);
#else
  (void)P;
  (void)Bytes;
#endif
}

/// Freed large blocks kept for reuse at the same size (see the top).
class BlockCache {
public:
  static constexpr size_t MinBytes = size_t(128) << 10;
  static constexpr size_t MaxBytes = size_t(16) << 20;
  static constexpr size_t CapBytes = size_t(24) << 20;
  static_assert(MaxBytes <= CapBytes, "a kept block must fit the cap");

  /// Large allocations after which a kept block nobody took is freed: a
  /// block of a size the model no longer asks for (a decoder's cache, one
  /// position longer every step) is not kept for long.
  static constexpr uint64_t MaxAge = 256;

  /// A kept block of exactly Bytes, or null.
  void *take(size_t Bytes) {
    if (Bytes < MinBytes || Bytes > MaxBytes)
      return nullptr;
    std::lock_guard<std::mutex> Lock(Mu);
    ++Tick;
    for (size_t I = Blocks.size(); I-- > 0;)
      if (Blocks[I].Bytes == Bytes) {
        void *P = Blocks[I].Ptr;
        Blocks.erase(Blocks.begin() + static_cast<std::ptrdiff_t>(I));
        Held -= Bytes;
        return P;
      }
    return nullptr;
  }

  /// Keeps P (Bytes long) unless it is outside the kept sizes; frees the
  /// oldest kept blocks past the cap. False when P was not kept.
  bool give(void *P, size_t Bytes) {
    if (Bytes < MinBytes || Bytes > MaxBytes)
      return false;
    std::vector<void *> Evicted;
    {
      std::lock_guard<std::mutex> Lock(Mu);
      Blocks.push_back({P, Bytes, Tick});
      Held += Bytes;
      size_t Drop = 0;
      while (Drop + 1 < Blocks.size() &&
             (Held > CapBytes || Tick - Blocks[Drop].Since > MaxAge))
        Held -= Blocks[Drop].Bytes, Evicted.push_back(Blocks[Drop++].Ptr);
      Blocks.erase(Blocks.begin(),
                   Blocks.begin() + static_cast<std::ptrdiff_t>(Drop));
    }
    for (void *E : Evicted)
      std::free(E);
    return true;
  }

private:
  struct Block {
    void *Ptr;
    size_t Bytes;
    uint64_t Since; ///< Tick when it was kept.
  };
  std::mutex Mu;
  std::vector<Block> Blocks; ///< Oldest first.
  size_t Held = 0;
  uint64_t Tick = 0; ///< Large allocations so far.
};

/// The cache, never destroyed: storages freed during static destruction
/// still find it.
BlockCache &blockCache() {
  static BlockCache *C = new BlockCache;
  return *C;
}

size_t roundedSize(size_t Bytes) {
  size_t Rounded =
      (Bytes + StorageAlignment - 1) / StorageAlignment * StorageAlignment;
  return Rounded == 0 ? StorageAlignment : Rounded;
}

class CPUAllocator final : public Allocator {
public:
  void *allocate(size_t Bytes) override {
    size_t Rounded = roundedSize(Bytes);
    if (void *Kept = blockCache().take(Rounded))
      return Kept;
    void *P = std::aligned_alloc(StorageAlignment, Rounded);
    if (!P)
      fail(ErrorKind::InvalidArgument, "out of memory allocating ", Bytes,
           " bytes");
    if (Rounded >= HugeAdviceBytes)
      adviseHugePages(P, Rounded);
    return P;
  }
  void deallocate(void *Ptr, size_t Bytes) override {
    if (Ptr && blockCache().give(Ptr, roundedSize(Bytes)))
      return;
    std::free(Ptr);
  }
};
} // namespace

Allocator &cpuAllocator() {
  static CPUAllocator A;
  return A;
}

} // namespace nng
