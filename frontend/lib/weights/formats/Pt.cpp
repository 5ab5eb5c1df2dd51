//===- Pt.cpp - Reading and writing torch.save's .pt files ------*- C++ -*-===//
//
// readPt/readPtFromBytes/writePt (Formats.h). A .pt file (torch >= 1.6) is
// a zip archive <prefix>/data.pkl + <prefix>/data/<key> storages +
// <prefix>/version. Reading maps the file, so stored storages become
// zero-copy views of the mapping (copied only when misaligned for their
// dtype); the restricted unpickler (Pickle.h) rebuilds the object and asks
// for storages by key, each checked against its zip entry's size and
// shared between the tensors that view it. The legacy pre-1.6 format and
// TorchScript archives get errors that say how to re-save. Writing groups
// tensors by the storage bytes they view: overlapping views are written as
// one storage (so they alias again when loaded), a lone non-contiguous
// view as a compact copy; the archive goes through rt::writeFileAtomic.
//
//===----------------------------------------------------------------------===//

#include "Pickle.h"
#include "Zip.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

namespace nng::weights {

namespace {

/// The pickled magic number 0x1950a86a20f9469cfc6c of the legacy format.
const unsigned char LegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                     0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

Object readArchive(std::shared_ptr<Storage> File, const std::string &Name) {
  const auto *P = static_cast<const unsigned char *>(File->data());
  size_t N = File->bytes();
  if (N >= sizeof(LegacyMagic) &&
      std::memcmp(P, LegacyMagic, sizeof(LegacyMagic)) == 0)
    fail(ErrorKind::Unsupported, Name,
         ": this is the legacy (pre-1.6) torch.save format, which is not "
         "supported; re-save it with torch >= 1.6: "
         "torch.save(torch.load(path), path) (the default "
         "_use_new_zipfile_serialization=True writes the zip format)");
  if (N < 4 || std::memcmp(P, "PK\x03\x04", 4) != 0)
    fail(ErrorKind::Parse, Name,
         ": not a torch.save zip archive (it does not start with a zip "
         "local header); .pt files must be written by torch.save with "
         "torch >= 1.6");
  zip::Reader R(File, Name);
  std::string Prefix;
  for (const zip::Entry &E : R.entries()) {
    size_t Slash = E.Name.find('/');
    if (Slash != std::string::npos && E.Name.compare(Slash, std::string::npos,
                                                     "/data.pkl") == 0) {
      Prefix = E.Name.substr(0, Slash + 1);
      break;
    }
  }
  if (Prefix.empty())
    fail(ErrorKind::Parse, Name,
         ": the zip archive has no <name>/data.pkl entry, so it was not "
         "written by torch.save");
  if (R.find(Prefix + "constants.pkl"))
    fail(ErrorKind::Unsupported, Name,
         ": this is a TorchScript archive (torch.jit.save), not a "
         "checkpoint; save the weights with torch.save(model.state_dict(), "
         "path)");
  if (const zip::Entry *BO = R.find(Prefix + "byteorder")) {
    auto S = R.read(*BO);
    std::string Order(static_cast<const char *>(S->data()), S->bytes());
    if (Order != "little")
      fail(ErrorKind::Unsupported, Name, ": byte order '", Order,
           "' is not supported (only little-endian .pt files are)");
  }
  const zip::Entry *Pkl = R.find(Prefix + "data.pkl");
  std::shared_ptr<Storage> PklBytes = R.read(*Pkl);
  std::map<std::string, std::shared_ptr<Storage>> Raw;
  pickle::StorageLoader Load = [&](const std::string &Key, DType T,
                                   int64_t Numel) -> std::shared_ptr<Storage> {
    std::string EntryName = Prefix + "data/" + Key;
    auto It = Raw.find(Key);
    if (It == Raw.end()) {
      const zip::Entry *E = R.find(EntryName);
      if (!E)
        fail(ErrorKind::Parse, Name, ": data.pkl refers to storage '", Key,
             "' but the archive has no entry '", EntryName, "'");
      std::shared_ptr<Storage> S = R.read(*E);
      // torch aligns storages to 64 bytes; copy (once per key, so views
      // still alias) when another writer did not.
      if (reinterpret_cast<uintptr_t>(S->data()) % 8 != 0) {
        auto Copy = Storage::allocate(S->bytes());
        if (S->bytes())
          std::memcpy(Copy->data(), S->data(), S->bytes());
        S = std::move(Copy);
      }
      It = Raw.emplace(Key, std::move(S)).first;
    }
    std::shared_ptr<Storage> S = It->second;
    uint64_t Need;
    if (__builtin_mul_overflow(static_cast<uint64_t>(Numel), dtypeSize(T),
                               &Need) ||
        Need > S->bytes())
      fail(ErrorKind::Parse, Name, ": storage '", Key, "' declares ", Numel,
           " elements of ", dtypeName(T), " but its zip entry '", EntryName,
           "' has only ", S->bytes(), " bytes; the file is corrupt");
    return S;
  };
  std::string_view Pickle(static_cast<const char *>(PklBytes->data()),
                          PklBytes->bytes());
  return pickle::unpickle(Pickle, Name + ": " + Pkl->Name, Load);
}

/// A run of storage bytes written as one .pt storage.
struct Cluster {
  const Storage *Store = nullptr;
  DType Type = DType::F32;
  uint64_t Lo = 0, Hi = 0;
  /// A compact copy when the single tensor viewing it was not dense.
  rt::Tensor Copy;
  std::string Key;
};

struct TensorUse {
  const rt::Tensor *T;
  uint64_t Lo, Hi; // bytes of the storage the view touches
  size_t ClusterIdx = 0;
};

void collect(const Object &O, std::vector<TensorUse> &Uses, int Depth) {
  NNG_CHECK(Depth < 1000, "writePt: the object nests deeper than 1000 levels");
  switch (O.kind()) {
  case Object::Kind::Tensor: {
    const rt::Tensor &T = O.toTensor();
    NNG_CHECK(T.defined(), "writePt: the object holds an undefined tensor");
    NNG_CHECK(T.device().isCPU(), "writePt: tensors must be on the CPU");
    NNG_CHECK(torchStorageName(T.dtype()), "writePt: tensor of dtype ",
              dtypeName(T.dtype()),
              " cannot be stored in a .pt file (supported: f32, f64, f16, "
              "bf16, i64, i32, i16, i8, u8, bool); convert it first");
    uint64_t Es = T.elementSize();
    uint64_t Lo = static_cast<uint64_t>(T.offset()) * Es, Last = T.offset();
    for (size_t I = 0; I < T.rank(); ++I)
      if (T.shape()[I] > 0)
        Last += (T.shape()[I] - 1) * T.strides()[I];
    uint64_t Hi = T.numel() ? (Last + 1) * Es : Lo;
    Uses.push_back({&T, Lo, Hi});
    return;
  }
  case Object::Kind::List:
  case Object::Kind::Tuple:
    for (const Object &E : O.elements())
      collect(E, Uses, Depth + 1);
    return;
  case Object::Kind::Dict:
    for (const auto &KV : O.entries())
      collect(KV.second, Uses, Depth + 1);
    return;
  default:
    return;
  }
}

} // namespace

Object readPt(const std::string &Path) {
  return readArchive(Storage::mapFile(Path), Path);
}

Object readPtFromBytes(std::string_view Bytes, const std::string &Name) {
  auto S = Storage::allocate(Bytes.size());
  if (!Bytes.empty())
    std::memcpy(S->data(), Bytes.data(), Bytes.size());
  return readArchive(S, Name);
}

void writePt(const std::string &Path, const Object &Root) {
  try {
    std::vector<TensorUse> Uses;
    collect(Root, Uses, 0);
    // Group by (storage, dtype), merge overlapping byte ranges.
    std::vector<size_t> Order(Uses.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = I;
    std::sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
      const TensorUse &X = Uses[A], &Y = Uses[B];
      const Storage *SX = X.T->storage().get(), *SY = Y.T->storage().get();
      if (SX != SY)
        return std::less<const Storage *>()(SX, SY);
      if (X.T->dtype() != Y.T->dtype())
        return X.T->dtype() < Y.T->dtype();
      return X.Lo < Y.Lo;
    });
    std::vector<Cluster> Clusters;
    std::vector<size_t> Members; // tensors in the current cluster
    auto Close = [&]() {
      if (Members.size() == 1) {
        const rt::Tensor &T = *Uses[Members[0]].T;
        Cluster &C = Clusters.back();
        if (C.Hi - C.Lo != T.nbytes() || T.numel() == 0)
          C.Copy = T.contiguous().clone();
      }
      Members.clear();
    };
    for (size_t I : Order) {
      TensorUse &U = Uses[I];
      const Storage *S = U.T->storage().get();
      bool Joins = !Clusters.empty() && !Members.empty() &&
                   Clusters.back().Store == S &&
                   Clusters.back().Type == U.T->dtype() &&
                   U.T->numel() > 0 && U.Lo < Clusters.back().Hi;
      if (!Joins) {
        if (!Members.empty())
          Close();
        Clusters.push_back({S, U.T->dtype(), U.Lo, U.Hi, {}, {}});
      } else {
        Clusters.back().Hi = std::max(Clusters.back().Hi, U.Hi);
      }
      Members.push_back(I);
      U.ClusterIdx = Clusters.size() - 1;
    }
    if (!Members.empty())
      Close();
    std::map<const rt::Tensor *, size_t> ClusterOf;
    for (const TensorUse &U : Uses)
      ClusterOf[U.T] = U.ClusterIdx;
    std::vector<size_t> KeyOrder;
    std::string Pkl = pickle::pickle(Root, [&](const rt::Tensor &T) {
      auto It = ClusterOf.find(&T);
      NNG_CHECK(It != ClusterOf.end(), "writePt: internal: unknown tensor");
      Cluster &C = Clusters[It->second];
      if (C.Key.empty()) {
        C.Key = std::to_string(KeyOrder.size());
        KeyOrder.push_back(It->second);
      }
      pickle::TensorRef R;
      uint64_t Es = dtypeSize(C.Type);
      R.Storage = {C.Key, C.Type,
                   static_cast<int64_t>(C.Copy.defined() ? C.Copy.numel()
                                                         : (C.Hi - C.Lo) / Es)};
      R.Sizes = T.shape().dims();
      if (C.Copy.defined()) {
        R.Offset = 0;
        R.Strides = contiguousStrides(T.shape());
      } else {
        R.Offset = T.offset() - static_cast<int64_t>(C.Lo / Es);
        R.Strides = T.strides();
      }
      return R;
    });
    std::ostringstream OS;
    zip::Writer W(OS);
    W.add("archive/data.pkl", Pkl.data(), Pkl.size());
    W.add("archive/byteorder", "little", 6);
    for (size_t Idx : KeyOrder) {
      const Cluster &C = Clusters[Idx];
      if (C.Copy.defined()) {
        W.add("archive/data/" + C.Key, C.Copy.rawData(), C.Copy.nbytes());
      } else {
        const char *Base = static_cast<const char *>(C.Store->data());
        W.add("archive/data/" + C.Key, Base + C.Lo, C.Hi - C.Lo);
      }
    }
    W.add("archive/version", "3\n", 2);
    W.finish();
    rt::writeFileAtomic(Path, OS.str());
  } catch (Error &E) {
    E.addContext("while writing " + Path);
    throw;
  }
}

} // namespace nng::weights
