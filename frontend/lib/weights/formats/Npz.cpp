//===- Npz.cpp - Reading and writing .npz archives --------------*- C++ -*-===//
//
// A .npz file is a zip archive with one "<key>.npy" entry per array, stored
// (numpy.savez, MLX's save_weights) or deflated (numpy.savez_compressed).
// Reading maps the file, lets zip::Reader check the archive (unsafe names,
// sizes, CRCs, zip bombs) and parses each entry with the .npy reader;
// arrays of stored entries are views of the copy-on-write mapping when their
// data is aligned (as in the files we write), copies otherwise. Keys keep
// the archive's entry order; an entry whose name does not end in ".npy" is
// an error naming it. Writing produces stored entries (64-byte-aligned data)
// in the map's key order, atomically.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "Zip.h"

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace nng::weights {

namespace {

TensorMap readFromStorage(const std::shared_ptr<Storage> &Buf,
                          const std::string &Name) {
  zip::Reader R(Buf, "'" + Name + "'");
  std::vector<TensorMap::Entry> Entries;
  for (const zip::Entry &E : R.entries()) {
    const std::string Suffix = ".npy";
    if (E.Name.size() <= Suffix.size() ||
        E.Name.compare(E.Name.size() - Suffix.size(), Suffix.size(), Suffix) !=
            0)
      fail(ErrorKind::Parse, "'", Name, "': .npz entry '", E.Name,
           "' is not a .npy array (every entry of an .npz archive must be "
           "named <key>.npy)");
    std::string Key = E.Name.substr(0, E.Name.size() - Suffix.size());
    std::string What =
        "'" + Name + "': array '" + Key + "' (entry '" + E.Name + "')";
    // read() checks the CRC; a stored entry is then parsed in place in the
    // archive's own storage, so its array is a view of the mapping.
    std::shared_ptr<Storage> Data = R.read(E);
    rt::Tensor T = E.Method == 0 ? npy::read(Buf, E.DataOffset, E.Size, What)
                                 : npy::read(Data, 0, Data->bytes(), What);
    Entries.emplace_back(Key, std::move(T));
  }
  return TensorMap(std::move(Entries));
}

} // namespace

TensorMap readNpz(const std::string &Path) {
  return readFromStorage(Storage::mapFile(Path), Path);
}

TensorMap readNpzFromBytes(std::string_view Bytes, const std::string &Name) {
  auto Buf = Storage::allocate(Bytes.size());
  if (!Bytes.empty())
    std::memcpy(Buf->data(), Bytes.data(), Bytes.size());
  return readFromStorage(Buf, Name);
}

bool isNpzKey(const std::string &Key) {
  if (Key.empty() || Key[0] == '/' ||
      Key.find_first_of(std::string("\\\0", 2)) != std::string::npos)
    return false;
  size_t Start = 0;
  while (Start <= Key.size()) {
    size_t End = std::min(Key.find('/', Start), Key.size());
    if (Key.compare(Start, End - Start, "..") == 0)
      return false;
    Start = End + 1;
  }
  return true;
}

void writeNpz(const std::string &Path, const TensorMap &Tensors) {
  std::ostringstream OS;
  zip::Writer W(OS);
  for (const auto &[Key, T] : Tensors) {
    NNG_CHECK(isNpzKey(Key), "writing '", Path, "': key '", Key,
              "' cannot name an .npz entry (it is empty, starts with '/', "
              "or holds a '..' component, a backslash or a NUL, which zip "
              "readers refuse); rename it");
    std::string Bytes =
        npy::write(T, "writing '" + Path + "': array '" + Key + "'");
    W.add(Key + ".npy", Bytes.data(), Bytes.size());
  }
  W.finish();
  rt::writeFileAtomic(Path, OS.str());
}

} // namespace nng::weights
