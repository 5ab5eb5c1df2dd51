//===- ObjectCache.cpp - The JIT's persistent object cache ----------------===//
//
// The file format (little-endian integers):
//   "NNGJITOB"  magic (8 bytes)
//   u32         format version (1), u32 zero
//   u64         key length, u64 object length
//   u64         FNV-1a of the key, u64 FNV-1a of the object
//   key bytes, object bytes
// The file is named after the FNV-1a of the key (16 hex digits, ".nngo").
//
//===----------------------------------------------------------------------===//

#include "ObjectCache.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace nng::backends::cpu::jit {

namespace {

constexpr char Magic[8] = {'N', 'N', 'G', 'J', 'I', 'T', 'O', 'B'};
constexpr uint32_t FormatVersion = 1;
constexpr size_t HeaderSize = 8 + 4 + 4 + 8 * 4;

void putU64(std::string &S, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    S.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}
void putU32(std::string &S, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    S.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}
uint64_t getU(const std::string &S, size_t At, int Bytes) {
  uint64_t V = 0;
  for (int I = 0; I < Bytes; ++I)
    V |= static_cast<uint64_t>(static_cast<unsigned char>(S[At + I]))
         << (8 * I);
  return V;
}

} // namespace

uint64_t fnv1a64(std::string_view Data) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (char C : Data) {
    H ^= static_cast<unsigned char>(C);
    H *= 0x100000001b3ull;
  }
  return H;
}

std::string ObjectCache::defaultDir() {
  if (const char *D = std::getenv("NNGRAPH_CACHE_DIR"); D && *D)
    return D;
  if (const char *X = std::getenv("XDG_CACHE_HOME"); X && *X)
    return std::string(X) + "/nngraph";
  if (const char *H = std::getenv("HOME"); H && *H)
    return std::string(H) + "/.cache/nngraph";
  return {};
}

std::string ObjectCache::pathFor(std::string_view Key) const {
  char Name[32];
  std::snprintf(Name, sizeof(Name), "%016llx.nngo",
                static_cast<unsigned long long>(fnv1a64(Key)));
  return Dir + "/" + Name;
}

ObjectCache::Lookup ObjectCache::load(std::string_view Key,
                                      std::string &Object) const {
  if (!enabled())
    return Lookup::Miss;
  std::ifstream In(pathFor(Key), std::ios::binary);
  if (!In)
    return Lookup::Miss;
  std::ostringstream SS;
  SS << In.rdbuf();
  std::string F = SS.str();
  if (F.size() < HeaderSize || std::memcmp(F.data(), Magic, 8) != 0 ||
      getU(F, 8, 4) != FormatVersion)
    return Lookup::Corrupt;
  uint64_t KeyLen = getU(F, 16, 8), ObjLen = getU(F, 24, 8);
  if (KeyLen != Key.size() || ObjLen > F.size() ||
      F.size() != HeaderSize + KeyLen + ObjLen)
    return Lookup::Corrupt;
  std::string_view StoredKey(F.data() + HeaderSize, KeyLen);
  std::string_view Obj(F.data() + HeaderSize + KeyLen, ObjLen);
  if (StoredKey != Key || getU(F, 32, 8) != fnv1a64(StoredKey) ||
      getU(F, 40, 8) != fnv1a64(Obj) || Obj.empty())
    return Lookup::Corrupt;
  Object.assign(Obj);
  return Lookup::Hit;
}

bool ObjectCache::store(std::string_view Key, std::string_view Object) const {
  if (!enabled())
    return false;
  namespace fs = std::filesystem;
  std::error_code EC;
  fs::create_directories(Dir, EC);
  if (EC && !fs::is_directory(Dir))
    return false;
  std::string Bytes(Magic, 8);
  putU32(Bytes, FormatVersion);
  putU32(Bytes, 0);
  putU64(Bytes, Key.size());
  putU64(Bytes, Object.size());
  putU64(Bytes, fnv1a64(Key));
  putU64(Bytes, fnv1a64(Object));
  Bytes.append(Key);
  Bytes.append(Object);
  static std::atomic<uint64_t> Counter{0};
  std::string Final = pathFor(Key);
  std::string Tmp = Final + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(Counter++);
  std::FILE *Out = std::fopen(Tmp.c_str(), "wb");
  if (!Out)
    return false;
  bool Ok = std::fwrite(Bytes.data(), 1, Bytes.size(), Out) == Bytes.size();
  Ok = std::fclose(Out) == 0 && Ok;
  if (Ok)
    fs::rename(Tmp, Final, EC);
  if (!Ok || EC) {
    fs::remove(Tmp, EC);
    return false;
  }
  return true;
}

} // namespace nng::backends::cpu::jit
