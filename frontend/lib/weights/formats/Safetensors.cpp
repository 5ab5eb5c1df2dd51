//===- Safetensors.cpp - Reading and writing .safetensors files -*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON ({name: {"dtype", "shape", "data_offsets": [begin, end]}, with an
// optional "__metadata__": {str: str}}), then the data buffer; offsets are
// relative to the buffer's start. Reading maps the file and checks the
// header completely before any tensor is made: the length against the
// file, the JSON, each dtype, shape (no negative extents, no overflow),
// that end - begin equals numel * element size, and that the tensors, sorted
// by offset, cover the buffer exactly (no overlap, no gap, nothing after the
// last one), as the format's reference implementation requires. Tensors
// are views of the mapping's storage (zero copy; the mapping is
// copy-on-write, so an in-place write never reaches the file); a tensor
// whose bytes are not aligned to its element size (possible only in files
// other writers padded oddly) is copied instead, so kernels never see
// misaligned data. Bool bytes must be 0 or 1.
//
// Writing keeps the map's key order (the reference writer sorts by dtype
// then name; both orders load everywhere, the map's order round-trips), puts
// "__metadata__" first when there is any, and pads the header with spaces
// so the data buffer starts at a multiple of 8 bytes.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"
#include "nngraph/runtime/Storage.h"
#include "nngraph/runtime/Tensor.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace nng::weights {

