//===- FashionMnist.h - Fashion-MNIST from its IDX files --------*- C++ -*-===//
//
// Reads the four gzip-compressed IDX files of Fashion-MNIST (Debian's
// dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist):
// {train,t10k}-images-idx3-ubyte.gz (N x 28 x 28 unsigned bytes) and
// {train,t10k}-labels-idx1-ubyte.gz (N class indices 0..9). The headers,
// sizes and label range are validated; any problem (a missing, truncated or
// corrupt file) is a DatasetError naming the file and saying what to do.
// Independent of the nngraph frontend: it hands out bytes, and batches as
// normalized float planes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fmnist {

/// Where Debian's dataset-fashion-mnist installs the files.
inline constexpr const char *DefaultDataDir = "/usr/share/datasets/fashion-mnist";

/// The number of classes.
inline constexpr int64_t NumClasses = 10;

/// Class names, by label.
extern const char *const ClassNames[NumClasses];

/// A missing, unreadable or malformed data file.
class DatasetError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One split of the data set: Count images of Rows x Cols bytes, row-major
/// one after the other, and their labels.
struct Dataset {
  int64_t Count = 0;
  int64_t Rows = 0;
  int64_t Cols = 0;
  std::vector<uint8_t> Images;
  std::vector<uint8_t> Labels;

  int64_t imageSize() const { return Rows * Cols; }
};

/// Which split to read.
enum class Split { Train, Test };

/// The path of a split's image or label file in Dir.
std::string imagesPath(const std::string &Dir, Split S);
std::string labelsPath(const std::string &Dir, Split S);

/// Reads a split from Dir; throws DatasetError naming the file on any
/// problem. Limit > 0 keeps only the first Limit examples.
Dataset loadSplit(const std::string &Dir, Split S, int64_t Limit = 0);

/// Input normalization of Fashion-MNIST (the training set's pixel mean and
/// standard deviation, pixels scaled to [0, 1]).
inline constexpr float PixelMean = 0.2860f;
inline constexpr float PixelStd = 0.3530f;

/// Writes the normalized images Indices[Begin, End) of D into Out
/// ((End - Begin) * imageSize() floats, (x / 255 - mean) / std) and their
/// labels into Labels (End - Begin values).
void gatherBatch(const Dataset &D, const std::vector<int64_t> &Indices,
                 int64_t Begin, int64_t End, float *Out, int64_t *Labels);

} // namespace fmnist
