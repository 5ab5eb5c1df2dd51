//===- Checkpoint.h - A small self-describing checkpoint file ----*- C++ -*-===//
//
// The checkpoint file of fashion-mnist-train until the .pt format lands: an
// ordered list of text metadata (key = value) and an ordered list of named
// tensors (dtype, shape, raw little-endian bytes, CRC-32). The format is
// described in README.md next to this file. Writing is atomic (a temporary
// file in the same folder, flushed and fsync'ed, then renamed over the
// target), so a crash never leaves a half-written checkpoint. Reading
// validates everything and throws CheckpointError saying what is wrong
// where. Independent of the nngraph frontend: it stores rt::Tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fmnist {

/// A checkpoint file that cannot be written, read or understood.
class CheckpointError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The contents of a checkpoint.
class Checkpoint {
public:
  /// Adds metadata; Key must be non-empty without whitespace, Value a single
  /// line. A repeated key is an error.
  void setMeta(const std::string &Key, const std::string &Value);
  /// Adds a tensor (a contiguous copy is stored); Name as a meta key.
  void addTensor(const std::string &Name, const nng::rt::Tensor &T);

  /// The value under Key, or null.
  const std::string *findMeta(std::string_view Key) const;
  /// The value under Key; throws CheckpointError naming the key and File
  /// when absent.
  const std::string &meta(std::string_view Key) const;
  /// The tensor named Name, or null.
  const nng::rt::Tensor *findTensor(std::string_view Name) const;

  const std::vector<std::pair<std::string, std::string>> &metaEntries() const {
    return Meta;
  }
  const std::vector<std::pair<std::string, nng::rt::Tensor>> &tensors() const {
    return Tensors;
  }

  /// The file this was read from ("" for one built in memory), for errors.
  std::string File;

private:
  std::vector<std::pair<std::string, std::string>> Meta;
  std::vector<std::pair<std::string, nng::rt::Tensor>> Tensors;
};

/// Writes C to Path atomically; throws CheckpointError on failure (the
/// previous file at Path, if any, is then untouched).
void saveCheckpoint(const std::string &Path, const Checkpoint &C);

/// Reads and validates the checkpoint at Path; throws CheckpointError.
Checkpoint loadCheckpoint(const std::string &Path);

} // namespace fmnist