namespace {

using rt::Tensor;

/// The safetensors dtype names nngraph reads, in enum order.
std::string supportedList() {
  std::string S;
  for (int I = 0; I < NumDTypes; ++I)
    if (const char *N = safetensorsName(static_cast<DType>(I)))
      S += std::string(S.empty() ? "" : ", ") + N;
  return S;
}

/// Header limit of the reference implementation (100 MB).
constexpr uint64_t MaxHeaderBytes = 100'000'000;

struct Info {
  std::string Name;
  DType T;
  Shape Sh;
  uint64_t Begin, End;
};

[[noreturn]] void bad(const std::string &File, const std::string &Tensor,
                      const std::string &Msg) {
  fail(ErrorKind::Parse, "'", File, "': safetensors tensor '", Tensor,
       "': ", Msg, "; the file is corrupt or was not written as safetensors");
}

Info parseInfo(const std::string &File, const std::string &Name,
               const json::Value &V, uint64_t DataBytes) {
  if (!V.isObject())
    bad(File, Name,
        std::string("header entry is a JSON ") + json::kindName(V.K) +
            ", expected an object with dtype, shape and data_offsets");
  Info I;
  I.Name = Name;
  const json::Value *DT = V.find("dtype");
  const json::Value *SH = V.find("shape");
  const json::Value *OF = V.find("data_offsets");
  if (!DT || !SH || !OF)
    bad(File, Name,
        std::string("header entry lacks \"") +
            (!DT   ? "dtype"
             : !SH ? "shape"
                   : "data_offsets") +
            "\"");
  if (!DT->isString())
    bad(File, Name, "\"dtype\" is not a string");
  std::optional<DType> T = dtypeFromSafetensorsName(DT->Text);
  if (!T)
    fail(ErrorKind::Unsupported, "'", File, "': safetensors tensor '", Name,
         "' has dtype \"", DT->Text,
         "\", which nngraph does not support (supported: ", supportedList(),
         "); convert it in Python before saving");
  I.T = *T;
  if (!SH->isArray())
    bad(File, Name, "\"shape\" is not an array");
  if (SH->Elements.size() > 64)
    bad(File, Name,
        "\"shape\" has " + std::to_string(SH->Elements.size()) +
            " dimensions (at most 64 supported)");
  uint64_t Numel = 1;
  bool Overflow = false;
  for (const json::Value &D : SH->Elements) {
    std::optional<int64_t> Dim = D.toInt64();
    if (!Dim)
      bad(File, Name,
          "\"shape\" holds \"" + D.Text +
              "\", which is not an integer in int64 range");
    if (*Dim < 0)
      bad(File, Name,
          "\"shape\" has the negative extent " + std::to_string(*Dim));
    I.Sh.push_back(*Dim);
    uint64_t U = static_cast<uint64_t>(*Dim);
    if (U != 0 && Numel > static_cast<uint64_t>(INT64_MAX) / U)
      Overflow = true;
    Numel *= U;
  }
  // A zero extent makes the product 0 even after an overflowing prefix;
  // validate() also refuses shapes whose strides overflow.
  if (Numel == 0)
    Overflow = false;
  if (!Overflow) {
    try {
      I.Sh.validate();
    } catch (const Error &E) {
      bad(File, Name, E.message());
    }
  }
  if (Overflow || Numel > static_cast<uint64_t>(INT64_MAX) / dtypeSize(I.T))
    bad(File, Name,
        "shape " + I.Sh.toString() + " of " + DT->Text +
            " elements overflows 64-bit byte counts");
  if (!OF->isArray() || OF->Elements.size() != 2)
    bad(File, Name, "\"data_offsets\" must be an array of two integers");
  std::optional<uint64_t> B = OF->Elements[0].toUInt64();
  std::optional<uint64_t> E = OF->Elements[1].toUInt64();
  if (!B || !E)
    bad(File, Name, "\"data_offsets\" must hold two non-negative integers");
  I.Begin = *B;
  I.End = *E;
  if (I.End < I.Begin)
    bad(File, Name,
        "data_offsets [" + std::to_string(I.Begin) + ", " +
            std::to_string(I.End) + "] end before they begin");
  if (I.End > DataBytes)
    bad(File, Name,
        "data_offsets [" + std::to_string(I.Begin) + ", " +
            std::to_string(I.End) + "] reach past the data buffer of " +
            std::to_string(DataBytes) + " bytes");
  uint64_t Want = Numel * dtypeSize(I.T);
  if (I.End - I.Begin != Want)
    bad(File, Name,
        "data_offsets [" + std::to_string(I.Begin) + ", " +
            std::to_string(I.End) + "] span " +
            std::to_string(I.End - I.Begin) + " bytes, but shape " +
            I.Sh.toString() + " of " + DT->Text + " needs " +
            std::to_string(Want));
  return I;
}

/// Reads the file held in Buf (Name in messages).
TensorMap readFromStorage(const std::shared_ptr<Storage> &Buf,
                          const std::string &Name, Metadata *Meta) {
  const unsigned char *P = static_cast<const unsigned char *>(Buf->data());
  uint64_t Size = Buf->bytes();
  if (Size < 8)
    fail(ErrorKind::Parse, "'", Name, "' is ", Size,
         " bytes, shorter than the 8-byte header length of a safetensors "
         "file; the file is truncated or not safetensors");
  uint64_t N = 0;
  for (int I = 7; I >= 0; --I)
    N = (N << 8) | P[I];
  if (N > Size - 8)
    fail(ErrorKind::Parse, "'", Name, "': safetensors header length ", N,
         " is larger than the ", Size - 8,
         " bytes after it; the file is truncated or not safetensors");
  if (N > MaxHeaderBytes)
    fail(ErrorKind::Parse, "'", Name, "': safetensors header of ", N,
         " bytes exceeds the format's limit of ", MaxHeaderBytes, " bytes");
  if (N == 0 || P[8] != '{')
    fail(ErrorKind::Parse, "'", Name,
         "': safetensors header does not start with '{'; the file is not "
         "safetensors");
  std::string_view HeaderText(reinterpret_cast<const char *>(P + 8), N);
  json::Value Header =
      json::parse(HeaderText, "'" + Name + "': safetensors header");
  if (!Header.isObject())
    fail(ErrorKind::Parse, "'", Name,
         "': safetensors header is not a JSON object");
  uint64_t DataStart = 8 + N;
  uint64_t DataBytes = Size - DataStart;

  std::vector<Info> Infos;
  Metadata LocalMeta;
  for (const auto &[Key, V] : Header.Members) {
    if (Key == "__metadata__") {
      if (!V.isObject())
        fail(ErrorKind::Parse, "'", Name,
             "': safetensors \"__metadata__\" is a JSON ", json::kindName(V.K),
             ", expected an object of strings");
      for (const auto &[MK, MV] : V.Members) {
        if (!MV.isString())
          fail(ErrorKind::Parse, "'", Name, "': safetensors metadata key '", MK,
               "' holds a JSON ", json::kindName(MV.K),
               "; metadata values must be strings");
        LocalMeta.emplace_back(MK, MV.Text);
      }
      continue;
    }
    Infos.push_back(parseInfo(Name, Key, V, DataBytes));
  }

  // The tensors must tile the data buffer: sorted by offset, each starts
  // where the previous one ended and the last ends at the buffer's end.
  std::vector<const Info *> Sorted;
  for (const Info &I : Infos)
    Sorted.push_back(&I);
  std::stable_sort(
      Sorted.begin(), Sorted.end(), [](const Info *A, const Info *B) {
        return A->Begin != B->Begin ? A->Begin < B->Begin : A->End < B->End;
      });
  uint64_t Expected = 0;
  for (size_t K = 0; K < Sorted.size(); ++K) {
    const Info &I = *Sorted[K];
    if (I.Begin < Expected)
      bad(Name, I.Name,
          "data_offsets [" + std::to_string(I.Begin) + ", " +
              std::to_string(I.End) + "] overlap tensor '" +
              Sorted[K - 1]->Name + "', which ends at " +
              std::to_string(Expected));
    if (I.Begin > Expected)
      bad(Name, I.Name,
          "data_offsets [" + std::to_string(I.Begin) + ", " +
              std::to_string(I.End) + "] leave a gap of " +
              std::to_string(I.Begin - Expected) + " bytes after offset " +
              std::to_string(Expected) +
              " (the tensors must cover the data buffer without holes)");
    Expected = I.End;
  }
  if (Expected != DataBytes)
    fail(ErrorKind::Parse, "'", Name, "': safetensors data buffer is ",
         DataBytes, " bytes, but the tensors in the header cover only ",
         Expected, "; the file has trailing data or a header that lies");

  std::vector<TensorMap::Entry> Entries;
  Entries.reserve(Infos.size());
  const unsigned char *Data = P + DataStart;
  for (const Info &I : Infos) {
    const unsigned char *Ptr = Data + I.Begin;
    size_t Bytes = I.End - I.Begin;
    if (I.T == DType::Bool)
      for (size_t K = 0; K < Bytes; ++K)
        if (Ptr[K] > 1)
          bad(Name, I.Name,
              "BOOL element " + std::to_string(K) + " is the byte " +
                  std::to_string(Ptr[K]) + "; booleans must be 0 or 1");
    Tensor T;
    size_t Elem = dtypeSize(I.T);
    if (reinterpret_cast<uintptr_t>(Ptr) % Elem == 0 &&
        (DataStart + I.Begin) % Elem == 0) {
      // A view of the file's (copy-on-write) mapping itself.
      T = Tensor(Buf, I.Sh, contiguousStrides(I.Sh),
                 static_cast<int64_t>((DataStart + I.Begin) / Elem), I.T);
    } else {
      T = Tensor::empty(I.Sh, I.T);
      if (Bytes)
        std::memcpy(T.rawData(), Ptr, Bytes);
    }
    Entries.emplace_back(I.Name, std::move(T));
  }
  if (Meta)
    *Meta = std::move(LocalMeta);
  return TensorMap(std::move(Entries));
}

} // namespace

