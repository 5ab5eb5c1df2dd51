//===- OnnxExport.h - The graph IR out as ONNX ----------------------------===//
//
// exportOnnx() writes an ir::Graph as an ONNX ModelProto at opset 17 (or 13
// to 16 on request): ops of the "nng" domain are expanded into standard ONNX
// ops (nng.Gelu -> an Erf- or Tanh-based chain), ops whose semantics are
// newer than the target opset are downgraded where that is trivial and
// refused otherwise, initializers keep their names; leaf-module calls
// (nng.ModuleCall) go to the custom domain ai.nngraph.module with a warning
// (OnnxExportOptions::Warnings). Models whose weights would exceed
// protobuf's 2 GB limit are written with external data: the large
// initializers go to a side file next to the model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nng::frontend {

/// How exportOnnx() works.
struct OnnxExportOptions {
  /// Target opset of the default domain, 13 to 17.
  int Opset = 17;
  /// When the initializers together exceed this many bytes, every
  /// initializer of at least ExternalDataMinBytes goes to the side file.
  /// The default keeps the model under protobuf's 2 GB limit.
  uint64_t ExternalDataLimit = (uint64_t(1) << 31) - (uint64_t(64) << 20);
  /// The smallest initializer moved to the side file.
  uint64_t ExternalDataMinBytes = 1024;
  /// Always write external data (for initializers of at least
  /// ExternalDataMinBytes), whatever the total size.
  bool ForceExternalData = false;
  /// Name of the side file, relative to the model's folder; default
  /// "<model file name>.data".
  std::string ExternalDataFile;
  /// Run ONNX's checker and strict shape inference on the result and throw
  /// Error(Verify) with their message when it fails.
  bool Check = false;
  /// Receives export warnings (today: leaf-module calls, nng.ModuleCall,
  /// written to the custom domain ai.nngraph.module, which other runtimes
  /// cannot run without a custom op). When null, each warning goes to
  /// stderr as one line "nngraph: warning: ...".
  std::vector<std::string> *Warnings = nullptr;
};

/// Writes G to Path (atomically; the side file first when there is one).
/// Throws Error(Unsupported) naming the node for an op that cannot be
/// expressed at the target opset, Error(IO) when a file cannot be written.
void exportOnnx(const ir::Graph &G, const std::string &Path,
                const OnnxExportOptions &O = {});

/// Serializes G as a ModelProto held in memory (never external data; throws
/// Error(Unsupported) when it would exceed 2 GB).
std::string exportOnnxToBytes(const ir::Graph &G,
                              const OnnxExportOptions &O = {});

/// Runs ONNX's full checker and strict shape inference (types checked, data
/// propagation on) on the model at Path (external data allowed) and throws
/// Error(Verify) naming the model with ONNX's message when either fails.
void checkOnnxModel(const std::string &Path);

/// The same for a serialized model held in memory.
void checkOnnxModelBytes(std::string_view Bytes, std::string_view ModelName);

} // namespace nng::frontend
