//===- Allocator.h - Memory allocators --------------------------*- C++ -*-===//
//
// Allocator hands out raw memory for Storage. The CPU allocator returns
// 64-byte aligned blocks (cache lines, AVX-512 vectors).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace nng {

/// Alignment of every block the CPU allocator returns.
inline constexpr size_t StorageAlignment = 64;

/// Interface of a memory allocator.
class Allocator {
public:
  virtual ~Allocator();
  /// Returns Bytes of memory (never null; throws Error on failure).
  virtual void *allocate(size_t Bytes) = 0;
  virtual void deallocate(void *Ptr, size_t Bytes) = 0;
};

/// The process-wide 64-byte aligned host allocator.
Allocator &cpuAllocator();

} // namespace nng
