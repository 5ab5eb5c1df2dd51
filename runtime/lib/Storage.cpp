//===- Storage.cpp - Reference-counted memory blocks ---------------------===//

#include "nngraph/runtime/Storage.h"
#include "nngraph/runtime/Allocator.h"
#include "nngraph/runtime/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nng {

Storage::~Storage() {
  if (Free)
    Free(Data);
}

std::shared_ptr<Storage> Storage::allocate(size_t Bytes, Device D,
                                           Allocator *A) {
  if (D.isMeta()) {
    // Shape without memory: the size is recorded, nothing is allocated.
    std::shared_ptr<Storage> S(new Storage());
    S->Bytes = Bytes;
    S->Dev = D;
    return S;
  }
  if (!D.isCPU())
    fail(ErrorKind::Unsupported, "Storage::allocate: no allocator for device ",
         D.toString(), " in this build");
  Allocator *Alloc = A ? A : &cpuAllocator();
  std::shared_ptr<Storage> S(new Storage());
  S->Data = Alloc->allocate(Bytes);
  std::memset(S->Data, 0, Bytes);
  S->Bytes = Bytes;
  S->Dev = D;
  S->Free = [Alloc, Bytes](void *P) { Alloc->deallocate(P, Bytes); };
  return S;
}

std::shared_ptr<Storage> Storage::wrap(void *Data, size_t Bytes, Deleter Free,
                                       Device D) {
  std::shared_ptr<Storage> S(new Storage());
  S->Data = Data;
  S->Bytes = Bytes;
  S->Dev = D;
  S->Free = std::move(Free);
  return S;
}

std::shared_ptr<Storage> Storage::wrap(void *Data, size_t Bytes,
                                       std::shared_ptr<const void> Owner,
                                       Device D) {
  std::shared_ptr<Storage> S(new Storage());
  S->Data = Data;
  S->Bytes = Bytes;
  S->Dev = D;
  S->Owner = std::move(Owner);
  return S;
}

std::shared_ptr<Storage> Storage::mapFile(const std::string &Path,
                                          size_t Offset, size_t Length) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    fail(ErrorKind::IO, "cannot open '", Path, "': ", std::strerror(errno));
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    int E = errno;
    ::close(Fd);
    fail(ErrorKind::IO, "cannot stat '", Path, "': ", std::strerror(E));
  }
  size_t FileSize = static_cast<size_t>(St.st_size);
  if (Offset > FileSize || (Length && Length > FileSize - Offset)) {
    ::close(Fd);
    fail(ErrorKind::IO, "'", Path, "' is ", FileSize,
         " bytes; cannot map ", Length, " bytes at offset ", Offset);
  }
  if (!Length)
    Length = FileSize - Offset;
  size_t Page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t Aligned = Offset / Page * Page;
  size_t MapLen = Length + (Offset - Aligned);
  void *Base = nullptr;
  if (MapLen > 0) {
    // Copy-on-write: the file itself is never written.
    Base = ::mmap(nullptr, MapLen, PROT_READ | PROT_WRITE, MAP_PRIVATE, Fd,
                  static_cast<off_t>(Aligned));
    if (Base == MAP_FAILED) {
      int E = errno;
      ::close(Fd);
      fail(ErrorKind::IO, "cannot map '", Path, "': ", std::strerror(E));
    }
  }
  ::close(Fd);
  std::shared_ptr<Storage> S(new Storage());
  S->Data = Base ? static_cast<char *>(Base) + (Offset - Aligned) : nullptr;
  S->Bytes = Length;
  S->Free = [Base, MapLen](void *) {
    if (Base)
      ::munmap(Base, MapLen);
  };
  return S;
}

} // namespace nng
