//===- FileIO.cpp - Whole-file reads and atomic writes --------------------===//
//
// readFile reads a file whole; writeFileAtomic writes through a temporary
// file in the target's directory (mkstemp, write, fsync, rename), keeping
// the replaced file's mode, so a failed write leaves the target untouched.
// Errors are Error(IO) naming the path and the system's reason.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/FileIO.h"
#include "nngraph/runtime/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace nng::rt {
namespace {

[[noreturn]] void ioError(std::string_view What, std::string_view Path,
                          int Errno) {
  fail(ErrorKind::IO, What, " '", Path, "': ", std::strerror(Errno));
}

/// Removes the temporary file unless released (when the rename happened).
class TempFileGuard {
public:
  explicit TempFileGuard(std::string Path) : Path(std::move(Path)) {}
  ~TempFileGuard() {
    if (!Path.empty())
      ::unlink(Path.c_str());
  }
  void release() { Path.clear(); }

private:
  std::string Path;
};

} // namespace

std::string readFile(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode))
    fail(ErrorKind::IO, "cannot read '", Path, "': it is a directory");
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    ioError("cannot open", Path, errno);
  std::ostringstream SS;
  SS << In.rdbuf();
  if (In.bad())
    ioError("cannot read", Path, errno);
  return SS.str();
}

void writeFileAtomic(const std::string &Path, std::string_view Contents) {
  NNG_CHECK(!Path.empty(), "writeFileAtomic: empty path");
  std::string Dir = ".";
  if (size_t Slash = Path.rfind('/'); Slash != std::string::npos)
    Dir = Slash == 0 ? "/" : Path.substr(0, Slash);
  struct stat St;
  bool Exists = ::stat(Path.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode))
    fail(ErrorKind::IO, "cannot write '", Path, "': it is a directory");

  std::string Temp = Path + ".tmp.XXXXXX";
  int Fd = ::mkstemp(Temp.data());
  if (Fd < 0)
    ioError("cannot create a temporary file in directory", Dir, errno);
  TempFileGuard Guard(Temp);

  // mkstemp creates the file 0600: keep the mode of the file being replaced,
  // or give a new file the usual 0666 & ~umask.
  mode_t Mode;
  if (Exists) {
    Mode = St.st_mode & 07777;
  } else {
    mode_t Mask = ::umask(0);
    ::umask(Mask);
    Mode = 0666 & ~Mask;
  }
  ::fchmod(Fd, Mode);

  const char *P = Contents.data();
  size_t Left = Contents.size();
  while (Left > 0) {
    ssize_t N = ::write(Fd, P, Left);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      int E = errno;
      ::close(Fd);
      ioError("cannot write", Temp, E);
    }
    P += N;
    Left -= static_cast<size_t>(N);
  }
  if (::fsync(Fd) != 0) {
    int E = errno;
    ::close(Fd);
    ioError("cannot flush", Temp, E);
  }
  if (::close(Fd) != 0)
    ioError("cannot close", Temp, errno);
  if (::rename(Temp.c_str(), Path.c_str()) != 0)
    ioError(("cannot rename '" + Temp + "' to").c_str(), Path, errno);
  Guard.release();
}

} // namespace nng::rt
