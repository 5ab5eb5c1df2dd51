//===- Zip.cpp - The zip container of .pt and .npz files --------*- C++ -*-===//
//
// The zip reader and writer declared in Zip.h. The reader trusts nothing in
// the archive: the end-of-central-directory record (and its zip64 variant),
// every central-directory entry and every local header are bounds-checked
// before they are read; names that are absolute, contain a ".." component,
// a backslash or a NUL are refused, as are duplicates, encryption and
// methods other than stored and deflated. Deflated entries are inflated
// into exactly their declared size (an impossible compression ratio is
// refused before any allocation) and every entry's CRC-32 is checked. The
// writer writes stored entries whose data is 64-byte aligned, padding in
// an extra field as torch.save does, and zip64 records when a size, an
// offset or the entry count needs them.
//
//===----------------------------------------------------------------------===//

#include "Zip.h"
#include "nngraph/runtime/Error.h"

#include <zlib.h>

#include <cstring>

namespace nng::weights::zip {

namespace {

constexpr uint32_t LocalSig = 0x04034b50;
constexpr uint32_t CentralSig = 0x02014b50;
constexpr uint32_t EocdSig = 0x06054b50;
constexpr uint32_t Zip64EocdSig = 0x06064b50;
constexpr uint32_t Zip64LocatorSig = 0x07064b50;
/// Deflate cannot expand data by more than about 1032:1.
constexpr uint64_t MaxDeflateRatio = 1032;

/// Bounds-checked little-endian reads from the archive bytes.
class Bytes {
public:
  Bytes(const uint8_t *P, uint64_t N, const std::string &Name)
      : P(P), N(N), Name(Name) {}
  void need(uint64_t Off, uint64_t Len, const char *What) const {
    if (Off > N || Len > N - Off)
      fail(ErrorKind::Parse, Name, ": ", What, " at byte offset ", Off,
           " (", Len, " bytes) reaches past the end of the archive (", N,
           " bytes); the file is truncated or corrupt");
  }
  uint16_t u16(uint64_t Off) const {
    return static_cast<uint16_t>(P[Off] | (P[Off + 1] << 8));
  }
  uint32_t u32(uint64_t Off) const {
    return static_cast<uint32_t>(P[Off]) | (static_cast<uint32_t>(P[Off + 1]) << 8) |
           (static_cast<uint32_t>(P[Off + 2]) << 16) |
           (static_cast<uint32_t>(P[Off + 3]) << 24);
  }
  uint64_t u64(uint64_t Off) const {
    return static_cast<uint64_t>(u32(Off)) |
           (static_cast<uint64_t>(u32(Off + 4)) << 32);
  }
  const uint8_t *P;
  uint64_t N;
  const std::string &Name;
};

uint32_t crc32Of(const uint8_t *P, uint64_t N) {
  uLong C = crc32(0L, Z_NULL, 0);
  while (N) {
    uInt Chunk = N > (1u << 30) ? (1u << 30) : static_cast<uInt>(N);
    C = crc32(C, P, Chunk);
    P += Chunk;
    N -= Chunk;
  }
  return static_cast<uint32_t>(C);
}

void checkName(const std::string &Name, const std::string &Archive) {
  auto Bad = [&](const char *Why) {
    fail(ErrorKind::Parse, Archive, ": zip entry name '", Name, "' ", Why,
         "; refusing to read an archive with unsafe entry names");
  };
  if (Name.empty())
    Bad("is empty");
  if (Name.find('\0') != std::string::npos)
    Bad("contains a NUL byte");
  if (Name.find('\\') != std::string::npos)
    Bad("contains a backslash");
  if (Name[0] == '/' || (Name.size() > 1 && Name[1] == ':'))
    Bad("is an absolute path");
  size_t Start = 0;
  while (Start <= Name.size()) {
    size_t End = Name.find('/', Start);
    if (End == std::string::npos)
      End = Name.size();
    if (Name.compare(Start, End - Start, "..") == 0 && End - Start == 2)
      Bad("contains a '..' component");
    Start = End + 1;
  }
}

} // namespace

Reader::Reader(std::shared_ptr<Storage> ArchiveIn, std::string NameIn)
    : Archive(std::move(ArchiveIn)), Name(std::move(NameIn)) {
  NNG_CHECK(Archive, "zip::Reader: no archive given for ", Name);
  Bytes B(static_cast<const uint8_t *>(Archive->data()), Archive->bytes(),
          Name);
  if (B.N < 22)
    fail(ErrorKind::Parse, Name, ": not a zip archive (", B.N,
         " bytes, shorter than an end-of-central-directory record)");
  // Find the end-of-central-directory record (the comment is <= 64 KiB).
  uint64_t Eocd = UINT64_MAX;
  uint64_t Lowest = B.N >= 22 + 65535 ? B.N - 22 - 65535 : 0;
  for (uint64_t I = B.N - 22 + 1; I-- > Lowest;) {
    if (B.u32(I) == EocdSig && I + 22 + B.u16(I + 20) == B.N) {
      Eocd = I;
      break;
    }
  }
  if (Eocd == UINT64_MAX)
    fail(ErrorKind::Parse, Name,
         ": not a zip archive (no end-of-central-directory record); the "
         "file is truncated or not a .pt/.npz zip file");
  if (B.u16(Eocd + 4) != 0 || B.u16(Eocd + 6) != 0)
    fail(ErrorKind::Unsupported, Name, ": multi-disk zip archives are not supported");
  uint64_t Count = B.u16(Eocd + 10);
  uint64_t CdSize = B.u32(Eocd + 12);
  uint64_t CdOffset = B.u32(Eocd + 16);
  if (Count == 0xFFFF || CdSize == 0xFFFFFFFF || CdOffset == 0xFFFFFFFF) {
    // zip64: the locator sits right before the record.
    if (Eocd < 20 || B.u32(Eocd - 20) != Zip64LocatorSig)
      fail(ErrorKind::Parse, Name,
           ": the end-of-central-directory record asks for zip64 but the "
           "zip64 locator is missing");
    uint64_t Z = B.u64(Eocd - 20 + 8);
    B.need(Z, 56, "the zip64 end-of-central-directory record");
    if (B.u32(Z) != Zip64EocdSig)
      fail(ErrorKind::Parse, Name, ": bad zip64 end-of-central-directory "
                                   "signature at byte offset ", Z);
    Count = B.u64(Z + 32);
    CdSize = B.u64(Z + 40);
    CdOffset = B.u64(Z + 48);
  }
  B.need(CdOffset, CdSize, "the central directory");
  if (Count > CdSize / 46)
    fail(ErrorKind::Parse, Name, ": the central directory claims ", Count,
         " entries but has room for at most ", CdSize / 46);
  Entries.reserve(Count);
  uint64_t P = CdOffset, CdEnd = CdOffset + CdSize;
  for (uint64_t I = 0; I < Count; ++I) {
    if (P > CdEnd || CdEnd - P < 46 || B.u32(P) != CentralSig)
      fail(ErrorKind::Parse, Name, ": central directory entry ", I,
           " at byte offset ", P, " is corrupt");
    uint16_t Flags = B.u16(P + 8);
    Entry E;
    E.Method = B.u16(P + 10);
    E.Crc32 = B.u32(P + 16);
    E.CompressedSize = B.u32(P + 20);
    E.Size = B.u32(P + 24);
    uint64_t NameLen = B.u16(P + 28), ExtraLen = B.u16(P + 30),
             CommentLen = B.u16(P + 32);
    uint64_t LocalOff = B.u32(P + 42);
    uint64_t VarLen = NameLen + ExtraLen + CommentLen;
    if (CdEnd - P - 46 < VarLen)
      fail(ErrorKind::Parse, Name, ": central directory entry ", I,
           " at byte offset ", P, " reaches past the central directory");
    E.Name.assign(reinterpret_cast<const char *>(B.P + P + 46), NameLen);
    // The zip64 extra field holds the 0xFFFFFFFF fields in order.
    uint64_t X = P + 46 + NameLen, XEnd = X + ExtraLen;
    while (XEnd - X >= 4) {
      uint16_t Id = B.u16(X), Len = B.u16(X + 2);
      if (XEnd - X - 4 < Len)
        break;
      if (Id == 1) {
        uint64_t F = X + 4, FEnd = F + Len;
        auto Take = [&](uint64_t &V) {
          if (V != 0xFFFFFFFF)
            return;
          if (FEnd - F < 8)
            fail(ErrorKind::Parse, Name, ": zip entry '", E.Name,
                 "' has a short zip64 extra field");
          V = B.u64(F);
          F += 8;
        };
        Take(E.Size);
        Take(E.CompressedSize);
        Take(LocalOff);
      }
      X += 4 + Len;
    }
    checkName(E.Name, Name);
    if (!Index.emplace(E.Name, Entries.size()).second)
      fail(ErrorKind::Parse, Name, ": zip entry '", E.Name,
           "' appears twice in the central directory");
    if (Flags & 1)
      fail(ErrorKind::Unsupported, Name, ": zip entry '", E.Name,
           "' is encrypted; encrypted archives are not supported");
    if (E.Method != 0 && E.Method != 8)
      fail(ErrorKind::Unsupported, Name, ": zip entry '", E.Name,
           "' uses compression method ", E.Method,
           "; only stored (0) and deflated (8) entries are supported");
    if (E.Method == 0 && E.Size != E.CompressedSize)
      fail(ErrorKind::Parse, Name, ": stored zip entry '", E.Name,
           "' has size ", E.Size, " but compressed size ", E.CompressedSize);
    // The local header: its own name and extra lengths place the data.
    B.need(LocalOff, 30, "the local header of a zip entry");
    if (B.u32(LocalOff) != LocalSig)
      fail(ErrorKind::Parse, Name, ": zip entry '", E.Name,
           "' has no local header at byte offset ", LocalOff);
    E.DataOffset = LocalOff + 30 + B.u16(LocalOff + 26) + B.u16(LocalOff + 28);
    if (E.DataOffset > B.N || E.CompressedSize > B.N - E.DataOffset)
      fail(ErrorKind::Parse, Name, ": the data of zip entry '", E.Name,
           "' (", E.CompressedSize, " bytes at byte offset ", E.DataOffset,
           ") reaches past the end of the archive (", B.N,
           " bytes); the file is truncated or corrupt");
    if (E.Method == 8 && E.Size > E.CompressedSize * MaxDeflateRatio + 1024)
      fail(ErrorKind::Parse, Name, ": zip entry '", E.Name, "' declares ",
           E.Size, " bytes from ", E.CompressedSize,
           " compressed bytes, more than deflate can produce (a zip bomb?)");
    Entries.push_back(std::move(E));
    P += 46 + VarLen;
  }
}

const Entry *Reader::find(const std::string &EntryName) const {
  auto It = Index.find(EntryName);
  return It == Index.end() ? nullptr : &Entries[It->second];
}

std::shared_ptr<Storage> Reader::read(const Entry &E) const {
  const uint8_t *Base = static_cast<const uint8_t *>(Archive->data());
  NNG_CHECK(E.DataOffset <= Archive->bytes() &&
                E.CompressedSize <= Archive->bytes() - E.DataOffset,
            Name, ": zip entry '", E.Name, "' lies outside the archive");
  const uint8_t *Src = Base + E.DataOffset;
  std::shared_ptr<Storage> Out;
  if (E.Method == 0) {
    Out = Storage::wrap(const_cast<uint8_t *>(Src), E.Size,
                        std::shared_ptr<const void>(Archive));
  } else {
    Out = Storage::allocate(E.Size);
    z_stream Z;
    std::memset(&Z, 0, sizeof(Z));
    if (inflateInit2(&Z, -MAX_WBITS) != Z_OK)
      fail(ErrorKind::Internal, Name, ": zlib inflateInit2 failed");
    uint8_t *Dst = static_cast<uint8_t *>(Out->data());
    uint64_t InLeft = E.CompressedSize, OutLeft = E.Size;
    Z.next_in = const_cast<Bytef *>(Src);
    Z.next_out = Dst;
    int Rc = Z_OK;
    while (true) {
      uInt InChunk = InLeft > (1u << 30) ? (1u << 30) : static_cast<uInt>(InLeft);
      uInt OutChunk =
          OutLeft > (1u << 30) ? (1u << 30) : static_cast<uInt>(OutLeft);
      Z.avail_in = InChunk;
      Z.avail_out = OutChunk;
      Rc = inflate(&Z, Z_NO_FLUSH);
      InLeft -= InChunk - Z.avail_in;
      OutLeft -= OutChunk - Z.avail_out;
      if (Rc == Z_STREAM_END || Rc != Z_OK)
        break;
      if (InChunk == Z.avail_in && OutChunk == Z.avail_out)
        break; // no progress: input exhausted or output full
    }
    inflateEnd(&Z);
    if (Rc != Z_STREAM_END || OutLeft != 0)
      fail(ErrorKind::Parse, Name, ": zip entry '", E.Name,
           "' does not inflate to its declared ", E.Size, " bytes (",
           Rc == Z_STREAM_END ? "the stream ends early"
           : Rc == Z_OK || Rc == Z_BUF_ERROR
               ? "the data is truncated or longer than declared"
               : "corrupt deflate data",
           ")");
  }
  uint32_t Crc = crc32Of(static_cast<const uint8_t *>(Out->data()), E.Size);
  if (Crc != E.Crc32)
    fail(ErrorKind::Parse, Name, ": zip entry '", E.Name,
         "' fails its CRC-32 check; the file is corrupt");
  return Out;
}

// --- Writer ------------------------------------------------------------------

namespace {
void put16(std::string &S, uint16_t V) {
  S.push_back(static_cast<char>(V & 0xFF));
  S.push_back(static_cast<char>(V >> 8));
}
void put32(std::string &S, uint32_t V) {
  put16(S, static_cast<uint16_t>(V & 0xFFFF));
  put16(S, static_cast<uint16_t>(V >> 16));
}
void put64(std::string &S, uint64_t V) {
  put32(S, static_cast<uint32_t>(V & 0xFFFFFFFF));
  put32(S, static_cast<uint32_t>(V >> 32));
}
constexpr uint64_t Max32 = 0xFFFFFFFF;
} // namespace

Writer::Writer(std::ostream &OS) : OS(OS) {}

void Writer::add(const std::string &EntryName, const void *Data, uint64_t Size,
                 unsigned Align) {
  NNG_CHECK(!EntryName.empty() && EntryName.size() < 0xFFFF,
            "zip::Writer: bad entry name '", EntryName, "'");
  NNG_CHECK(Align >= 1 && Align <= 4096, "zip::Writer: bad alignment ", Align);
  bool Zip64 = Size >= Max32;
  std::string H;
  put32(H, LocalSig);
  put16(H, Zip64 ? 45 : 20);
  put16(H, 0); // flags
  put16(H, 0); // stored
  put16(H, 0); // time
  put16(H, 0x21); // date: 1980-01-01
  uint32_t Crc = crc32Of(static_cast<const uint8_t *>(Data), Size);
  put32(H, Crc);
  put32(H, Zip64 ? Max32 : static_cast<uint32_t>(Size));
  put32(H, Zip64 ? Max32 : static_cast<uint32_t>(Size));
  put16(H, static_cast<uint16_t>(EntryName.size()));
  uint64_t Extra = Zip64 ? 20 : 0;
  uint64_t Base = Pos + 30 + EntryName.size() + Extra + 4;
  uint64_t Pad = (Align - Base % Align) % Align;
  Extra += 4 + Pad;
  put16(H, static_cast<uint16_t>(Extra));
  H += EntryName;
  if (Zip64) {
    put16(H, 1);
    put16(H, 16);
    put64(H, Size);
    put64(H, Size);
  }
  put16(H, 0x4246); // "FB": padding, as torch.save writes it
  put16(H, static_cast<uint16_t>(Pad));
  H.append(Pad, 'Z');
  Entry E;
  E.Name = EntryName;
  E.DataOffset = Pos + H.size();
  E.CompressedSize = E.Size = Size;
  E.Crc32 = Crc;
  LocalHeaderOffsets.push_back(Pos);
  OS.write(H.data(), static_cast<std::streamsize>(H.size()));
  OS.write(static_cast<const char *>(Data), static_cast<std::streamsize>(Size));
  if (!OS)
    fail(ErrorKind::IO, "zip::Writer: writing entry '", EntryName, "' failed");
  Pos += H.size() + Size;
  Written.push_back(std::move(E));
}

void Writer::finish() {
  std::string CD;
  for (size_t I = 0; I < Written.size(); ++I) {
    const Entry &E = Written[I];
    uint64_t Off = LocalHeaderOffsets[I];
    bool BigSize = E.Size >= Max32, BigOff = Off >= Max32;
    std::string X;
    if (BigSize || BigOff) {
      put16(X, 1);
      put16(X, static_cast<uint16_t>((BigSize ? 16 : 0) + (BigOff ? 8 : 0)));
      if (BigSize) {
        put64(X, E.Size);
        put64(X, E.CompressedSize);
      }
      if (BigOff)
        put64(X, Off);
    }
    put32(CD, CentralSig);
    put16(CD, 45); // made by
    put16(CD, (BigSize || BigOff) ? 45 : 20);
    put16(CD, 0);
    put16(CD, 0);
    put16(CD, 0);
    put16(CD, 0x21);
    put32(CD, E.Crc32);
    put32(CD, BigSize ? Max32 : static_cast<uint32_t>(E.CompressedSize));
    put32(CD, BigSize ? Max32 : static_cast<uint32_t>(E.Size));
    put16(CD, static_cast<uint16_t>(E.Name.size()));
    put16(CD, static_cast<uint16_t>(X.size()));
    put16(CD, 0); // comment
    put16(CD, 0); // disk
    put16(CD, 0); // internal attributes
    put32(CD, 0); // external attributes
    put32(CD, BigOff ? Max32 : static_cast<uint32_t>(Off));
    CD += E.Name;
    CD += X;
  }
  uint64_t CdOffset = Pos, CdSize = CD.size(), Count = Written.size();
  bool Zip64 = Count >= 0xFFFF || CdOffset >= Max32 || CdSize >= Max32;
  std::string T;
  if (Zip64) {
    uint64_t Z = CdOffset + CdSize;
    put32(T, Zip64EocdSig);
    put64(T, 44);
    put16(T, 45);
    put16(T, 45);
    put32(T, 0);
    put32(T, 0);
    put64(T, Count);
    put64(T, Count);
    put64(T, CdSize);
    put64(T, CdOffset);
    put32(T, Zip64LocatorSig);
    put32(T, 0);
    put64(T, Z);
    put32(T, 1);
  }
  put32(T, EocdSig);
  put16(T, 0);
  put16(T, 0);
  put16(T, Zip64 ? 0xFFFF : static_cast<uint16_t>(Count));
  put16(T, Zip64 ? 0xFFFF : static_cast<uint16_t>(Count));
  put32(T, Zip64 ? Max32 : static_cast<uint32_t>(CdSize));
  put32(T, Zip64 ? Max32 : static_cast<uint32_t>(CdOffset));
  put16(T, 0);
  OS.write(CD.data(), static_cast<std::streamsize>(CD.size()));
  OS.write(T.data(), static_cast<std::streamsize>(T.size()));
  if (!OS)
    fail(ErrorKind::IO, "zip::Writer: writing the central directory failed");
  Pos += CD.size() + T.size();
}

} // namespace nng::weights::zip