TensorMap readSafetensors(const std::string &Path, Metadata *Meta) {
  return readFromStorage(Storage::mapFile(Path), Path, Meta);
}

TensorMap readSafetensorsFromBytes(std::string_view Bytes,
                                   const std::string &Name, Metadata *Meta) {
  auto Buf = Storage::allocate(Bytes.size());
  if (!Bytes.empty())
    std::memcpy(Buf->data(), Bytes.data(), Bytes.size());
  return readFromStorage(Buf, Name, Meta);
}

void writeSafetensors(const std::string &Path, const TensorMap &Tensors,
                      const Metadata &Meta) {
  std::string Header = "{";
  bool First = true;
  auto Sep = [&] {
    if (!First)
      Header += ',';
    First = false;
  };
  if (!Meta.empty()) {
    Sep();
    Header += "\"__metadata__\":{";
    for (size_t I = 0; I < Meta.size(); ++I) {
      for (const std::string *S : {&Meta[I].first, &Meta[I].second})
        NNG_CHECK(json::isValidUtf8(*S), "writing '", Path,
                  "': safetensors metadata '", Meta[I].first,
                  "' is not valid UTF-8");
      Header += (I ? "," : "") + json::quote(Meta[I].first) + ":" +
                json::quote(Meta[I].second);
    }
    Header += "}";
  }
  std::vector<Tensor> Data;
  uint64_t Offset = 0;
  for (const auto &[Key, T] : Tensors) {
    NNG_CHECK(Key != "__metadata__", "writing '", Path,
              "': a tensor cannot be called \"__metadata__\" in safetensors "
              "(the name is reserved); rename it");
    NNG_CHECK(json::isValidUtf8(Key), "writing '", Path, "': tensor key '", Key,
              "' is not valid UTF-8, which safetensors requires");
    NNG_CHECK(T.defined(), "writing '", Path, "': tensor '", Key,
              "' is undefined");
    NNG_CHECK(T.device().isCPU(), "writing '", Path, "': tensor '", Key,
              "' is on ", T.device().toString(), "; copy it to the CPU first");
    const char *DT = safetensorsName(T.dtype());
    NNG_CHECK_KIND(DT, Unsupported, "writing '", Path, "': tensor '", Key,
                   "' has dtype ", dtypeName(T.dtype()),
                   ", which safetensors cannot store");
    Sep();
    Header += json::quote(Key) + ":{\"dtype\":\"" + DT + "\",\"shape\":[";
    for (size_t I = 0; I < T.rank(); ++I)
      Header += (I ? "," : "") + std::to_string(T.shape()[I]);
    uint64_t End = Offset + T.nbytes();
    Header += "],\"data_offsets\":[" + std::to_string(Offset) + "," +
              std::to_string(End) + "]}";
    Offset = End;
    Data.push_back(T.contiguous());
  }
  Header += "}";
  while ((8 + Header.size()) % 8 != 0)
    Header += ' ';

  std::string Out;
  Out.reserve(8 + Header.size() + Offset);
  uint64_t N = Header.size();
  for (int I = 0; I < 8; ++I)
    Out += static_cast<char>((N >> (8 * I)) & 0xFF);
  Out += Header;
  for (const Tensor &T : Data)
    if (T.nbytes())
      Out.append(static_cast<const char *>(T.rawData()), T.nbytes());
  rt::writeFileAtomic(Path, Out);
}

} // namespace nng::weights
