//===- Checkpoint.cpp - Writing and reading the checkpoint file -----------===//
//
// Layout (README.md has the full description): a text header line
// "nngraph-fashion-mnist-checkpoint 1", "meta N" and N lines "KEY VALUE",
// "tensors M" and M entries, each a line "NAME DTYPE RANK DIMS... NBYTES
// CRC32" followed by NBYTES raw little-endian bytes and a newline, then a
// final line "end". Reading checks the magic, the version, every count,
// dtype, shape, byte size and checksum, and that nothing follows "end".
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace fmnist {

namespace {

constexpr const char *Magic = "nngraph-fashion-mnist-checkpoint";
constexpr int Version = 1;

bool validKey(const std::string &K) {
  if (K.empty())
    return false;
  for (char C : K)
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r')
      return false;
  return true;
}

uint32_t crc32Of(const void *Data, size_t Size) {
  uLong Crc = crc32(0L, Z_NULL, 0);
  const auto *P = static_cast<const Bytef *>(Data);
  while (Size > 0) {
    uInt Chunk = static_cast<uInt>(std::min<size_t>(Size, 1u << 30));
    Crc = crc32(Crc, P, Chunk);
    P += Chunk;
    Size -= Chunk;
  }
  return static_cast<uint32_t>(Crc);
}

/// A reader over the file's bytes that reports errors with the file name
/// and the entry being read.
class Reader {
public:
  Reader(const std::string &Path) : Path(Path), In(Path, std::ios::binary) {}
  bool ok() const { return static_cast<bool>(In); }

  [[noreturn]] void fail(const std::string &What) const {
    throw CheckpointError(Path + ": " + What +
                          "; the file is not a complete fashion-mnist-train "
                          "checkpoint (write a new one with --checkpoint)");
  }

  std::string line(const char *Role) {
    std::string L;
    if (!std::getline(In, L))
      fail(std::string("unexpected end of file while reading ") + Role);
    return L;
  }

  void bytes(void *Out, size_t Size, const std::string &Role) {
    In.read(static_cast<char *>(Out), static_cast<std::streamsize>(Size));
    if (static_cast<size_t>(In.gcount()) != Size)
      fail("truncated data of " + Role + " (" + std::to_string(Size) +
           " bytes expected, " + std::to_string(In.gcount()) + " present)");
  }

  bool atEnd() { return In.peek() == std::char_traits<char>::eof(); }

  const std::string &Path;

private:
  std::ifstream In;
};

/// Parses a non-negative count "WORD N" from L.
int64_t parseCount(Reader &R, const std::string &L, const std::string &Word) {
  std::istringstream IS(L);
  std::string W;
  int64_t N = -1;
  std::string Rest;
  if (!(IS >> W >> N) || W != Word || N < 0 || (IS >> Rest))
    R.fail("expected \"" + Word + " COUNT\", found \"" + L + "\"");
  return N;
}

} // namespace

void Checkpoint::setMeta(const std::string &Key, const std::string &Value) {
  if (!validKey(Key))
    throw CheckpointError("checkpoint metadata key \"" + Key +
                          "\" is empty or contains whitespace");
  if (Value.find_first_of("\r\n") != std::string::npos)
    throw CheckpointError("checkpoint metadata \"" + Key +
                          "\" has a line break in its value");
  if (findMeta(Key))
    throw CheckpointError("checkpoint metadata key \"" + Key +
                          "\" is set twice");
  Meta.emplace_back(Key, Value);
}

void Checkpoint::addTensor(const std::string &Name, const nng::rt::Tensor &T) {
  if (!validKey(Name))
    throw CheckpointError("checkpoint tensor name \"" + Name +
                          "\" is empty or contains whitespace");
  if (findTensor(Name))
    throw CheckpointError("checkpoint tensor \"" + Name + "\" is added twice");
  if (!T.defined())
    throw CheckpointError("checkpoint tensor \"" + Name + "\" is undefined");
  Tensors.emplace_back(Name, T.contiguous().clone());
}

const std::string *Checkpoint::findMeta(std::string_view Key) const {
  for (const auto &[K, V] : Meta)
    if (K == Key)
      return &V;
  return nullptr;
}

const std::string &Checkpoint::meta(std::string_view Key) const {
  if (const std::string *V = findMeta(Key))
    return *V;
  throw CheckpointError((File.empty() ? std::string("checkpoint") : File) +
                        ": no entry \"" + std::string(Key) +
                        "\"; was it written by another program?");
}

const nng::rt::Tensor *Checkpoint::findTensor(std::string_view Name) const {
  for (const auto &[N, T] : Tensors)
    if (N == Name)
      return &T;
  return nullptr;
}

void saveCheckpoint(const std::string &Path, const Checkpoint &C) {
  // Built in memory, then written atomically (a temporary file next to the
  // target, flushed and renamed over it): a failed save leaves an existing
  // checkpoint untouched and no temporary file behind.
  std::string Out;
  auto put = [&](const void *Data, size_t Size) {
    Out.append(static_cast<const char *>(Data), Size);
  };
  auto putLine = [&](const std::string &L) {
    put(L.data(), L.size());
    put("\n", 1);
  };

  putLine(std::string(Magic) + " " + std::to_string(Version));
  putLine("meta " + std::to_string(C.metaEntries().size()));
  for (const auto &[K, V] : C.metaEntries())
    putLine(K + " " + V);
  putLine("tensors " + std::to_string(C.tensors().size()));
  for (const auto &[Name, T] : C.tensors()) {
    std::ostringstream L;
    L << Name << " " << nng::dtypeName(T.dtype()) << " " << T.rank();
    for (int64_t D : T.shape())
      L << " " << D;
    char Crc[16];
    std::snprintf(Crc, sizeof(Crc), "%08x", crc32Of(T.rawData(), T.nbytes()));
    L << " " << T.nbytes() << " " << Crc;
    putLine(L.str());
    put(T.rawData(), T.nbytes());
    put("\n", 1);
  }
  putLine("end");

  try {
    nng::rt::writeFileAtomic(Path, Out);
  } catch (const nng::Error &E) {
    throw CheckpointError("cannot write checkpoint " + Path + ": " +
                          E.message() +
                          " (does the folder exist and is it writable?)");
  }
}

Checkpoint loadCheckpoint(const std::string &Path) {
  std::error_code Ec;
  if (!std::filesystem::exists(Path, Ec))
    throw CheckpointError(Path + ": no such checkpoint file (check the "
                                 "path given to --resume)");
  Reader R(Path);
  if (!R.ok())
    throw CheckpointError(Path + ": cannot open (" + std::strerror(errno) +
                          ")");
  Checkpoint C;
  C.File = Path;

  const std::string Head = R.line("the header");
  const std::string Expected =
      std::string(Magic) + " " + std::to_string(Version);
  if (Head != Expected) {
    if (Head.rfind(Magic, 0) == 0)
      R.fail("unsupported checkpoint version (\"" + Head + "\", this " +
             "program reads version " + std::to_string(Version) + ")");
    R.fail("not a fashion-mnist-train checkpoint (first line \"" +
           Head.substr(0, 60) + "\")");
  }

  const int64_t NumMeta = parseCount(R, R.line("the metadata count"), "meta");
  for (int64_t I = 0; I < NumMeta; ++I) {
    std::string L = R.line("metadata");
    size_t Sp = L.find(' ');
    if (Sp == std::string::npos || Sp == 0)
      R.fail("malformed metadata line \"" + L + "\"");
    try {
      C.setMeta(L.substr(0, Sp), L.substr(Sp + 1));
    } catch (const CheckpointError &E) {
      R.fail(E.what());
    }
  }

  const int64_t NumTensors =
      parseCount(R, R.line("the tensor count"), "tensors");
  for (int64_t I = 0; I < NumTensors; ++I) {
    const std::string L = R.line("a tensor header");
    std::istringstream IS(L);
    std::string Name, TypeName;
    int64_t Rank = -1;
    if (!(IS >> Name >> TypeName >> Rank) || Rank < 0 || Rank > 8)
      R.fail("malformed tensor header \"" + L + "\"");
    std::optional<nng::DType> Type = nng::parseDType(TypeName);
    if (!Type)
      R.fail("tensor \"" + Name + "\" has unknown dtype \"" + TypeName + "\"");
    std::vector<int64_t> Dims(static_cast<size_t>(Rank));
    for (int64_t &D : Dims)
      if (!(IS >> D) || D < 0 || D > (int64_t(1) << 40))
        R.fail("tensor \"" + Name + "\" has a malformed shape in \"" + L +
               "\"");
    uint64_t NBytes = 0;
    std::string CrcText, Rest;
    if (!(IS >> NBytes >> CrcText) || (IS >> Rest))
      R.fail("malformed tensor header \"" + L + "\"");
    nng::Shape Sh(Dims);
    const uint64_t Want =
        static_cast<uint64_t>(Sh.numel()) * nng::dtypeSize(*Type);
    if (NBytes != Want)
      R.fail("tensor \"" + Name + "\" says " + std::to_string(NBytes) +
             " bytes, its dtype and shape " + Sh.toString() + " need " +
             std::to_string(Want));
    nng::rt::Tensor T = nng::rt::Tensor::empty(Sh, *Type);
    R.bytes(T.rawData(), T.nbytes(), "tensor \"" + Name + "\"");
    char Nl = 0;
    R.bytes(&Nl, 1, "tensor \"" + Name + "\"");
    if (Nl != '\n')
      R.fail("tensor \"" + Name + "\" is longer than its header says");
    char Crc[16];
    std::snprintf(Crc, sizeof(Crc), "%08x", crc32Of(T.rawData(), T.nbytes()));
    if (CrcText != Crc)
      R.fail("checksum mismatch in tensor \"" + Name + "\" (stored " +
             CrcText + ", computed " + Crc + "): the file is corrupt");
    try {
      C.addTensor(Name, T);
    } catch (const CheckpointError &E) {
      R.fail(E.what());
    }
  }
  if (R.line("the end marker") != "end")
    R.fail("missing end marker after the last tensor");
  if (!R.atEnd())
    R.fail("trailing data after the end marker");
  return C;
}

} // namespace fmnist
