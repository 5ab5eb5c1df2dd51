//===- ModelIO.cpp - Loading and saving models by file extension ----------===//
//
// Format selection by extension (ONNX goes to onnx/OnnxImport.cpp and
// OnnxExport.cpp), atomic file writing (mkstemp in the target
// directory, write, fsync, rename) and whole-file reading with errors that
// name the path and the system's reason.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace nng::frontend {
namespace {

[[noreturn]] void ioError(std::string_view What, std::string_view Path,
                          int Errno) {
  fail(ErrorKind::IO, What, " '", Path, "': ", std::strerror(Errno));
}

bool endsWith(std::string_view S, std::string_view Suffix) {
  return S.size() >= Suffix.size() &&
         S.substr(S.size() - Suffix.size()) == Suffix;
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

ModelFormat formatForPath(std::string_view Path) {
  if (endsWith(Path, ".nng"))
    return ModelFormat::Text;
  if (endsWith(Path, ".onnx"))
    return ModelFormat::Onnx;
  fail(ErrorKind::InvalidArgument, "cannot tell the model format of '", Path,
       "' from its extension: use .nng (text) or .onnx");
}

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

std::unique_ptr<ir::Graph> loadModel(const std::string &Path) {
  if (formatForPath(Path) == ModelFormat::Onnx)
    return importOnnx(Path);
  return loadModelFromText(readFile(Path), Path);
}

std::unique_ptr<ir::Graph> loadModelFromText(std::string_view Text,
                                             std::string_view BufferName) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, BufferName);
  ir::verifyOrThrow(*G);
  return G;
}

void saveModel(const ir::Graph &G, const std::string &Path,
               const SaveOptions &O) {
  ModelFormat F = O.Format ? *O.Format : formatForPath(Path);
  if (F == ModelFormat::Onnx) {
    exportOnnx(G, Path); // Atomic too, side file (if any) first.
    return;
  }
  ir::PrintOptions PO;
  PO.InlineLimit = O.InlineLimit;
  // Print fully before touching the file system: a printing error must not
  // leave anything behind.
  writeFileAtomic(Path, ir::printGraph(G, PO));
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

} // namespace nng::frontend
