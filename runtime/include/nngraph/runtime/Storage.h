//===- Storage.h - Reference-counted memory blocks --------------*- C++ -*-===//
//
// Storage is a block of memory shared by tensors (through shared_ptr). It is
// either allocated (64-byte aligned, from an Allocator), wraps memory owned by
// someone else (with an owner handle kept alive or a deleter), or maps a file
// copy-on-write (weights files are read without a copy and never written).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Device.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace nng {

class Allocator;

/// A block of bytes on a device.
class Storage {
public:
  using Deleter = std::function<void(void *)>;

  ~Storage();
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;

  /// Allocates Bytes (zero-filled) from A (the CPU allocator by default).
  static std::shared_ptr<Storage> allocate(size_t Bytes,
                                           Device D = Device::cpu(),
                                           Allocator *A = nullptr);
  /// Wraps external memory; Free (may be empty) runs when the last reference
  /// goes away.
  static std::shared_ptr<Storage> wrap(void *Data, size_t Bytes, Deleter Free,
                                       Device D = Device::cpu());
  /// Wraps external memory kept alive by Owner.
  static std::shared_ptr<Storage> wrap(void *Data, size_t Bytes,
                                       std::shared_ptr<const void> Owner,
                                       Device D = Device::cpu());
  /// Maps Length bytes of Path at Offset (Length 0: to the end), private
  /// and copy-on-write: reading costs no copy, and a write (an in-place op
  /// on a tensor loaded from a weights file) copies the touched pages and
  /// never reaches the file. Throws Error(IO) naming the file when it cannot
  /// be opened or is too short.
  static std::shared_ptr<Storage> mapFile(const std::string &Path,
                                          size_t Offset = 0, size_t Length = 0);

  void *data() { return Data; }
  const void *data() const { return Data; }
  size_t bytes() const { return Bytes; }
  Device device() const { return Dev; }
  /// False for storages that must not be written.
  bool isWritable() const { return Writable; }

  /// The write version: bumped whenever a writable pointer to the data is
  /// handed out (Tensor's non-const rawData()/data<T>()), so a consumer
  /// that keeps a derived copy (the cpu backend's reordered weights) can
  /// tell that the bytes may have changed since it made the copy. Code that
  /// writes through data() directly must call bumpVersion() itself.
  uint64_t version() const { return Version.load(std::memory_order_relaxed); }
  void bumpVersion() { Version.fetch_add(1, std::memory_order_relaxed); }

private:
  Storage() = default;
  void *Data = nullptr;
  size_t Bytes = 0;
  Device Dev;
  bool Writable = true;
  std::atomic<uint64_t> Version{0};
  Deleter Free;
  std::shared_ptr<const void> Owner;
};

} // namespace nng
