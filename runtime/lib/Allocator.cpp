//===- Allocator.cpp - The 64-byte aligned host allocator ----------------===//

#include "nngraph/runtime/Allocator.h"
#include "nngraph/runtime/Error.h"

#include <cstdlib>
#include <new>

namespace nng {

Allocator::~Allocator() = default;

namespace {
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
