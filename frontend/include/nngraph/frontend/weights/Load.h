//===- Load.h - Weight files into modules and graphs ------------*- C++ -*-===//
//
// The bridge between the weight-file formats (Formats.h: data tensors under
// dotted keys) and the places weights live: an nn::Module's parameters and
// buffers (nn::StateDict) and an ir::Graph's initializers. Conversions
// share tensor data (no copies); loading copies into the module's own
// tensors (load_state_dict) or installs the data as the graph's
// initializers. Key remapping (Remap.h) runs between reading and loading.
//
//   nng::weights::LoadOptions O;
//   O.Remap.StripPrefix = "module.";           // saved from DataParallel
//   auto R = nng::weights::loadWeights(*Net, "resnet18.pt", O);
//   nng::weights::saveWeights(*Net, "resnet18.safetensors");
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/StateDict.h"
#include "nngraph/frontend/weights/Remap.h"
#include "nngraph/frontend/weights/TensorMap.h"

#include <string>
#include <vector>

namespace nng::ir {
class Graph;
} // namespace nng::ir

namespace nng::weights {

/// The map as an nn::StateDict; the eager tensors share M's data.
nn::StateDict toStateDict(const TensorMap &M);
/// SD's data tensors under the same keys (shared, not copied).
TensorMap fromStateDict(const nn::StateDict &SD);

/// How loadWeights reads and applies a file.
struct LoadOptions {
  /// Picks a sub-dict of a .pt checkpoint, e.g. "model_state_dict" or
  /// "ema/model" (see selectTensors); empty for the root / flat formats.
  std::string KeyPath;
  /// Missing and unexpected keys are errors (shape mismatches always are).
  bool Strict = true;
  /// Applied to the file's keys before they are matched.
  RemapOptions Remap;
};

/// What a load did.
struct LoadResult {
  /// Keys the target expects that the (remapped) file lacks.
  std::vector<std::string> MissingKeys;
  /// Keys of the (remapped) file the target does not have.
  std::vector<std::string> UnexpectedKeys;
  /// Non-tensor entries of a .pt checkpoint that were skipped ("epoch").
  std::vector<std::string> Skipped;
  /// Per-step counts of the key remapping.
  RemapReport Remap;
};

/// Reads Path (format by extension), remaps the keys and loads them into M
/// with M.load_state_dict(.., Opts.Strict). On error M is unchanged and the
/// message names the file.
LoadResult loadWeights(nn::ModuleBase &M, const std::string &Path,
                       const LoadOptions &Opts = {});
/// loadWeights on tensors already in memory (Opts.KeyPath must be empty).
LoadResult loadWeights(nn::ModuleBase &M, const TensorMap &Tensors,
                       const LoadOptions &Opts = {});

/// Writes M.state_dict() to Path in the format of its extension
/// (atomically: an existing file is replaced only on success). Tensors on
/// a device are copied to the CPU for writing.
void saveWeights(const nn::ModuleBase &M, const std::string &Path);

/// Installs Tensors as the data of G's initializers, matched by name.
/// Every matched tensor must have the initializer's dtype and shape (a
/// symbolic or unknown dim accepts any extent); with Strict, every
/// initializer must be present and every key must name one. Everything is
/// checked before anything changes: on error G is unchanged and the
/// message lists every offending key (with both types for mismatches).
/// Returns the missing initializers and the unexpected keys.
LoadResult loadInitializers(ir::Graph &G, const TensorMap &Tensors,
                            bool Strict = true);

} // namespace nng::weights
