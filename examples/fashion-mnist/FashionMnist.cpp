//===- FashionMnist.cpp - Reading and validating the IDX files ------------===//
//
// An IDX file is a big-endian header (two zero bytes, a type code, the
// number of dimensions, then one 32-bit extent per dimension) followed by
// the data. The files come gzip-compressed; zlib's gz* functions read them
// (and plain, uncompressed files too). Every check says which file is wrong
// and how, and what to do about it.
//
//===----------------------------------------------------------------------===//

#include "FashionMnist.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

namespace fmnist {

const char *const ClassNames[NumClasses] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

namespace {

/// The IDX type code of unsigned bytes.
constexpr uint8_t IdxUnsignedByte = 0x08;

/// What to tell the user when a file is missing or broken.
constexpr const char *Remedy =
    "install Debian's dataset-fashion-mnist (apt-get install "
    "dataset-fashion-mnist) or pass --data DIR with the four "
    "*-ubyte.gz files";

[[noreturn]] void fail(const std::string &Path, const std::string &What) {
  throw DatasetError(Path + ": " + What + "; " + Remedy);
}

struct GzCloser {
  void operator()(gzFile_s *F) const { gzclose(F); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

/// zlib's message for F without the "PATH: " prefix gzerror puts on it.
std::string zlibMessage(gzFile F, const std::string &Path, int &Code) {
  const char *Msg = gzerror(F, &Code);
  std::string M = Msg ? Msg : "";
  if (M.rfind(Path + ": ", 0) == 0)
    M.erase(0, Path.size() + 2);
  return M;
}

/// Reads exactly Size bytes into Out, or fails saying what went wrong
/// (Role names the part being read: "header", "image data").
void readExact(gzFile F, const std::string &Path, void *Out, size_t Size,
               const char *Role) {
  auto *P = static_cast<unsigned char *>(Out);
  size_t Done = 0;
  while (Done < Size) {
    unsigned Chunk =
        static_cast<unsigned>(std::min<size_t>(Size - Done, 1u << 30));
    int N = gzread(F, P + Done, Chunk);
    if (N < 0) {
      int Code = 0;
      std::string Msg = zlibMessage(F, Path, Code);
      fail(Path, std::string("corrupt gzip data while reading the ") + Role +
                     " (" + (Msg.empty() ? "unknown zlib error" : Msg) + ")");
    }
    if (N == 0) {
      int Code = 0;
      std::string Msg = zlibMessage(F, Path, Code);
      std::ostringstream OS;
      OS << "truncated: the " << Role << " needs " << Size << " bytes, the file"
         << " ends after " << Done;
      if (Code != Z_OK && !Msg.empty())
        OS << " (" << Msg << ")";
      fail(Path, OS.str());
    }
    Done += static_cast<size_t>(N);
  }
}

/// Opens Path for reading, failing with a clear message.
GzHandle openGz(const std::string &Path) {
  std::error_code Ec;
  if (!std::filesystem::exists(Path, Ec))
    fail(Path, "no such file");
  if (std::filesystem::is_directory(Path, Ec))
    fail(Path, "is a directory, not a data file");
  gzFile F = gzopen(Path.c_str(), "rb");
  if (!F)
    fail(Path, std::string("cannot open (") + std::strerror(errno) + ")");
  gzbuffer(F, 1 << 17);
  return GzHandle(F);
}

uint32_t bigEndian32(const unsigned char *P) {
  return (uint32_t(P[0]) << 24) | (uint32_t(P[1]) << 16) |
         (uint32_t(P[2]) << 8) | uint32_t(P[3]);
}

/// Reads an IDX header of unsigned bytes with Rank dimensions; returns the
/// extents.
std::vector<int64_t> readHeader(gzFile F, const std::string &Path,
                                unsigned Rank) {
  unsigned char Magic[4];
  readExact(F, Path, Magic, 4, "IDX header");
  if (Magic[0] != 0 || Magic[1] != 0) {
    std::ostringstream OS;
    OS << "not an IDX file (magic bytes " << std::hex << int(Magic[0]) << " "
       << int(Magic[1]) << ", expected 0 0)";
    fail(Path, OS.str());
  }
  if (Magic[2] != IdxUnsignedByte)
    fail(Path, "IDX element type " + std::to_string(Magic[2]) +
                   ", expected 8 (unsigned byte)");
  if (Magic[3] != Rank)
    fail(Path, "IDX file with " + std::to_string(Magic[3]) +
                   " dimensions, expected " + std::to_string(Rank));
  std::vector<int64_t> Dims(Rank);
  for (unsigned I = 0; I < Rank; ++I) {
    unsigned char B[4];
    readExact(F, Path, B, 4, "IDX header");
    uint32_t D = bigEndian32(B);
    // Fashion-MNIST has 60000 images; anything beyond 2^24 per axis is a
    // corrupt header, not a bigger data set.
    if (D == 0 || D > (1u << 24))
      fail(Path, "implausible extent " + std::to_string(D) + " of dimension " +
                     std::to_string(I) + " in the IDX header");
    Dims[I] = D;
  }
  return Dims;
}

/// Fails unless F has no data left.
void expectEnd(gzFile F, const std::string &Path) {
  unsigned char Extra;
  int N = gzread(F, &Extra, 1);
  if (N < 0)
    fail(Path, "corrupt gzip data after the last element");
  if (N > 0)
    fail(Path, "trailing bytes after the data the IDX header announces");
}

} // namespace

std::string imagesPath(const std::string &Dir, Split S) {
  return (std::filesystem::path(Dir) /
          (S == Split::Train ? "train-images-idx3-ubyte.gz"
                             : "t10k-images-idx3-ubyte.gz"))
      .string();
}

std::string labelsPath(const std::string &Dir, Split S) {
  return (std::filesystem::path(Dir) /
          (S == Split::Train ? "train-labels-idx1-ubyte.gz"
                             : "t10k-labels-idx1-ubyte.gz"))
      .string();
}

Dataset loadSplit(const std::string &Dir, Split S, int64_t Limit) {
  const std::string ImgPath = imagesPath(Dir, S);
  const std::string LblPath = labelsPath(Dir, S);
  Dataset D;

  GzHandle Img = openGz(ImgPath);
  std::vector<int64_t> ImgDims = readHeader(Img.get(), ImgPath, 3);
  D.Count = ImgDims[0];
  D.Rows = ImgDims[1];
  D.Cols = ImgDims[2];
  if (D.Rows != 28 || D.Cols != 28)
    fail(ImgPath, "images of " + std::to_string(D.Rows) + "x" +
                      std::to_string(D.Cols) + " pixels, expected 28x28");
  D.Images.resize(static_cast<size_t>(D.Count * D.imageSize()));
  readExact(Img.get(), ImgPath, D.Images.data(), D.Images.size(),
            "image data");
  expectEnd(Img.get(), ImgPath);

  GzHandle Lbl = openGz(LblPath);
  std::vector<int64_t> LblDims = readHeader(Lbl.get(), LblPath, 1);
  if (LblDims[0] != D.Count)
    fail(LblPath, std::to_string(LblDims[0]) + " labels for the " +
                      std::to_string(D.Count) + " images of " + ImgPath);
  D.Labels.resize(static_cast<size_t>(D.Count));
  readExact(Lbl.get(), LblPath, D.Labels.data(), D.Labels.size(),
            "label data");
  expectEnd(Lbl.get(), LblPath);
  for (size_t I = 0; I < D.Labels.size(); ++I)
    if (D.Labels[I] >= NumClasses)
      fail(LblPath, "label " + std::to_string(D.Labels[I]) + " of example " +
                        std::to_string(I) + " is not a class index 0..9");

  if (Limit > 0 && Limit < D.Count) {
    D.Count = Limit;
    D.Images.resize(static_cast<size_t>(Limit * D.imageSize()));
    D.Labels.resize(static_cast<size_t>(Limit));
  }
  return D;
}

void gatherBatch(const Dataset &D, const std::vector<int64_t> &Indices,
                 int64_t Begin, int64_t End, float *Out, int64_t *Labels) {
  const int64_t Size = D.imageSize();
  // (x / 255 - mean) / std as one multiply-add per pixel.
  const float Scale = 1.0f / (255.0f * PixelStd);
  const float Shift = -PixelMean / PixelStd;
  for (int64_t B = Begin; B < End; ++B) {
    const int64_t Index = Indices[static_cast<size_t>(B)];
    const uint8_t *Src = D.Images.data() + Index * Size;
    float *Dst = Out + (B - Begin) * Size;
    for (int64_t P = 0; P < Size; ++P)
      Dst[P] = float(Src[P]) * Scale + Shift;
    Labels[B - Begin] = D.Labels[static_cast<size_t>(Index)];
  }
}

} // namespace fmnist
