//===- ModelIO.h - Loading and saving models by file extension --*- C++ -*-===//
//
// loadModel() and saveModel() pick the format from the file extension
// (".nng": the text format; ".onnx": ONNX, through importOnnx() and
// exportOnnx() at their default options). Saving is atomic:
// the model is written to a temporary file in the target's directory and
// renamed over the target, so a failure never leaves a half-written file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/FileIO.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nng::frontend {

/// The file formats models can be stored in.
enum class ModelFormat { Text, Onnx };

/// The format for Path's extension (".nng", ".onnx"); throws
/// Error(InvalidArgument) naming the path and the known extensions.
ModelFormat formatForPath(std::string_view Path);

/// How saveModel() writes.
struct SaveOptions {
  /// The format; by default chosen from the extension.
  std::optional<ModelFormat> Format;
  /// Text format: initializers with more elements print as an elided
  /// reference with a content hash; negative: everything inline.
  int64_t InlineLimit = 64 * 1024;
};

/// Reads and verifies a model; throws Error(IO) when the file cannot be
/// read, Error(Parse) / Error(Verify) when it is not a valid model, and
/// Error(Unsupported) listing the operators of an ONNX model that nngraph
/// lacks.
std::unique_ptr<ir::Graph> loadModel(const std::string &Path);

/// Parses a text-format model held in memory; BufferName appears in
/// messages ("<stdin>").
std::unique_ptr<ir::Graph> loadModelFromText(std::string_view Text,
                                             std::string_view BufferName);

/// Writes G to Path atomically; throws Error(IO) when it cannot be written
/// (Path is then untouched), and Error(Unsupported) naming the node when G
/// cannot be expressed in ONNX.
void saveModel(const ir::Graph &G, const std::string &Path,
               const SaveOptions &O = {});

/// The whole-file helpers, from the runtime (FileIO.h).
using rt::readFile;
using rt::writeFileAtomic;

} // namespace nng::frontend
