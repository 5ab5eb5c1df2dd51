//===- Zip.h - The zip container of .pt and .npz files -----------*- C++ -*-===//
//
// A reader and a writer for the subset of the zip format that torch.save and
// numpy.savez use: stored and deflated entries, zip64 sizes and offsets,
// no encryption, no multi-disk archives. The reader parses the central
// directory and checks every offset and size against the archive before
// reading, refuses entry names that are absolute or contain a ".."
// component (also backslashes, NULs and duplicates), checks CRC-32s, and
// inflates (zlib) with a limit on the output size and the compression
// ratio, so a zip bomb is an error rather than an exhausted memory. Stored
// entries are returned as views into the archive (no copy).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Storage.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace nng::weights::zip {

/// One entry of the central directory.
struct Entry {
  std::string Name;
  /// Offset of the entry's data (after its local header) in the archive.
  uint64_t DataOffset = 0;
  uint64_t CompressedSize = 0;
  uint64_t Size = 0;
  /// 0 stored, 8 deflated.
  uint16_t Method = 0;
  uint32_t Crc32 = 0;
};

class Reader {
public:
  /// Parses Archive (the whole file; Name names it in messages).
  Reader(std::shared_ptr<Storage> Archive, std::string Name);
  const std::vector<Entry> &entries() const { return Entries; }
  /// The entry called EntryName, or null.
  const Entry *find(const std::string &EntryName) const;
  /// The entry's bytes: a view into the archive when stored, else inflated
  /// into new storage (never past the declared size). Checks the CRC-32.
  std::shared_ptr<Storage> read(const Entry &E) const;
  const std::string &name() const { return Name; }

private:
  std::shared_ptr<Storage> Archive;
  std::string Name;
  std::vector<Entry> Entries;
  std::unordered_map<std::string, size_t> Index;
};

class Writer {
public:
  explicit Writer(std::ostream &OS);
  /// Appends a stored entry whose data starts at a multiple of Align bytes
  /// (torch.save aligns storages to 64; padding goes in the extra field).
  void add(const std::string &EntryName, const void *Data, uint64_t Size,
           unsigned Align = 64);
  /// Writes the central directory (zip64 records when needed).
  void finish();

private:
  std::ostream &OS;
  uint64_t Pos = 0;
  std::vector<Entry> Written;
  std::vector<uint64_t> LocalHeaderOffsets;
};

} // namespace nng::weights::zip
