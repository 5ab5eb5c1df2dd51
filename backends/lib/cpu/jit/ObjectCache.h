//===- ObjectCache.h - The JIT's persistent object cache (internal) -*- C++
//-*-===//
//
// Compiled kernel objects on disk, one file per key. A file carries a
// header (magic, format version, lengths), the full key and 64-bit FNV-1a
// checksums of key and object; load() accepts a file only when all of it
// matches, so a truncated, corrupted, foreign or colliding entry reads as
// corrupt and is rebuilt. store() writes a temporary file and renames it
// over the entry (atomic on POSIX). A folder that cannot be created or
// written makes store() fail and nothing else.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace nng::backends::cpu::jit {

class ObjectCache {
public:
  /// A cache in folder Dir; an empty Dir disables it.
  explicit ObjectCache(std::string Dir) : Dir(std::move(Dir)) {}

  /// The folder from the environment: $NNGRAPH_CACHE_DIR, else
  /// $XDG_CACHE_HOME/nngraph, else $HOME/.cache/nngraph; empty if none.
  static std::string defaultDir();

  bool enabled() const { return !Dir.empty(); }
  const std::string &dir() const { return Dir; }
  /// The file holding Key's entry.
  std::string pathFor(std::string_view Key) const;

  enum class Lookup { Miss, Hit, Corrupt };
  /// Reads Key's object into Object.
  Lookup load(std::string_view Key, std::string &Object) const;
  /// Writes Key's entry; false when it could not.
  bool store(std::string_view Key, std::string_view Object) const;

private:
  std::string Dir;
};

/// 64-bit FNV-1a of Data.
uint64_t fnv1a64(std::string_view Data);

} // namespace nng::backends::cpu::jit
